/**
 * Everything that changes a node: maintenance holds (the ownership ledger), the phase annotation,
 * node Events, out-of-band uncordon reports, and resolving a request's target to a node.
 *
 * The workflow calls: `resolveNode` → `acquireHold` (alias `cordon`) → passes → `releaseHold`, with
 * `setPhase` at transitions and `countNodesHeld` for its concurrency limit.
 */

export {
  acquireHold,
  checkOutOfBandUncordon,
  cordon,
  countNodesHeld,
  type HoldResult,
  listNodesMaybeHeld,
  type ReleaseResult,
  readNodeOrFail,
  releaseHold,
  setPhase,
} from './hold.ts';
export { buildNodeEvent, EVENT_REASONS, type EventReason, emitNodeEvent } from './kube-events.ts';
export {
  COMPATIBILITY_TAINTS,
  type CompatibilityTaint,
  countHeldNodes,
  DEFAULT_LEDGER_SETTINGS,
  DEFAULT_TOMBSTONE_SECONDS,
  HOLD_ANNOTATIONS,
  type Hold,
  type HoldRequest,
  isHeld,
  isUncordonedOutOfBand,
  LEDGER_ANNOTATION,
  type Ledger,
  type LedgerSettings,
  ledgerOf,
  planHold,
  planRelease,
  type Restored,
  readLedger,
} from './ledger.ts';
export { NODE_PHASES, type NodePhase, PHASE_ANNOTATION, planPhase, readPhase } from './phase.ts';
export { matchTarget, providerIdMatches, resolveNode } from './resolve.ts';
