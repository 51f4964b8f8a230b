/**
 * Every request the simulator answered, for tests: "changed nothing" is `writes({ since, user })`
 * being empty. Bounded, oldest first out.
 */

/** One answered request. */
export interface RequestRecord {
  /** Position in the log, from 1; pass to `since` to see what came after. */
  seq: number;
  /** Real wall-clock time of arrival (ms since the epoch). */
  at: number;
  method: string;
  path: string;
  /** The query string as sent (`?fieldSelector=…&limit=500`), '' when none: what a list selected. */
  query: string;
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  user: string;
  /** The client's User-Agent (kubectl sends `kubectl/v1.32.4 (linux/amd64) …`). */
  userAgent: string;
  status: number;
  /** create/update/patch/delete/deletecollection that was not a dry run (a write that could change state). */
  write: boolean;
  dryRun: boolean;
}

export interface RequestQuery {
  /** Only records with `seq` greater than this (use `log.mark()` before the act). */
  since?: number;
  user?: string;
  verb?: string;
  resource?: string;
  /** Only records answered with a 2xx status. */
  succeeded?: boolean;
}

const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Whether a verb can change state. */
export function isWriteVerb(verb: string): boolean {
  return WRITE_VERBS.has(verb);
}

/**
 * Resources whose `create` only asks a question (the access reviews, `kubectl auth whoami`): answered,
 * never stored, so they change nothing — as the apiserver, which persists none of them.
 */
const QUESTIONS: ReadonlySet<string> = new Set([
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authentication.k8s.io/selfsubjectreviews',
  'authentication.k8s.io/tokenreviews',
]);

/** Whether a request could change state: a write verb on a resource that is stored. */
export function isStateChange(info: { verb: string; group: string; resource: string }): boolean {
  return isWriteVerb(info.verb) && !QUESTIONS.has(`${info.group}/${info.resource}`);
}

/** The log. */
export class RequestLog {
  readonly #records: RequestRecord[] = [];
  readonly #limit: number;
  #seq = 0;

  constructor(limit = 100_000) {
    this.#limit = limit;
  }

  /** Appends a record; returns its `seq`. */
  add(record: Omit<RequestRecord, 'seq'>): number {
    this.#seq += 1;
    this.#records.push({ ...record, seq: this.#seq });
    if (this.#records.length > this.#limit) this.#records.shift();
    return this.#seq;
  }

  /** The seq of the newest record (0 when empty): a bookmark for `since`. */
  mark(): number {
    return this.#seq;
  }

  /** Records matching `query`, oldest first. */
  all(query: RequestQuery = {}): RequestRecord[] {
    return this.#records.filter(
      (r) =>
        r.seq > (query.since ?? 0) &&
        (query.user === undefined || r.user === query.user) &&
        (query.verb === undefined || r.verb === query.verb) &&
        (query.resource === undefined || r.resource === query.resource) &&
        (query.succeeded === undefined || (r.status >= 200 && r.status < 300) === query.succeeded),
    );
  }

  /** Writes (not dry runs) matching `query`; by default only those that succeeded, i.e. changed something. */
  writes(query: RequestQuery = {}): RequestRecord[] {
    return this.all({ succeeded: true, ...query }).filter((r) => r.write);
  }

  /** Reads (get/list/watch and non-resource requests) matching `query`. */
  reads(query: RequestQuery = {}): RequestRecord[] {
    return this.all(query).filter((r) => !isWriteVerb(r.verb));
  }
}
