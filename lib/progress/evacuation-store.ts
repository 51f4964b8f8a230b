/**
 * The cluster-backed progress record: one `Evacuation` custom resource per request (cluster-scoped, like
 * the node it is about; named after the requestId). It implements `ProgressStore` for the passes, and
 * carries the counts and blockers `kubectl get evacuations` prints.
 *
 * Versions are per branch, not the object's resourceVersion: the branches run in parallel and each
 * writes its own part, so a write by the Nova branch must not make the pod branch's next write fail.
 * Each write is still a conditional replace on the resourceVersion just read, retried on 409 after
 * re-checking the branch's own version (lib/clients/kube/conflict.ts), so two overlapping executions of one
 * branch cannot both win.
 */

import type { KubeClient } from '../clients/kube/client.ts';
import { retryOnConflict } from '../clients/kube/conflict.ts';
import { isNotFound } from '../clients/kube/errors.ts';
import {
  EVACUATION_API,
  type EvacuationObject,
  type EvacuationStart,
  type EvacuationStatus,
  evacuationName,
  type NeverHeldEnd,
  type RecordedRelease,
} from '../clients/kube/paths.ts';
import { ConflictError, InvalidInput, RecordUnreadable } from '../errors/index.ts';
import type { BranchProgress, ProgressStore } from '../model/pass.ts';
import type { Blocker, BranchName } from '../model/plan.ts';
import type { ResolvedRequest } from '../model/request.ts';
import { type BranchSpan, bounded, shortReason, TIMELINE_LIMITS } from '../model/timeline.ts';
import { ledgerOf } from '../node/ledger.ts';
import { decodeRecord, type RecordFormat } from '../util/json-record.ts';
import { sameJson } from '../util/same-json.ts';
import { ENDED_LABEL, RESTORED_LABEL } from './expiry.ts';
import { abortRequestedBy, blockedBlocker, withAbortRequest, withBlocked, withContinueRequest } from './mailboxes.ts';
import {
  judgeRevision,
  KEEP_DRAINED,
  type ReschedulePolicy,
  type RevisionVerdict,
  withReschedule,
} from './reschedule.ts';

/** A new, empty record for a request. Pure. */
export function newEvacuation(spec: EvacuationObject['spec']): EvacuationObject {
  return {
    apiVersion: `${EVACUATION_API.group}/${EVACUATION_API.version}`,
    kind: 'Evacuation',
    metadata: { name: evacuationName(spec.requestId), labels: { 'drainbridge.io/node': spec.nodeName } },
    spec,
    status: { branches: {} },
  };
}

/** Recomputes the summary fields the printer columns show from the branches. Pure. */
export function summarise(status: EvacuationStatus): EvacuationStatus {
  const branches = Object.values(status.branches ?? {});
  const blocked = blockedBlocker(status);
  const blockers = [...(blocked ? [blocked] : []), ...branches.flatMap((branch) => branch.blockers ?? [])];
  const summary: EvacuationStatus = {
    ...status,
    moved: branches.reduce((sum, branch) => sum + (branch.moved ?? 0), 0),
    total: branches.reduce((sum, branch) => sum + (branch.total ?? 0), 0),
    blockerCount: blockers.length,
  };
  if (blockers[0]) summary.firstBlocker = blockers[0];
  else delete summary.firstBlocker;
  return summary;
}

/**
 * A pass's counts and blockers, what it waits for (blockers only if the evacuation gives up), and with
 * `timing` when it ran (the branch's first pass and end are kept: observed durations for estimates).
 */
export interface ProgressReport {
  readonly progress: BranchProgress;
  readonly blockers: readonly Blocker[];
  readonly waiting?: readonly Blocker[] | undefined;
  readonly timing?: PassTiming;
}

/** Records a pass's counts and blockers where people read them (`kubectl get evacuations`). */
export interface ProgressRecorder {
  recordProgress(requestId: string, branch: BranchName, report: ProgressReport): Promise<void>;
  /**
   * The branch's state (conditional on `expectedVersion`, as `ProgressStore.write`) and the pass's report
   * in one write — for a pass whose state is bookkeeping written after it acted (the pods pass), not a
   * write-ahead record (Nova's). Returns the new version.
   */
  writeStateWithProgress?<S>(
    requestId: string,
    branch: BranchName,
    write: StateWrite<S>,
    report: ProgressReport,
  ): Promise<string>;
  /**
   * A round of a pass that waits within itself (the pods pass): its state and blockers as they stand,
   * for whoever watches in this process (the CLI's progress lines). Nothing is written.
   */
  observeRound?<S>(requestId: string, branch: BranchName, round: ObservedRound<S>): void;
}

/** A round of a pass as observed: its state, when, and the blockers it sees (the record has them at the pass's end). */
export interface ObservedRound<S> {
  readonly state: S;
  readonly at: Date;
  readonly blockers?: readonly Blocker[];
  readonly progress?: BranchProgress;
}

/** What a watcher in this process sees of the records: each one written, and rounds of a pass in between. */
export type RecordUpdate =
  | { readonly kind: 'written'; readonly record: EvacuationObject }
  | {
      readonly kind: 'round';
      readonly requestId: string;
      readonly branch: BranchName;
      readonly state: unknown;
      readonly at: Date;
      /** The blockers and counts as the round sees them (the record has them only when the pass ends). */
      readonly blockers?: readonly Blocker[];
      readonly progress?: BranchProgress;
    };

/** A branch state to write, conditional on the version it was read at. */
export interface StateWrite<S> {
  readonly state: S;
  readonly expectedVersion: string | undefined;
}

/** When a pass ran and whether it found its branch done: the branch's first pass and its end are kept. */
export interface PassTiming {
  /** When the pass returned. */
  readonly now: Date;
  /**
   * When the pass began. A pass may wait on its watches and finish the whole branch before it returns (the
   * pods and KubeVirt passes wait up to 30 s): the branch started when its first pass began, not when it
   * returned — else a branch done in one pass records no time at all, and the start-time estimate learns
   * 0 s per VM (lib/workflow/estimate-observe.ts).
   */
  readonly passStartedAt?: Date;
  readonly done: boolean;
}

/** The branch entry's startedAt/finishedAt after a pass at `timing`. Pure. */
function branchTimes(
  current: { startedAt?: string; finishedAt?: string },
  timing: PassTiming | undefined,
): { startedAt?: string; finishedAt?: string } {
  if (!timing) return {};
  const at = timing.now.toISOString();
  const startedAt = current.startedAt ?? (timing.passStartedAt ?? timing.now).toISOString();
  return timing.done ? { startedAt, finishedAt: current.finishedAt ?? at } : { startedAt };
}

type BranchEntry = NonNullable<EvacuationStatus['branches']>[string];

/** One blocker span per blocker code and item (or sentence, for a blocker about no item). */
function spanKey(span: { code: string; reason?: string; item?: { uid: string } }): string {
  return `${span.code} ${span.item?.uid ?? span.reason ?? ''}`;
}

/**
 * The branch's blocker spans after a pass at `at` reported `blockers`: a blocker not reported before
 * opens a span, one no longer reported closes its span. They change only when the blockers do, which
 * the same entry records anyway — so they never cost a write of their own. Pure.
 */
export function followBlockers(
  spans: readonly BranchSpan[] | undefined,
  blockers: readonly Blocker[],
  at: string,
): BranchSpan[] | undefined {
  const now = new Map(blockers.map((blocker) => [spanKey(blocker), blocker]));
  let changed = false;
  const next = (spans ?? []).map((span) => {
    if (span.to !== undefined) return span;
    if (now.delete(spanKey(span))) return span;
    changed = true;
    return { ...span, to: at };
  });
  for (const blocker of now.values()) {
    // The same blocker twice in one report is one span.
    if (next.some((span) => span.to === undefined && spanKey(span) === spanKey(blocker))) continue;
    changed = true;
    next.push({
      code: blocker.code,
      from: at,
      reason: shortReason(blocker.reason),
      ...(blocker.item ? { item: { kind: blocker.item.kind, uid: blocker.item.uid, name: blocker.item.name } } : {}),
    });
  }
  if (!changed) return spans as BranchSpan[] | undefined;
  return bounded(next, TIMELINE_LIMITS.spansPerBranch);
}

/** A branch's entry with a pass's counts, blockers, what it waits for and its times. Pure. */
function progressEntry(entry: BranchEntry | undefined, report: ProgressReport): BranchEntry {
  const { waiting: _waiting, ...current } = entry ?? { version: '0', state: undefined };
  const waiting = report.waiting ?? [];
  const spans = report.timing
    ? followBlockers(current.blockerSpans, report.blockers, report.timing.now.toISOString())
    : current.blockerSpans;
  return {
    ...current,
    ...report.progress,
    blockers: report.blockers.map((blocker) => blocker.reason),
    ...(waiting.length > 0 ? { waiting: waiting.map((item) => item.reason) } : {}),
    ...branchTimes(current, report.timing),
    ...(spans?.length ? { blockerSpans: spans } : {}),
  };
}

/** Phases kept per record (a request walks through a handful; continued executions do not walk back). */
const MAX_PHASES = 50;

/** The record with a move noted (see reviseStart): `kept` notes it; `replan` and `restore` make it live. */
function revisedRecord(
  record: EvacuationObject,
  request: ResolvedRequest,
  verdict: Extract<RevisionVerdict, { reschedule: unknown }>,
  at: Date,
): EvacuationObject {
  const status = record.status ?? { branches: {} };
  const reschedules = withReschedule(status.reschedules, verdict.reschedule);
  if (verdict.kind === 'kept') return { ...record, status: { ...status, reschedules } };
  const spec = {
    ...record.spec,
    ...(request.notBefore ? { notBefore: request.notBefore } : {}),
    ...(request.revision ? { revision: request.revision } : {}),
  };
  if (verdict.kind === 'replan') return { ...record, spec, status: { ...status, reschedules } };
  const phase = 'MaintenanceScheduled';
  const phases = [...(status.phases ?? []), { phase, at: at.toISOString() }].slice(-MAX_PHASES);
  return { ...record, spec, status: { ...status, reschedules, phase, phases } };
}

export class EvacuationProgressStore implements ProgressStore, ProgressRecorder {
  readonly #client: KubeClient;
  readonly #watchers = new Set<(update: RecordUpdate) => void>();

  constructor(client: KubeClient) {
    this.#client = client;
  }

  /**
   * Calls `watcher` with every record this store writes, and the rounds passes report in between — in
   * this process only (the CLI's progress lines and live display read no record of their own). Returns
   * the function that stops it.
   */
  watch(watcher: (update: RecordUpdate) => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  observeRound<S>(requestId: string, branch: BranchName, round: ObservedRound<S>): void {
    this.#tell({ kind: 'round', requestId, branch, ...round });
  }

  #tell(update: RecordUpdate): void {
    for (const watcher of this.#watchers) {
      try {
        watcher(update);
      } catch {
        // A watcher's failure is its own: the evacuation goes on.
      }
    }
  }

  /**
   * Creates the record for a request if it does not exist yet; returns it. `at`: now on the workflow's
   * clock, kept as `requestedAt` (the API server's creationTimestamp is another clock).
   */
  async ensure(request: ResolvedRequest, at: Date = new Date()): Promise<EvacuationObject> {
    const existing = await this.#get(request.requestId);
    if (existing) return existing;
    // The drain options and deadline too, so that a restarted `drainbridge run` can resume the request as asked.
    const spec = {
      requestId: request.requestId,
      nodeName: request.nodeName,
      requester: request.requester,
      origin: request.origin,
      reason: request.reason,
      drain: { ...request.drain },
      ...(request.deadline ? { deadline: request.deadline } : {}),
      ...(request.notBefore ? { notBefore: request.notBefore } : {}),
      ...(request.window ? { window: { ...request.window } } : {}),
      ...(request.revision ? { revision: { ...request.revision } } : {}),
    };
    try {
      const fresh = newEvacuation(spec);
      const created = await this.#client.createEvacuation({
        ...fresh,
        status: { ...fresh.status, requestedAt: at.toISOString() },
      });
      this.#tell({ kind: 'written', record: created });
      return created;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      return (await this.#get(request.requestId)) ?? newEvacuation(spec);
    }
  }

  /**
   * The branch's state, checked against its format. A state that does not match throws RecordUnreadable
   * (the pass stops; `drainbridge repair` resets it): read as a fresh start, a pass would forget the
   * evictions and migrations it has in flight.
   */
  async read<S>(
    requestId: string,
    branch: BranchName,
    format: RecordFormat<S>,
  ): Promise<{ state: S; version: string } | undefined> {
    const record = await this.#get(requestId);
    const entry = record?.status?.branches?.[branch];
    if (!entry || entry.state === undefined || entry.state === null) return undefined;
    const read = decodeRecord(entry.state, format);
    if (read.status === 'unreadable' || typeof entry.version !== 'string') {
      const reason = read.status === 'unreadable' ? read.reason : `${format.what}: version: not a string`;
      throw new RecordUnreadable({ what: format.what, reason, nodeName: record?.spec.nodeName ?? '' });
    }
    return read.status === 'ok' ? { state: read.value, version: entry.version } : undefined;
  }

  async write<S>(
    requestId: string,
    branch: BranchName,
    state: S,
    expectedVersion: string | undefined,
  ): Promise<string> {
    return this.#writeState(requestId, branch, { state, expectedVersion });
  }

  async writeStateWithProgress<S>(
    requestId: string,
    branch: BranchName,
    write: StateWrite<S>,
    report: ProgressReport,
  ): Promise<string> {
    return this.#writeState(requestId, branch, write, report);
  }

  async #writeState<S>(
    requestId: string,
    branch: BranchName,
    write: StateWrite<S>,
    report?: ProgressReport,
  ): Promise<string> {
    const { state, expectedVersion } = write;
    let written = '';
    // A stale expectedVersion is the caller's stale read: re-reading cannot cure it, so it is not retried.
    let stale: ConflictError | undefined;
    await this.#update(requestId, (status) => {
      const current = status.branches?.[branch];
      // An entry with counts but no state yet (recordProgress came first) reads as no state at all.
      const have = current?.state === undefined || current?.state === null ? undefined : current.version;
      stale = undefined;
      if (have !== expectedVersion) {
        stale = new ConflictError(
          `progress of ${requestId}/${branch} changed since it was read (have ${have}, expected ${expectedVersion})`,
        );
        return undefined;
      }
      written = String(Number(current?.version ?? '0') + 1);
      const entry = { ...(report ? progressEntry(current, report) : current), version: written, state };
      return { ...status, branches: { ...status.branches, [branch]: entry } };
    });
    if (stale) throw stale;
    return written;
  }

  /**
   * Records a pass's counts and blockers for `kubectl get evacuations` (no version check: last pass wins;
   * no write when unchanged), and with `timing` the branch's first pass and end (estimates read them).
   */
  async recordProgress(requestId: string, branch: BranchName, report: ProgressReport): Promise<void> {
    await this.#update(requestId, (status) => {
      const entry = progressEntry(status.branches?.[branch] ?? { version: '0', state: undefined }, report);
      return { ...status, branches: { ...status.branches, [branch]: entry } };
    });
  }

  /**
   * A request arriving with a notice revision: judges it against the record (lib/progress/reschedule.ts)
   * and, for a move, records it in the same conditional write — `replan` makes the request's start and
   * revision the record's (the live ones), `kept` only notes the move, `restore` does what `replan` does
   * and puts the phase back to MaintenanceScheduled (the node is restored next, and evacuated again).
   * Judged again on every retry, so two revisions racing end with the later one live. The record must
   * exist (`ensure` first).
   */
  async reviseStart(
    request: ResolvedRequest,
    at: Date,
    policy: ReschedulePolicy = KEEP_DRAINED,
  ): Promise<RevisionVerdict> {
    let verdict: RevisionVerdict = { kind: 'current' };
    await retryOnConflict(async () => {
      const record = await this.#get(request.requestId);
      verdict = record ? judgeRevision(request, record, at, policy) : { kind: 'current' };
      if (!record || !('reschedule' in verdict)) return;
      const written = await this.#client.replaceEvacuation(revisedRecord(record, request, verdict, at));
      this.#tell({ kind: 'written', record: written });
    });
    return verdict;
  }

  /** A request ended because its notice's source stayed unreadable: kept for `status` (an existing record only). */
  async recordSourceUnreadable(
    requestId: string,
    unreadable: { readonly since: string; readonly message: string },
    at: Date,
  ): Promise<void> {
    if (!(await this.#get(requestId))) return;
    await this.#update(requestId, (status) =>
      status.sourceUnreadable ? undefined : { ...status, sourceUnreadable: { ...unreadable, at: at.toISOString() } },
    );
  }

  /** Records when the evacuation starts and on what estimate (a request with notBefore). */
  async recordStart(requestId: string, start: EvacuationStart): Promise<void> {
    await this.#update(requestId, (status) => ({ ...status, start }));
  }

  /** Records the evacuation's phase, and when it was entered (the report's phases; in the same write). */
  async setPhase(requestId: string, phase: string, at: Date = new Date()): Promise<void> {
    await this.#update(requestId, (status) => {
      // Only a change of phase is entered (it writes anyway); the same phase again writes nothing, as before.
      if (status.phase === phase) return status;
      const phases = [...(status.phases ?? []), { phase, at: at.toISOString() }].slice(-MAX_PHASES);
      return { ...status, phase, phases };
    });
  }

  /** Records why the evacuation failed (shown as a NodeMaintenance's lastError). */
  async recordError(requestId: string, message: string): Promise<void> {
    await this.#update(requestId, (status) => ({ ...status, lastError: message.slice(0, 1024) }));
  }

  /** Records why the request waits for admission (shown as a NodeMaintenance's lastError); undefined removes it. */
  async recordWaiting(requestId: string, why: string | undefined): Promise<void> {
    await this.#update(requestId, (status) => {
      const { waiting: _shown, ...rest } = status;
      return why === undefined ? rest : { ...rest, waiting: why.slice(0, 1024) };
    });
  }

  /**
   * Marks a Restore of `requestId` as started or finished, so that a restarted `drainbridge run` finishes
   * an interrupted one. Only an existing record is marked (a request never admitted has none to resume).
   */
  async markRestore(requestId: string, stage: 'startedAt' | 'finishedAt', at: Date): Promise<void> {
    if (!(await this.#get(requestId))) return;
    // A finished Restore ends the request: the label lets the expiry sweep list only such records (expiry.ts).
    const labels: Record<string, string> = stage === 'finishedAt' ? { [RESTORED_LABEL]: 'true' } : {};
    await this.#update(
      requestId,
      (status) =>
        status.restore?.[stage] ? status : { ...status, restore: { ...status.restore, [stage]: at.toISOString() } },
      labels,
    );
  }

  /**
   * Marks the end of a request that never held its node (nothing to restore) and how it ended: its record
   * then expires as a restored one does (expiry.ts). The latest end counts (the same id run again and
   * failing again keeps its record the full time). Only an existing record is marked.
   */
  async markEnded(requestId: string, at: Date, end: NeverHeldEnd): Promise<void> {
    if (!(await this.#get(requestId))) return;
    await this.#update(
      requestId,
      (status) => ({
        ...status,
        endedAt: at.toISOString(),
        outcome: end.outcome,
        ...(end.why ? { outcomeReason: end.why.slice(0, 1024) } : {}),
      }),
      { [ENDED_LABEL]: 'true' },
    );
  }

  /** The request's record, or undefined when it has none. */
  async find(requestId: string): Promise<EvacuationObject | undefined> {
    return this.#get(requestId);
  }

  /**
   * Clears the end of a request that ended never holding its node and now holds it (the same id run
   * again): a running request's record must not say it ended, nor expire as one that did.
   */
  async clearEnded(requestId: string): Promise<void> {
    const record = await this.#get(requestId);
    if (record?.status?.endedAt === undefined && record?.status?.outcome === undefined) return;
    await this.#update(requestId, ({ endedAt: _at, outcome: _outcome, outcomeReason: _why, ...status }) => status, {
      [ENDED_LABEL]: 'false',
    });
  }

  /**
   * Keeps what the Restore's release of the hold did, once (the first release is the one that acted): a
   * Restore resumed after it finds the hold released already and reports this instead.
   */
  async markReleased(requestId: string, release: RecordedRelease): Promise<void> {
    if (!(await this.#get(requestId))) return;
    await this.#update(requestId, (status) =>
      status.restore?.release ? undefined : { ...status, restore: { ...status.restore, release } },
    );
  }

  /** What an earlier release of `requestId`'s hold did, when its record kept it. */
  async recordedRelease(requestId: string): Promise<RecordedRelease | undefined> {
    return (await this.#get(requestId))?.status?.restore?.release;
  }

  /**
   * Asks the running evacuation of `requestId` to stop (it sees this at its next step). Idempotent.
   * Refused (InvalidInput, nothing written) when no such request runs or holds its node: a mark left on a
   * request that does not exist yet would make that request, when it comes, fail at once (issue 12 item 2).
   * A request runs once it has a record (Admit creates it, waiting in line included) and its evacuation
   * has not ended; it holds its node while the node's ledger says so. `nodeName`: the node the caller
   * means (a request for another node is refused).
   */
  async requestAbort(requestId: string, by: string, at: Date, nodeName?: string): Promise<void> {
    const record = await this.#get(requestId);
    let refusal = record ? await this.#notAbortable(record) : `drainbridge has no Evacuation record for it`;
    if (record && nodeName && record.spec.nodeName !== nodeName)
      refusal = `it is a request for node ${record.spec.nodeName}, not ${nodeName}`;
    if (refusal) {
      throw new InvalidInput('nothing to abort', [
        { path: 'requestId', message: `no running or held request "${requestId}": ${refusal}` },
      ]);
    }
    await this.#update(requestId, (status) => withAbortRequest(status, by, at));
  }

  /**
   * Why the request cannot be aborted, or undefined. Whatever the phase: a Restore cancels a running
   * Evacuate and leaves its phase as it was (NodeDraining), so the phase alone does not tell. Refused:
   * a request whose Restore is marked; one that held its node and holds it no more (its tombstone in the
   * ledger, or a phase past admission); one that ended. A request still waiting for a slot holds nothing
   * yet, and may be aborted.
   */
  async #notAbortable(record: EvacuationObject): Promise<string | undefined> {
    const { nodeName, requestId } = record.spec;
    const phase = record.status?.phase;
    const restore = record.status?.restore;
    const holding = await this.#holding(nodeName, requestId);
    if (restore?.startedAt && holding === 'holds') {
      return `a Restore of it started (${restore.startedAt}) and releases node ${nodeName}`;
    }
    // A ledger that cannot be read may hold it: the abort is harmless there, so it is not refused.
    if (holding === 'holds' || holding === 'unreadable') return undefined;
    if (phase === 'NodeDrained' || phase === 'Failed') {
      return `its evacuation ended (${phase}) and it holds node ${nodeName} no more`;
    }
    if (restore?.startedAt || restore?.finishedAt) {
      return `a Restore of it ran (${restore.finishedAt ?? restore.startedAt}) and it holds node ${nodeName} no more`;
    }
    const admitted = phase !== undefined && phase !== 'MaintenanceScheduled';
    if (holding === 'released' || admitted) return `it holds node ${nodeName} no more (it was released)`;
    return undefined;
  }

  /** Whether the node's ledger holds the request, released it (a tombstone), cannot be read, or has neither. */
  async #holding(nodeName: string, requestId: string): Promise<'holds' | 'released' | 'unreadable' | 'none'> {
    try {
      const read = ledgerOf(await this.#client.getNode(nodeName));
      if (read.status === 'unreadable') return 'unreadable';
      if (Object.hasOwn(read.ledger.holds, requestId)) return 'holds';
      return Object.hasOwn(read.ledger.released, requestId) ? 'released' : 'none';
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return 'none';
    }
  }

  /** Records what blocks the request until an operator acts (an unreadable record); shown first in `kubectl get evacuations`. */
  async recordBlocked(request: ResolvedRequest, blocked: { error: string; message: string }, at: Date): Promise<void> {
    await this.ensure(request, at);
    await this.#update(request.requestId, (status) => withBlocked(status, blocked, at));
  }

  /** Who asked to abort `requestId`'s evacuation, or undefined. */
  async abortRequestedBy(requestId: string): Promise<string | undefined> {
    return abortRequestedBy((await this.#get(requestId))?.status);
  }

  /** Asks every branch of `executionId` to leave so that it continues as new. Idempotent. */
  async requestContinue(requestId: string, executionId: string, at: Date): Promise<void> {
    await this.#update(requestId, (status) => withContinueRequest(status, executionId, at));
  }

  async #get(requestId: string): Promise<EvacuationObject | undefined> {
    try {
      return await this.#client.getEvacuation(evacuationName(requestId));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * Read, change the status, conditional replace; re-read and re-apply on 409. `change` returns
   * undefined to write nothing.
   */
  async #update(
    requestId: string,
    change: (status: EvacuationStatus) => EvacuationStatus | undefined,
    labels: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    await retryOnConflict(async () => {
      const record = (await this.#get(requestId)) ?? newEvacuation({ requestId, nodeName: '' });
      const changed = change(record.status ?? { branches: {} });
      if (changed === undefined) return;
      const labelled = Object.entries(labels).every(([key, value]) => record.metadata.labels?.[key] === value);
      const metadata = labelled
        ? record.metadata
        : { ...record.metadata, labels: { ...record.metadata.labels, ...labels } };
      const next = { ...record, metadata, status: summarise(changed) };
      // Unchanged: no write (passes run often; the record changes only when something did).
      if (record.metadata.resourceVersion && labelled && sameJson(next.status, record.status)) return;
      const written = record.metadata.resourceVersion
        ? await this.#client.replaceEvacuation(next)
        : await this.#client.createEvacuation(next);
      this.#tell({ kind: 'written', record: written ?? next });
    });
  }
}
