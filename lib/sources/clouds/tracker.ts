/**
 * Level-triggered bookkeeping for one source on one node: from the current document (and, after a
 * restart, the holds the node's ledger shows) decide which requests to publish and which to end. The
 * decision is pure (`plan`); the agent publishes and then `commit`s what went out, so a failed publish
 * is simply planned again at the next read.
 *
 *  - a notice the policy evacuates for, active in the document, not yet requested → request;
 *  - a notice the document shows as over (AWS completed/canceled, Health closed) → end, once;
 *  - a requested (or adopted) request whose notice is no longer in a complete document → end; so is one
 *    whose publish was not confirmed (`unconfirmed`: it may have reached the bus after all);
 *  - a requested notice whose start (NotBefore) moved — a reschedule: same event, new time → revise: the
 *    request is published again under its id with a later revision, and the workflow moves its start
 *    (lib/progress/reschedule.ts); a request taken over from a previous run is revised once, at its first
 *    sight, since a move while no agent ran would otherwise be missed (the workflow drops a revision that
 *    moves nothing);
 *  - a notice the policy ignores → reported once.
 */
import type { NoticeSource } from '../../model/notice.ts';
import { noticeRequestId, requestIdPrefix } from './ids.ts';
import type { Notice } from './notice.ts';
import { type NoticePolicy, type NoticeRule, ruleFor } from './policy.ts';

export interface Snapshot {
  /** The notices of the document that concern this node. */
  readonly notices: readonly Notice[];
  /** False when some event of the document could not be read: then nothing counts as disappeared. */
  readonly complete: boolean;
}

export type TrackerAction =
  | { readonly kind: 'request'; readonly requestId: string; readonly notice: Notice; readonly rule: NoticeRule }
  | {
      readonly kind: 'revise';
      readonly requestId: string;
      readonly notice: Notice;
      readonly rule: NoticeRule;
      /** The start the request had (undefined: taken over from a previous run, not known). */
      readonly previousNotBefore?: string;
    }
  | {
      readonly kind: 'end';
      readonly requestId: string;
      readonly why: string;
      readonly last?: { readonly notice: Notice; readonly rule: NoticeRule };
      /** Ended because the source stayed unreadable: since its first unreadable read (ISO 8601). */
      readonly unreadableSince?: string;
    }
  | { readonly kind: 'ignore'; readonly requestId: string; readonly notice: Notice; readonly why: string };

interface Tracked {
  readonly notice?: Notice;
  readonly rule?: NoticeRule;
}

export class NoticeTracker {
  readonly source: NoticeSource;
  readonly nodeName: string;
  readonly #policy: NoticePolicy;
  /** Requests published (or adopted from the ledger) and not ended. */
  readonly #active = new Map<string, Tracked>();
  /** Requests ended while their notice is still listed (as completed/canceled): not ended twice. */
  readonly #ended = new Set<string>();
  readonly #ignored = new Set<string>();
  /**
   * Requests whose publish was not confirmed (the bus did not take it in time; the forwarder's queue keeps
   * offering it): they may reach the bus later, so their notice's disappearance ends them too — else a
   * request that did get through would wait in line and evacuate the node for a maintenance long over.
   */
  readonly #unconfirmed = new Map<string, Tracked>();

  constructor(source: NoticeSource, nodeName: string, policy: NoticePolicy) {
    this.source = source;
    this.nodeName = nodeName;
    this.#policy = policy;
  }

  requestIdOf(notice: Notice): string {
    return noticeRequestId(this.source, this.nodeName, notice.eventId);
  }

  /** Whether a request id is one this tracker makes (its source, its node). */
  owns(requestId: string): boolean {
    return requestId.startsWith(requestIdPrefix(this.source, this.nodeName));
  }

  /** Takes over requests a previous run published (read from the node's ledger), so their end is not missed. */
  adopt(requestIds: readonly string[]): void {
    for (const id of requestIds) if (this.owns(id) && !this.#active.has(id)) this.#active.set(id, {});
  }

  /**
   * Requests whose end went out but did not take (end-confirmation.ts): active again and not counted as
   * ended, so the next document ends them once more — listed as over, or no longer listed.
   */
  reopen(requestIds: readonly string[]): void {
    for (const id of requestIds) {
      if (!this.owns(id)) continue;
      this.#ended.delete(id);
      if (!this.#active.has(id)) this.#active.set(id, {});
    }
  }

  /** The active requests with the notice each came from (none for one taken over from a previous run). */
  open(): { requestId: string; notice?: Notice; rule?: NoticeRule }[] {
    return [...this.#active].map(([requestId, tracked]) => ({ requestId, ...tracked }));
  }

  /** Request ids currently active (for tests and logs). */
  active(): string[] {
    return [...this.#active.keys()];
  }

  #planNotice(notice: Notice): TrackerAction | undefined {
    const requestId = this.requestIdOf(notice);
    const rule = ruleFor(this.#policy, notice.provider, notice.policyKey);
    if (!rule || rule.action === 'ignore') {
      if (this.#ignored.has(requestId)) return undefined;
      const why = rule ? `the policy ignores ${notice.provider} ${notice.policyKey}` : 'no policy rule';
      return { kind: 'ignore', requestId, notice, why };
    }
    if (notice.status === 'ended') {
      if (this.#ended.has(requestId)) return undefined;
      return { kind: 'end', requestId, why: `${notice.eventType} ${notice.providerStatus}`, last: { notice, rule } };
    }
    const tracked = this.#active.get(requestId);
    if (tracked) return this.#planRevision(requestId, tracked, { notice, rule });
    if (this.#ended.has(requestId)) return undefined;
    return { kind: 'request', requestId, notice, rule };
  }

  /** An active request's notice whose start moved (or, taken over, whose start is not known yet): revise. */
  #planRevision(
    requestId: string,
    tracked: Tracked,
    seen: { readonly notice: Notice; readonly rule: NoticeRule },
  ): TrackerAction | undefined {
    const { notice, rule } = seen;
    // A rule that starts at once (spot: the notice's time is a deadline) has no start to move.
    if (rule.timing === 'deadline' || notice.notBefore === undefined) return undefined;
    const previous = tracked.notice?.notBefore;
    if (tracked.notice && (previous === undefined || Date.parse(previous) === Date.parse(notice.notBefore))) {
      return undefined;
    }
    return { kind: 'revise', requestId, notice, rule, ...(previous ? { previousNotBefore: previous } : {}) };
  }

  /** What to publish for this document. Changes nothing. */
  plan(snapshot: Snapshot): TrackerAction[] {
    const actions = snapshot.notices.map((notice) => this.#planNotice(notice)).filter((a) => a !== undefined);
    if (!snapshot.complete) return actions;
    const listed = new Set(snapshot.notices.map((notice) => this.requestIdOf(notice)));
    for (const [requestId, tracked] of this.#active) {
      if (listed.has(requestId)) continue;
      const last = tracked.notice && tracked.rule ? { last: { notice: tracked.notice, rule: tracked.rule } } : {};
      actions.push({ kind: 'end', requestId, why: 'the notice is no longer listed', ...last });
    }
    for (const [requestId, tracked] of this.#unconfirmed) {
      if (listed.has(requestId) || this.#active.has(requestId)) continue;
      const last = tracked.notice && tracked.rule ? { last: { notice: tracked.notice, rule: tracked.rule } } : {};
      actions.push({ kind: 'end', requestId, why: 'the notice is no longer listed', ...last });
    }
    return actions;
  }

  /** Records a request whose publish failed without a refusal: it may still reach the bus (see #unconfirmed). */
  unconfirmed(action: TrackerAction): void {
    if (action.kind === 'request')
      this.#unconfirmed.set(action.requestId, { notice: action.notice, rule: action.rule });
  }

  /** Records an action that was carried out (published, or reported). */
  commit(action: TrackerAction): void {
    this.#unconfirmed.delete(action.requestId);
    if (action.kind === 'ignore') this.#ignored.add(action.requestId);
    if (action.kind === 'request' || action.kind === 'revise')
      this.#active.set(action.requestId, { notice: action.notice, rule: action.rule });
    if (action.kind === 'end') {
      this.#active.delete(action.requestId);
      if (action.last?.notice.status === 'ended') this.#ended.add(action.requestId);
    }
  }

  /** After a complete document: forget ended and ignored notices that are no longer listed. */
  forgetUnlisted(snapshot: Snapshot): void {
    if (!snapshot.complete) return;
    const listed = new Set(snapshot.notices.map((notice) => this.requestIdOf(notice)));
    for (const id of [...this.#ended]) if (!listed.has(id)) this.#ended.delete(id);
    for (const id of [...this.#ignored]) if (!listed.has(id)) this.#ignored.delete(id);
  }
}
