/**
 * A source's read outcomes, told apart (issue 21): "no events" is a documented empty answer (Azure
 * `Events: []`, EC2 `[]` or 404, GCE `NONE` / `{}` / 404) and ends what is no longer listed — "gone";
 * "unreadable" is everything else (no answer, 5xx after retries, a malformed document or event, an EC2
 * 200 with an empty body, a GCE status its docs do not list) and ends nothing, because a document that
 * could not be read says nothing about what disappeared. So that no maintenance stays open for ever on
 * a source that never becomes readable again, a request whose source has been unreadable past its
 * notice's end (NotAfter, GCE `window_end_time`), or — without one — longer than the configured limit,
 * is ended. Pure: the agent logs, counts and publishes.
 */
import type { Notice } from './notice.ts';
import type { NoticeRule } from './policy.ts';

/** A request the agent holds open for a source: the notice it came from when this run saw it. */
export interface OpenRequest {
  readonly requestId: string;
  readonly notice?: Notice;
  readonly rule?: NoticeRule;
}

export interface OverdueRequest {
  readonly requestId: string;
  readonly why: string;
  /** The source's first unreadable read (ISO 8601): the request's Maintenance Ended carries it. */
  readonly unreadableSince: string;
  readonly last?: { readonly notice: Notice; readonly rule: NoticeRule };
}

/** When the source became unreadable, kept until a whole document is read again. */
export class Unreadability {
  #since: Date | undefined;

  get since(): Date | undefined {
    return this.#since;
  }

  /** Records an unreadable read; true when it is the first of a run of them. */
  begin(now: Date): boolean {
    if (this.#since) return false;
    this.#since = now;
    return true;
  }

  /** Records a readable read; returns since when the source had been unreadable, if it had. */
  end(): Date | undefined {
    const since = this.#since;
    this.#since = undefined;
    return since;
  }
}

function lastOf(open: OpenRequest): OverdueRequest['last'] | undefined {
  return open.notice && open.rule ? { notice: open.notice, rule: open.rule } : undefined;
}

/**
 * The open requests to end because their source has been unreadable since `since`: past the notice's
 * end when it gives one, else past `limitSeconds` of unreadability. A limit of 0 ends none (the
 * operator keeps such nodes out of service until a person looks).
 */
export function overdueRequests(
  open: readonly OpenRequest[],
  since: Date,
  now: Date,
  limitSeconds: number,
): OverdueRequest[] {
  if (limitSeconds <= 0) return [];
  const overdue: OverdueRequest[] = [];
  for (const request of open) {
    const notAfter = request.notice?.notAfter;
    const endsAt = notAfter ? Date.parse(notAfter) : since.getTime() + limitSeconds * 1000;
    if (now.getTime() <= endsAt) continue;
    const unreadable = `the notice source has been unreadable since ${since.toISOString()}`;
    const why = notAfter
      ? `${unreadable}, and the notice's end (${notAfter}) has passed`
      : `${unreadable}, longer than ${limitSeconds} s, and the notice gives no end`;
    const last = lastOf(request);
    overdue.push({
      requestId: request.requestId,
      why,
      unreadableSince: since.toISOString(),
      ...(last ? { last } : {}),
    });
  }
  return overdue;
}
