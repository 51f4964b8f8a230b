/**
 * The events on drainbridge's bus: one zod schema per detail-type, each with its source. Strict for the
 * versions it knows (unknown fields are rejected); an unknown `version` is refused with a clear message.
 * Types are derived from the schemas, so the contract and the code cannot drift apart.
 */
import { z } from 'zod';
import { PHASES } from '../../model/phase.ts';
import { BLOCKER_CODES, BRANCHES } from '../../model/plan.ts';
import {
  CloudNotice,
  DrainOptionsInput,
  Instant,
  NodeName,
  NoticeRevision,
  Origin,
  Reason,
  Requester,
  RequestId,
  StartTimingInput,
  Target,
  WindowOccurrenceInput,
} from './fields.ts';

/** Event sources. `aws.*` is reserved by AWS, so ours are `drainbridge.*`. */
export const SOURCES = {
  /** Maintenance requests from any producer: forwarder, cloud notices, operators, schedule rules. */
  requests: 'drainbridge.requests',
  /** Node state changes seen in the cluster by the forwarder. */
  cluster: 'drainbridge.cluster',
  /** Outcomes published by the workflow. */
  workflow: 'drainbridge.workflow',
} as const;

export const DETAIL_TYPES = {
  maintenanceRequested: 'Maintenance Requested',
  maintenanceEnded: 'Maintenance Ended',
  nodeCordoned: 'Node Cordoned',
  nodeUncordoned: 'Node Uncordoned',
  evacuationProgress: 'Evacuation Progress',
  evacuationSucceeded: 'Evacuation Succeeded',
  evacuationFailed: 'Evacuation Failed',
  nodeRestored: 'Node Restored',
  admissionPaused: 'Admission Paused',
  admissionResumed: 'Admission Resumed',
} as const;
export type DetailType = (typeof DETAIL_TYPES)[keyof typeof DETAIL_TYPES];

/** Every event starts with these: the schema version, the idempotency key and who asked. */
const base = {
  version: z.literal('1'),
  requestId: RequestId,
  requester: Requester,
};

/**
 * Example:
 * { "version": "1", "requestId": "aws-health-1a2b", "requester": "aws.health", "origin": "aws",
 *   "target": { "instance": { "provider": "aws", "id": "i-0abc123" } }, "reason": "scheduled retirement",
 *   "notBefore": "2026-11-22T02:00:00Z", "deadline": "2026-11-22T06:00:00Z", "drain": { "ignoreDaemonSets": true } }
 */
export const MaintenanceRequested = z
  .strictObject({
    ...base,
    origin: Origin,
    target: Target,
    reason: Reason,
    notBefore: Instant.optional(),
    deadline: Instant.optional(),
    drain: DrainOptionsInput.optional(),
    /** Optional (added in 1 without a version change): the cloud notice this request came from. */
    notice: CloudNotice.optional(),
    /**
     * Optional (added in 1): the notice's revision. The same requestId with a later revision moves the
     * pending request's start (a rescheduled notice), it starts no second evacuation.
     */
    revision: NoticeRevision.optional(),
    /** Optional (added in 1): the maintenance window occurrence that asked (lib/sources/windows/). */
    window: WindowOccurrenceInput.optional(),
  })
  .superRefine((event, ctx) => {
    if (event.notBefore && event.deadline && Date.parse(event.deadline) <= Date.parse(event.notBefore)) {
      ctx.addIssue({ code: 'custom', path: ['deadline'], message: 'must be later than notBefore' });
    }
  });

/** Example: { "version": "1", "requestId": "aws-health-1a2b", "requester": "aws.health", "origin": "aws", "target": { "nodeName": "node-1" } } */
export const MaintenanceEnded = z.strictObject({
  ...base,
  origin: Origin,
  target: Target,
  reason: Reason.optional(),
  /** Optional: the cloud notice whose end this is (same fields as in the request). */
  notice: CloudNotice.optional(),
  /**
   * Optional (added in 1): the notice's source has been unreadable since then (its first unreadable
   * read). The request ends because the source stayed unreadable past the notice's end or the configured
   * limit, not because the notice is over: Restore says so on the node (a Warning Event), in the record
   * and in `drainbridge status`.
   */
  unreadableSince: Instant.optional(),
});

/**
 * Published by the forwarder when it sees `spec.unschedulable` turn true (not by drainbridge itself).
 * Example: { "version": "1", "requestId": "cordon:node-1:6f1c…:42", "requester": "kubectl", "target": { "nodeName": "node-1" }, "observedAt": "2026-11-21T10:00:00Z" }
 */
const nodeSeen = { ...base, target: Target, observedAt: Instant };

export const NodeCordoned = z.strictObject({
  ...nodeSeen,
  /**
   * Optional (added in 1 without a version change): drain options the forwarder was started with
   * (`drainbridge forwarder --ignore-daemonsets …`); unset ones follow the origin `cordon`
   * (lib/model/drain-defaults.ts).
   */
  drain: DrainOptionsInput.optional(),
});

/** Example: { "version": "1", "requestId": "cordon:node-1:6f1c…:42", "requester": "kubectl", "target": { "nodeName": "node-1" }, "observedAt": "2026-11-21T11:00:00Z" } */
export const NodeUncordoned = z.strictObject(nodeSeen);

const BranchProgress = z.strictObject({
  total: z.number().int().min(0),
  moved: z.number().int().min(0),
  inFlight: z.number().int().min(0),
  skipped: z.number().int().min(0),
});

const Blocker = z.strictObject({
  code: z.enum(BLOCKER_CODES),
  reason: z.string(),
  item: z
    .strictObject({ kind: z.enum(['Pod', 'Server', 'VirtualMachineInstance']), uid: z.string(), name: z.string() })
    .optional(),
});

const outcomeBase = {
  ...base,
  target: Target,
  nodeName: NodeName,
  /** The Step Functions execution (or embedded run) that published it. */
  executionId: z.string().max(2048).optional(),
};

export { PHASES, type Phase } from '../../model/phase.ts';

/** One KubeVirt VM's move: its migration, phase, source → target and how long it has taken. */
const VmMove = z.strictObject({
  name: z.string(),
  status: z.string(),
  attempts: z.number().int().min(0),
  migration: z.string().optional(),
  phase: z.string().optional(),
  sourceNode: z.string(),
  targetNode: z.string().optional(),
  elapsedSeconds: z.number().min(0).optional(),
});

/**
 * Published at phase changes, and when a KubeVirt migration starts, ends or fails (with `vms`: every VM
 * of the node and where its move stands).
 * `MaintenanceScheduled` (a request with notBefore, before it waits) carries `timing`: when the evacuation
 * starts and on what estimate; `timing.late` is the warning that it will likely not finish before notBefore.
 */
export const EvacuationProgress = z.strictObject({
  ...outcomeBase,
  phase: z.enum(PHASES),
  progress: z.partialRecord(z.enum(BRANCHES), BranchProgress),
  blockers: z.array(Blocker),
  /** Optional (added in 1 without a version change): the start time and its estimate. */
  timing: StartTimingInput.optional(),
  vms: z.array(VmMove).optional(),
});

export const EvacuationSucceeded = z.strictObject({
  ...outcomeBase,
  progress: z.partialRecord(z.enum(BRANCHES), BranchProgress),
  durationSeconds: z.number().min(0),
});

export const EvacuationFailed = z.strictObject({
  ...outcomeBase,
  phase: z.enum(PHASES),
  error: z.strictObject({ name: z.string(), message: z.string() }),
  blockers: z.array(Blocker),
});

export const NodeRestored = z.strictObject({
  ...outcomeBase,
  /** False when other holds remain: the node stays cordoned for them. */
  lastHold: z.boolean(),
  uncordoned: z.boolean(),
  novaServiceEnabled: z.boolean(),
  /** Things drainbridge left alone because someone else changed them, e.g. a nova-compute disabled by another reason. */
  leftAlone: z.array(z.string()),
});

/**
 * The circuit breaker tripped (lib/admission/breaker.ts): no new node is admitted until
 * `drainbridge resume`. Published by the evacuation whose failure tripped it (its request, node and
 * requester); `failures` are the evacuations counted, oldest first.
 */
export const AdmissionPaused = z.strictObject({
  ...outcomeBase,
  pausedAt: Instant,
  reason: z.string(),
  failures: z.array(z.strictObject({ requestId: RequestId, nodeName: NodeName, error: z.string(), at: Instant })),
});

/**
 * `drainbridge resume` closed the circuit breaker again: admission admits nodes, the requests waiting in
 * line first. `requestId` names this resume (`admission-resumed.<epoch ms>`), `requester` who ran it;
 * `reason` is why admission had been paused. Published by the command itself (docs/safety.md).
 * Example: { "version": "1", "requestId": "admission-resumed.1795860000000", "requester": "alice@host",
 *   "resumedAt": "2026-11-28T12:40:00Z", "pausedAt": "2026-11-28T12:00:00Z", "reason": "2 evacuations failed within 1d: …" }
 */
export const AdmissionResumed = z.strictObject({
  ...base,
  resumedAt: Instant,
  pausedAt: Instant.optional(),
  reason: z.string(),
});

export type MaintenanceRequestedEvent = z.infer<typeof MaintenanceRequested>;
export type MaintenanceEndedEvent = z.infer<typeof MaintenanceEnded>;
export type NodeCordonedEvent = z.infer<typeof NodeCordoned>;
export type NodeUncordonedEvent = z.infer<typeof NodeUncordoned>;
export type EvacuationProgressEvent = z.infer<typeof EvacuationProgress>;
export type EvacuationSucceededEvent = z.infer<typeof EvacuationSucceeded>;
export type EvacuationFailedEvent = z.infer<typeof EvacuationFailed>;
export type NodeRestoredEvent = z.infer<typeof NodeRestored>;
export type AdmissionPausedEvent = z.infer<typeof AdmissionPaused>;
export type AdmissionResumedEvent = z.infer<typeof AdmissionResumed>;

/** Each contract with its source and the versions this build understands. */
export const CONTRACTS = {
  [DETAIL_TYPES.maintenanceRequested]: { source: SOURCES.requests, schema: MaintenanceRequested },
  [DETAIL_TYPES.maintenanceEnded]: { source: SOURCES.requests, schema: MaintenanceEnded },
  [DETAIL_TYPES.nodeCordoned]: { source: SOURCES.cluster, schema: NodeCordoned },
  [DETAIL_TYPES.nodeUncordoned]: { source: SOURCES.cluster, schema: NodeUncordoned },
  [DETAIL_TYPES.evacuationProgress]: { source: SOURCES.workflow, schema: EvacuationProgress },
  [DETAIL_TYPES.evacuationSucceeded]: { source: SOURCES.workflow, schema: EvacuationSucceeded },
  [DETAIL_TYPES.evacuationFailed]: { source: SOURCES.workflow, schema: EvacuationFailed },
  [DETAIL_TYPES.nodeRestored]: { source: SOURCES.workflow, schema: NodeRestored },
  [DETAIL_TYPES.admissionPaused]: { source: SOURCES.workflow, schema: AdmissionPaused },
  [DETAIL_TYPES.admissionResumed]: { source: SOURCES.workflow, schema: AdmissionResumed },
} as const satisfies Record<DetailType, { source: string; schema: z.ZodType }>;

export const KNOWN_VERSIONS = ['1'] as const;

export interface DetailByType {
  'Maintenance Requested': MaintenanceRequestedEvent;
  'Maintenance Ended': MaintenanceEndedEvent;
  'Node Cordoned': NodeCordonedEvent;
  'Node Uncordoned': NodeUncordonedEvent;
  'Evacuation Progress': EvacuationProgressEvent;
  'Evacuation Succeeded': EvacuationSucceededEvent;
  'Evacuation Failed': EvacuationFailedEvent;
  'Node Restored': NodeRestoredEvent;
  'Admission Paused': AdmissionPausedEvent;
  'Admission Resumed': AdmissionResumedEvent;
}
