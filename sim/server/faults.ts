/**
 * Fault injection at the HTTP front, for testing clients against what a real apiserver (or the network
 * in front of it) does to them: watch connections dropped, a watch resumed from a compacted
 * resourceVersion (`410 Expired` as an ERROR event, the apiserver's answer), and requests answered
 * with an error status for a while. Reads and watches included — the admission hooks only see writes.
 *
 * `sim.faults` is one of these; the request pipeline calls `intercept` after authorization, before the
 * handler. Every fault is scoped by a matcher (user, verb, resource) so that, e.g., the forwarder's
 * ServiceAccount gets 500s while kubectl keeps working.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StatusError } from '../store/status.ts';
import type { RequestInfo } from './request-info.ts';

/** What a fault looks at in a request (a structural slice of RequestContext, which refers to this module). */
export interface FaultRequest {
  readonly user: { readonly username: string };
  readonly info: RequestInfo;
  readonly url: URL;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

/** Which requests a fault applies to; every given field must match. */
export interface RequestMatcher {
  /** The authenticated user name, e.g. `system:serviceaccount:drainbridge:drainbridge-forwarder`. */
  readonly user?: string;
  readonly verbs?: readonly string[];
  /** Plural resource names (any group). */
  readonly resources?: readonly string[];
}

interface FailureFault {
  readonly match: RequestMatcher;
  readonly status: StatusError;
  /** Matching requests it still answers (Infinity: until removed). */
  remaining: number;
}

interface HeldRequest {
  readonly info: RequestInfo;
  readonly user: string;
  readonly release: () => void;
}

interface OpenWatch {
  readonly info: RequestInfo;
  readonly user: string;
  readonly res: ServerResponse;
}

function matches(matcher: RequestMatcher, info: RequestInfo, user: string): boolean {
  if (matcher.user !== undefined && matcher.user !== user) return false;
  if (matcher.verbs && !matcher.verbs.includes(info.verb)) return false;
  return !matcher.resources || matcher.resources.includes(info.resource);
}

/** The apiserver's ERROR event for a watch from a compacted resourceVersion. */
function expiredEvent(resourceVersion: string): string {
  const status = new StatusError(410, 'Expired', `too old resource version: ${resourceVersion}`);
  return `${JSON.stringify({ type: 'ERROR', object: status.toStatus() })}\n`;
}

export class FaultInjector {
  readonly #failures = new Set<FailureFault>();
  readonly #expiries: { match: RequestMatcher; remaining: number }[] = [];
  readonly #watches = new Set<OpenWatch>();
  readonly #holds = new Set<RequestMatcher>();
  readonly #held = new Set<HeldRequest>();
  /** Requests answered by a fault, for tests to wait on. */
  injected = 0;

  /**
   * Answers matching requests with `code` (500 by default, the apiserver's InternalError wording) until
   * the returned function is called, or only the next `times` of them. Faults added earlier answer first.
   */
  failRequests(
    match: RequestMatcher,
    code = 500,
    message = 'the simulator was told to fail this request',
    times = Number.POSITIVE_INFINITY,
  ): () => void {
    const reason = code === 503 ? 'ServiceUnavailable' : code === 429 ? 'TooManyRequests' : 'InternalError';
    const fault: FailureFault = { match, status: new StatusError(code, reason, message), remaining: times };
    this.#failures.add(fault);
    return () => void this.#failures.delete(fault);
  }

  /**
   * Holds matching requests — no answer, not even headers — until the returned function is called: an
   * apiserver that is slow to answer, so that a test can act while a client's list or watch is in flight.
   * A held request whose client goes away is dropped (`heldRequests` counts only those still waiting).
   */
  holdRequests(match: RequestMatcher): () => void {
    this.#holds.add(match);
    return () => {
      this.#holds.delete(match);
      for (const held of [...this.#held])
        if (![...this.#holds].some((m) => matches(m, held.info, held.user))) held.release();
    };
  }

  /** Matching requests held right now whose client still waits for the answer. */
  heldRequests(match: RequestMatcher = {}): number {
    return [...this.#held].filter((held) => matches(match, held.info, held.user)).length;
  }

  /**
   * Called for every resource request after authentication, before anything else: resolves at once unless
   * a hold matches; then when the hold is lifted (true) or the client has gone away (false).
   */
  hold(ctx: FaultRequest): Promise<boolean> {
    const user = ctx.user.username;
    if (![...this.#holds].some((match) => matches(match, ctx.info, user))) return Promise.resolve(true);
    return new Promise((resolve) => {
      const held: HeldRequest = {
        info: ctx.info,
        user,
        release: () => {
          this.#held.delete(held);
          resolve(true);
        },
      };
      this.#held.add(held);
      ctx.res.once('close', () => {
        if (!this.#held.delete(held)) return;
        resolve(false);
      });
    });
  }

  /** The next `count` matching watches that resume from a resourceVersion get `410 Expired`, as after etcd compaction. */
  expireWatches(match: RequestMatcher, count = 1): void {
    this.#expiries.push({ match, remaining: count });
  }

  /** Destroys the connection of every open matching watch (a dropped TCP connection); returns how many. */
  dropWatches(match: RequestMatcher = {}): number {
    let dropped = 0;
    for (const watch of [...this.#watches]) {
      if (!matches(match, watch.info, watch.user)) continue;
      watch.res.destroy();
      this.#watches.delete(watch);
      dropped++;
    }
    return dropped;
  }

  /** Open watches that match (tests wait for a client to reconnect). */
  openWatches(match: RequestMatcher = {}): number {
    return [...this.#watches].filter((watch) => matches(match, watch.info, watch.user)).length;
  }

  /**
   * Called for every resource request after authorization: throws the injected error, answers an expired
   * watch itself (returns true), or registers a watch and lets the request through (false).
   */
  intercept(ctx: FaultRequest): boolean {
    const user = ctx.user.username;
    for (const fault of this.#failures) {
      if (fault.remaining > 0 && matches(fault.match, ctx.info, user)) {
        fault.remaining--;
        this.injected++;
        throw fault.status;
      }
    }
    if (ctx.info.verb !== 'watch') return false;
    const from = ctx.url.searchParams.get('resourceVersion');
    const expiry = this.#expiries.find((e) => e.remaining > 0 && matches(e.match, ctx.info, user));
    if (expiry && from && from !== '0') {
      expiry.remaining--;
      this.injected++;
      ctx.res.writeHead(200, { 'content-type': 'application/json' });
      ctx.res.end(expiredEvent(from));
      return true;
    }
    const watch: OpenWatch = { info: ctx.info, user, res: ctx.res };
    this.#watches.add(watch);
    ctx.res.on('close', () => this.#watches.delete(watch));
    return false;
  }
}
