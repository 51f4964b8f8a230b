/**
 * What a restarted `drainbridge run` picks up, decided from each Evacuation record and its node. Pure.
 *
 *  - a Restore that started and did not finish → run it again (every Restore step is idempotent);
 *  - an evacuation that holds its node and has not ended (phase not NodeDrained/Failed) → run it again
 *    with the same requestId: admission finds the request's own hold (no second slot), the pod and Nova
 *    branches resume from the record's state (nothing evicted or migrated twice).
 *  - a request with notBefore still waiting for its start (phase MaintenanceScheduled, no hold, no
 *    tombstone) → run it again with the same notBefore: it plans its start again and waits.
 *  - a request that waited for a slot (no phase, no hold, no tombstone, no end) — a cordon's, a window's,
 *    a NodeMaintenance's, a cloud notice's → run it again: it waits again, or admission ends it (withdrawn,
 *    not started) on its record. A CLI user's request is its own process's to drive.
 * Requests that never reached a record are derived again by their sources (the forwarder, the agents).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { MaintenanceEndedEvent, MaintenanceRequestedEvent } from '../bus/contracts/contracts.ts';
import { DrainOptionsInput } from '../bus/contracts/fields.ts';
import type { EvacuationObject } from '../clients/kube/paths.ts';
import { ORIGINS, type Origin } from '../model/request.ts';
import { type Ledger, ledgerOf } from '../node/ledger.ts';

export type ResumeDecision =
  | { readonly action: 'evacuate'; readonly detail: MaintenanceRequestedEvent }
  | { readonly action: 'restore'; readonly detail: MaintenanceEndedEvent }
  | { readonly action: 'none'; readonly why: string };

const ENDED_PHASES: ReadonlySet<string> = new Set(['NodeDrained', 'Failed']);

function originOf(text: string | undefined): Origin {
  return (ORIGINS as readonly string[]).includes(text ?? '') ? (text as Origin) : 'manual';
}

function base(record: EvacuationObject) {
  return {
    version: '1' as const,
    requestId: record.spec.requestId,
    requester: record.spec.requester || 'drainbridge run (resumed)',
    origin: originOf(record.spec.origin),
    target: { nodeName: record.spec.nodeName },
  };
}

export function planResume(record: EvacuationObject, node: V1Node | undefined): ResumeDecision {
  const requestId = record.spec?.requestId;
  if (!requestId || !record.spec.nodeName) return { action: 'none', why: 'record without a request or node' };
  if (!node) return { action: 'none', why: `node ${record.spec.nodeName} no longer exists` };
  const restore = record.status?.restore;
  if (restore?.startedAt && !restore.finishedAt) {
    return { action: 'restore', detail: { ...base(record), reason: 'resumed after a restart of drainbridge run' } };
  }
  const read = ledgerOf(node);
  // Unreadable: nothing is resumed on the node (it stays as it is, cordoned if it was) until repaired.
  if (read.status === 'unreadable')
    return { action: 'none', why: `${read.reason}; drainbridge repair ${record.spec.nodeName}` };
  const ledger = read.ledger;
  if (isWaitingForStart(record, ledger) || isWaitingForSlot(record, ledger)) return resumeEvacuation(record);
  if (!Object.hasOwn(ledger.holds, requestId)) return { action: 'none', why: 'the request does not hold its node' };
  const phase = record.status?.phase ?? '';
  if (ENDED_PHASES.has(phase)) return { action: 'none', why: `the evacuation ended (${phase})` };
  return resumeEvacuation(record);
}

/** Waiting for its start (PlanStart recorded it), not yet admitted, and not ended meanwhile. */
function isWaitingForStart(record: EvacuationObject, ledger: Ledger): boolean {
  const { requestId } = record.spec;
  return (
    record.status?.phase === 'MaintenanceScheduled' &&
    record.spec.notBefore !== undefined &&
    !Object.hasOwn(ledger.holds, requestId) &&
    !Object.hasOwn(ledger.released, requestId)
  );
}

/**
 * A cordon's or a window's request that waited for a slot (a record, never admitted, never ended): run
 * again, it waits in line again, or admission ends it — withdrawn when the cordon was lifted meanwhile, not
 * started when its window closed (the record keeps the window) — where left alone after a restart of run
 * its record would show it waiting for ever: nothing derives such a request again. A window request whose
 * record has no window (written before it was kept) is not resumed: run without it, it could start late.
 */
function isWaitingForSlot(record: EvacuationObject, ledger: Ledger): boolean {
  const { requestId } = record.spec;
  const status = record.status;
  // Every origin whose source will not ask again: a NodeMaintenance's and a cloud notice's source see the
  // record and take the request as out (lib/sources/node-maintenance/decide.ts; the node agent's tracker),
  // so left alone after a failover it waited for ever (60-minute soak, seed 342527). Not `manual`: the
  // CLI that asked drives its own execution, and `serverless invoke` is AWS's.
  const origin = record.spec.origin;
  const resumable = (origin !== 'manual' && origin !== 'schedule') || (origin === 'schedule' && record.spec.window);
  return (
    Boolean(resumable) &&
    record.spec.notBefore === undefined &&
    status?.phase === undefined &&
    status?.endedAt === undefined &&
    status?.restore === undefined &&
    !Object.hasOwn(ledger.holds, requestId) &&
    !Object.hasOwn(ledger.released, requestId)
  );
}

function resumeEvacuation(record: EvacuationObject): ResumeDecision {
  const drain = DrainOptionsInput.safeParse(record.spec.drain ?? {});
  return {
    action: 'evacuate',
    detail: {
      ...base(record),
      reason: record.spec.reason || 'resumed after a restart of drainbridge run',
      ...(drain.success ? { drain: drain.data } : {}),
      ...(record.spec.notBefore ? { notBefore: record.spec.notBefore } : {}),
      ...(record.spec.deadline ? { deadline: record.spec.deadline } : {}),
      ...(record.spec.window ? { window: record.spec.window } : {}),
      // The notice's current revision: resumed, the request is the live one, not one superseded.
      ...(record.spec.revision ? { revision: record.spec.revision } : {}),
    },
  };
}
