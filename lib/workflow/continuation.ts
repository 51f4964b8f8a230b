/**
 * Continue-as-new: an Evacuate execution that nears Step Functions' 25,000-event history limit starts a
 * fresh execution of the same state machine with its own input plus `continuedFrom` (the ContinueAsNew
 * state of state-machines/evacuate.asl.yml merges it in), hands over its ownership claim and ends. The new
 * execution keeps the chain's start — so the request's deadline and the maximum evacuation time count
 * from the first execution — and takes the request over from its predecessor at once (ownership.ts).
 * Pure: the schema and the split of an execution's input.
 */
import { z } from 'zod';
import { problemsOf } from '../bus/contracts/parse.ts';
import { InvalidInput } from '../errors/index.ts';

/** The key the ContinueAsNew state adds to the execution's input. */
export const CONTINUED_FROM = 'continuedFrom';

export const ContinuedFrom = z.strictObject({
  /** The execution that continued as this one (it owned the request). */
  executionId: z.string().min(1).max(2048),
  /** When the chain's first execution started the evacuation (ISO 8601). */
  startedAt: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 instant' }),
  /** 1 for the first continuation, counting up. */
  generation: z.number().int().min(1).max(100_000),
});
export type ContinuedFrom = z.infer<typeof ContinuedFrom>;

/** Where an execution stands in its request's chain (carried in the state as `chain`). */
export interface Chain {
  readonly generation: number;
  readonly previousExecutionId?: string;
}

export const ChainSchema = z.strictObject({
  generation: z.number().int().min(0).max(100_000),
  previousExecutionId: z.string().min(1).max(2048).optional(),
});

/** An execution's input without `continuedFrom`, and `continuedFrom` checked (InvalidInput names the field). */
export function splitContinuation(
  machine: 'evacuate' | 'restore',
  input: unknown,
): { event: unknown; continuedFrom?: ContinuedFrom } {
  if (typeof input !== 'object' || input === null || !(CONTINUED_FROM in input)) return { event: input };
  const { [CONTINUED_FROM]: raw, ...event } = input as Record<string, unknown>;
  if (machine !== 'evacuate') {
    throw new InvalidInput(`invalid input to ${machine}`, [
      { path: CONTINUED_FROM, message: 'only an Evacuate execution continues as new' },
    ]);
  }
  const parsed = ContinuedFrom.safeParse(raw);
  if (!parsed.success) throw new InvalidInput(`invalid input to ${machine}`, problemsOf(parsed.error, CONTINUED_FROM));
  return { event, continuedFrom: parsed.data };
}

/** The chain of an execution that started with `continuedFrom` (or none). */
export function chainOf(continuedFrom: ContinuedFrom | undefined): Chain {
  return continuedFrom
    ? { generation: continuedFrom.generation, previousExecutionId: continuedFrom.executionId }
    : { generation: 0 };
}
