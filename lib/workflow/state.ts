/**
 * The document the state machines pass from task to task, and its schema: every task validates its
 * input against it at the edge (a hand-edited execution input is refused with the field named).
 */
import { z } from 'zod';
import {
  DrainOptionsInput,
  Instant,
  NodeName,
  NoticeRevision,
  Origin,
  Reason,
  Requester,
  RequestId,
  Target,
  WindowOccurrenceInput,
} from '../bus/contracts/fields.ts';
import { BRANCHES } from '../model/plan.ts';
import { KUBECTL_DRAIN_DEFAULTS, type ResolvedRequest } from '../model/request.ts';
import { acceptRequest } from './accept.ts';
import { type Chain, ChainSchema, splitContinuation } from './continuation.ts';

const DrainOptions = DrainOptionsInput.required();

export const ResolvedRequestSchema = z.strictObject({
  requestId: RequestId,
  requester: Requester,
  origin: Origin,
  target: Target,
  reason: Reason,
  notBefore: Instant.optional(),
  deadline: Instant.optional(),
  drain: DrainOptions,
  nodeName: NodeName,
  window: WindowOccurrenceInput.optional(),
  revision: NoticeRevision.optional(),
  unreadableSince: Instant.optional(),
});

/** What every task after ResolveTarget receives; `chain` (Admit's) says which execution this one continues. */
export const TaskInput = z.strictObject({
  request: ResolvedRequestSchema,
  executionId: z.string().min(1).max(2048),
  startedAt: z.string().min(1),
  chain: ChainSchema.optional(),
});
export type TaskInput = {
  readonly request: ResolvedRequest;
  readonly executionId: string;
  readonly startedAt: string;
  readonly chain?: Chain;
};

/**
 * A pass loop's count of the execution's history events so far (an upper bound the state machine keeps
 * with intrinsic functions) and where it should leave to continue as new.
 */
export const HistoryBudget = z.strictObject({
  events: z.number().int().min(0),
  limit: z.number().int().min(0),
});
export type HistoryBudget = z.infer<typeof HistoryBudget>;

/** A branch pass's input: the task input plus which branch to run (and, in the state machine, its history budget). */
export const PassTaskInput = TaskInput.extend({ branch: z.enum(BRANCHES), history: HistoryBudget.optional() });
export type PassTaskInput = TaskInput & {
  readonly branch: (typeof BRANCHES)[number];
  readonly history?: HistoryBudget;
};

/**
 * ResolveTarget's input: the execution's input as it arrived, and the execution's identity. The
 * execution's input is checked against the bus contracts here, at the edge, before any client is built;
 * a refusal is the contract's own InvalidInput (naming e.g. `detail.target`).
 */
export const ResolveInput = z
  .strictObject({
    machine: z.enum(['evacuate', 'restore']),
    input: z.unknown(),
    executionId: z.string().min(1).max(2048),
    startedAt: z.string().min(1),
  })
  .superRefine((value) => {
    acceptRequest(value.machine, splitContinuation(value.machine, value.input).event, KUBECTL_DRAIN_DEFAULTS);
  });
export type ResolveInput = z.infer<typeof ResolveInput>;
