/**
 * The closing words of `drainbridge evacuate` and its exit status, from how the execution ended and the
 * outcome events it published. The node's state is read from the cluster by the caller, never assumed
 * (a deadline that passed before the node was touched leaves it untouched, and says so). Pure.
 */
import { EXIT, type ExitCode } from '../exit-codes.ts';
import type { NodeState } from '../node-state.ts';
import type { RecordedOutcomes } from '../output/index.ts';
import type { MachineOutcome } from '../run-machine.ts';

export interface EndWords {
  readonly exit: ExitCode;
  readonly lines: readonly string[];
}

interface Known {
  /** The node's state, read after the end (cli/node-state.ts). */
  readonly state: NodeState;
  /** The command that ends the maintenance (restore). */
  readonly restore: string;
}

/** `$.error` as a Catch leaves it in the execution's output: `{ Error, Cause }`. */
function caughtError(output: unknown): { name: string; cause: string } | undefined {
  const error = (output as { error?: { Error?: unknown; Cause?: unknown } } | undefined)?.error;
  if (!error || typeof error.Error !== 'string') return undefined;
  return { name: error.Error, cause: causeText(error.Cause) };
}

/** A Cause is the error's message, or (on AWS) JSON carrying `errorMessage`. */
function causeText(cause: unknown): string {
  if (typeof cause !== 'string') return '';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // a plain message
  }
  return cause;
}

function skipped(cause: string, known: Known): EndWords {
  if (/\(NodeDrained\)/.test(cause)) {
    return { exit: EXIT.ok, lines: [`nothing to do: ${cause}.`, `${capitalise(known.state.sentence)}.`] };
  }
  return {
    exit: EXIT.refused,
    lines: [
      `drainbridge evacuate: refused: ${cause}. Nothing was done now.`,
      `${capitalise(known.state.sentence)}.`,
      'To evacuate again, use a new --request-id.',
    ],
  };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function failureReason(error: Error, recorded: RecordedOutcomes): string {
  const published = recorded.get('Evacuation Failed')?.error as { name?: string; message?: string } | undefined;
  if (published?.message) return `${published.name}: ${published.message}`;
  return `${error.name}: ${causeText(error.message)}`;
}

function failed(error: Error, recorded: RecordedOutcomes, known: Known): EndWords {
  const reason = failureReason(error, recorded);
  // Refused at the first step (a request id that names another node): nothing was written.
  if (error.name === 'SkipEvent') return skipped(causeText(error.message), known);
  if (error.name === 'TargetNotFound' || error.name === 'InvalidInput') {
    return { exit: EXIT.usage, lines: [`drainbridge evacuate: ${causeText(error.message)}; nothing was changed.`] };
  }
  if (error.name === 'EvacuationCancelled') {
    return {
      exit: EXIT.failed,
      lines: [
        `drainbridge evacuate: stopped: the request was restored while it ran.`,
        `${capitalise(known.state.sentence)}.`,
      ],
    };
  }
  const held = known.state.heldByRequest;
  return {
    exit: EXIT.failed,
    lines: [
      `drainbridge evacuate: the evacuation failed: ${reason}`,
      `${capitalise(known.state.sentence)}.`,
      ...(held ? [`To end the maintenance: ${known.restore}`] : []),
    ],
  };
}

export function explainEvacuationEnd(outcome: MachineOutcome, recorded: RecordedOutcomes, known: Known): EndWords {
  switch (outcome.kind) {
    case 'not-started':
      return { exit: EXIT.failed, lines: ['drainbridge evacuate: no evacuation was started (no bus rule matched)'] };
    case 'interrupted':
      return { exit: EXIT.interrupted, lines: [] };
    case 'failed':
      return failed(outcome.error, recorded, known);
    case 'succeeded': {
      const skip = caughtError(outcome.output);
      if (skip?.name === 'SkipEvent') return skipped(skip.cause, known);
      return {
        exit: EXIT.ok,
        lines: [`evacuated: ${known.state.sentence}.`, `When the maintenance is over: ${known.restore}`],
      };
    }
  }
}
