/**
 * Node mutations: taking and releasing maintenance holds, the phase annotation, the out-of-band
 * uncordon report. The only module that writes nodes. Each write is planned by pure code (ledger.ts,
 * phase.ts) from a fresh read, sent conditional on that read's resourceVersion, and replanned on 409
 * (lib/clients/kube/conflict.ts).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { retryOnConflict } from '../clients/kube/conflict.ts';
import { isNotFound } from '../clients/kube/errors.ts';
import type { MergePatch } from '../clients/kube/paths.ts';
import { EvacuationFailed, SkipEvent } from '../errors/index.ts';
import type { Blocker } from '../model/plan.ts';
import { emitNodeEvent } from './kube-events.ts';
import {
  countHeldNodes,
  DEFAULT_LEDGER_SETTINGS,
  HELD_LABEL,
  type HoldRequest,
  isUncordonedOutOfBand,
  type LedgerSettings,
  NOTHING_RESTORED,
  planHold,
  planOutOfBandMark,
  planRelease,
  type Restored,
  readLedger,
} from './ledger.ts';
import { type NodePhase, planPhase } from './phase.ts';

/** Reads the node; a 404 becomes EvacuationFailed with a reason a person understands. */
export async function readNodeOrFail(client: KubeClient, nodeName: string): Promise<V1Node> {
  try {
    return await client.getNode(nodeName);
  } catch (error) {
    if (isNotFound(error)) {
      throw new EvacuationFailed(`node ${nodeName} was deleted during the evacuation`, { cause: error });
    }
    throw error;
  }
}

/**
 * Read → plan → conditional patch, replanning on conflict. `plan` returns the patch and a value for
 * the caller, or no patch when nothing needs writing (then nothing is sent). A node whose ledger cannot
 * be read is not written at all (RecordUnreadable): it is blocked until `drainbridge repair`.
 */
export async function updateNode<T>(
  client: KubeClient,
  nodeName: string,
  plan: (node: V1Node) => { patch?: MergePatch; value: T },
  options: { readonly sendBy?: SendBy } = {},
): Promise<{ value: T; node: V1Node; written: boolean }> {
  return retryOnConflict(async () => {
    const node = await readNodeOrFail(client, nodeName);
    readLedger(node); // throws RecordUnreadable for a damaged ledger, before anything is planned
    const { patch, value } = plan(node);
    if (!patch) return { value, node, written: false };
    const late = options.sendBy && Date.now() > options.sendBy.at ? options.sendBy.late() : undefined;
    if (late) throw late;
    return { value, node: await client.patchNode(nodeName, patch), written: true };
  });
}

/** The last instant (Date.now(), real time) a write may still be sent, and the error that stops a later one. */
export interface SendBy {
  readonly at: number;
  readonly late: () => Error;
}

export interface HoldResult {
  /** This call took the hold (false: `requestId` already held it — a duplicate request). */
  readonly acquired: boolean;
  /** This was the first hold: drainbridge cordoned the node (unless it was cordoned already). */
  readonly first: boolean;
}

/**
 * Takes a maintenance hold on the node for `request.requestId`. Idempotent: a duplicated request changes
 * nothing. A late duplicate of a released request throws SkipEvent (the tombstone), so it never
 * re-cordons. The first hold cordons and records what it changed.
 */
export async function acquireHold(
  client: KubeClient,
  nodeName: string,
  request: HoldRequest,
  settings: { now?: Date; ledger?: LedgerSettings; sendBy?: SendBy } = {},
): Promise<HoldResult> {
  const now = settings.now ?? new Date();
  const plan = (node: V1Node) => {
    const decision = planHold(node, request, now, settings.ledger ?? DEFAULT_LEDGER_SETTINGS);
    if (decision.action === 'refuse') throw new EvacuationFailed(decision.why);
    if (decision.action === 'none') return { value: decision.why, patch: undefined };
    return { value: decision.first ? 'first' : 'added', patch: decision.patch };
  };
  const result = await updateNode(client, nodeName, plan, settings.sendBy ? { sendBy: settings.sendBy } : {});
  if (result.value === 'released') {
    throw new SkipEvent(`request ${request.requestId} was already released from node ${nodeName}; not cordoning again`);
  }
  if (result.written) {
    const message = `maintenance hold ${request.requestId} taken for ${request.requester} (${request.origin})`;
    await emitNodeEvent(client, result.node, { reason: 'MaintenanceHoldAcquired', message }, now);
  }
  return { acquired: result.written, first: result.value === 'first' };
}

/** `cordon` is `acquireHold`: drainbridge cordons only through the ledger. */
export const cordon = acquireHold;

export interface ReleaseResult {
  /** No hold is left on the node (drainbridge restored what it changed). */
  readonly last: boolean;
  readonly restored: Restored;
  /** The node no longer exists: nothing to restore. */
  readonly nodeGone: boolean;
  /** The request was released before (its tombstone): `restored` is empty, the earlier release restored. */
  readonly alreadyReleased: boolean;
  /** The request never held the node: only its tombstone was written (it may still wait in line). */
  readonly neverHeld?: boolean;
}

function describeRestored(restored: Restored): string {
  const cordon = restored.cordonKeptFor
    ? `left cordoned: ${restored.cordonKeptFor} cordoned it after drainbridge did`
    : 'left cordon as found';
  const parts = [
    restored.uncordoned ? 'uncordoned' : cordon,
    ...restored.annotationsRemoved.map((key) => `removed ${key}`),
    ...restored.taintsRemoved.map((key) => `removed taint ${key}`),
    ...(restored.labelsRemoved ?? []).map((key) => `removed label ${key}`),
  ];
  return parts.join(', ');
}

/**
 * Releases `requestId`'s hold (leaving a tombstone). Releasing the last hold undoes exactly what the
 * ledger recorded. Idempotent; a deleted node is a clean no-op. `keepRequest`: no tombstone, the request
 * takes the node again later (a rescheduled notice: lib/workflow/reschedule-restore.ts).
 */
export async function releaseHold(
  client: KubeClient,
  nodeName: string,
  requestId: string,
  settings: { now?: Date; ledger?: LedgerSettings; keepRequest?: boolean } = {},
): Promise<ReleaseResult> {
  const now = settings.now ?? new Date();
  const keep = settings.keepRequest === true;
  try {
    const result = await updateNode(client, nodeName, (node) => {
      const decision = planRelease(node, requestId, now, {
        ...(settings.ledger ?? DEFAULT_LEDGER_SETTINGS),
        keepRequest: keep,
      });
      if (decision.action === 'none') {
        return { value: { last: decision.last, restored: NOTHING_RESTORED, neverHeld: false, already: true } };
      }
      const neverHeld = decision.neverHeld === true;
      return {
        value: { last: decision.last, restored: decision.restored, neverHeld, already: false },
        patch: decision.patch,
      };
    });
    if (result.written) {
      const what = result.value.last ? `; last hold: ${describeRestored(result.value.restored)}` : '';
      const message = result.value.neverHeld
        ? `maintenance request ${requestId} ended before it held the node; it will not cordon it`
        : `maintenance hold ${requestId} released${keep ? ' until its rescheduled start' : ''}${what}`;
      await emitNodeEvent(client, result.node, { reason: 'MaintenanceHoldReleased', message }, now);
    }
    return {
      last: result.value.last,
      restored: result.value.restored,
      nodeGone: false,
      alreadyReleased: result.value.already,
      ...(result.value.neverHeld ? { neverHeld: true } : {}),
    };
  } catch (error) {
    if (error instanceof EvacuationFailed) {
      return { last: true, restored: NOTHING_RESTORED, nodeGone: true, alreadyReleased: false };
    }
    throw error;
  }
}

/** Records the node's phase; writes (and emits an event) only when it changes. Returns whether it wrote. */
export async function setPhase(
  client: KubeClient,
  nodeName: string,
  phase: NodePhase,
  now = new Date(),
): Promise<boolean> {
  const result = await updateNode(client, nodeName, (node) => ({ value: phase, patch: planPhase(node, phase) }));
  if (result.written) {
    const type = phase === 'Failed' ? 'Warning' : 'Normal';
    await emitNodeEvent(
      client,
      result.node,
      { reason: 'PhaseChanged', message: `maintenance phase ${phase}`, type },
      now,
    );
  }
  return result.written;
}

/**
 * Whether someone uncordoned the node while drainbridge holds it: returns the blocker to report. The
 * first sighting is recorded in the ledger and announced with a Warning event; drainbridge does not
 * cordon again (that would fight a person or controller), and the pod drain evicts nothing while the
 * node stays uncordoned (lib/branches/pods/eviction-pass.ts: paused).
 */
export async function checkOutOfBandUncordon(
  client: KubeClient,
  node: V1Node,
  now = new Date(),
): Promise<Blocker | undefined> {
  if (!isUncordonedOutOfBand(node)) return undefined;
  const nodeName = node.metadata?.name ?? '';
  const reason = `node ${nodeName} was uncordoned by someone else while drainbridge held it: the drain is paused (no pod is evicted while the node is schedulable); cordon it again to continue (kubectl cordon ${nodeName}), or end the maintenance (drainbridge restore ${nodeName})`;
  const result = await updateNode(client, nodeName, (fresh) => ({ value: true, patch: planOutOfBandMark(fresh, now) }));
  if (result.written)
    await emitNodeEvent(client, result.node, { reason: 'OutOfBandUncordon', message: reason, type: 'Warning' }, now);
  return { code: 'OutOfBandUncordon', reason };
}

/**
 * Every node drainbridge may hold: those labelled held, and every cordoned node. The label alone would
 * let a node slip out of the count whose hold was taken by a version before the label (it gets the label
 * only at its ledger's next change) or whose label someone removed; a hold always cordons, so the
 * cordoned nodes cover both — and a cluster has few of them. Two lists, neither of the whole cluster.
 */
export async function listNodesMaybeHeld(client: KubeClient): Promise<V1Node[]> {
  const [labelled, cordoned] = await Promise.all([
    client.listNodes(HELD_LABEL),
    client.listNodes(undefined, 'spec.unschedulable=true'),
  ]);
  const byName = new Map(cordoned.map((node) => [node.metadata?.name ?? '', node]));
  for (const node of labelled) byName.set(node.metadata?.name ?? '', node);
  return [...byName.values()];
}

/** How many nodes drainbridge currently holds, from their ledgers (for the concurrency limit). */
export async function countNodesHeld(client: KubeClient): Promise<number> {
  return countHeldNodes(await listNodesMaybeHeld(client));
}
