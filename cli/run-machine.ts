/**
 * Runs one request through the embedded runtime for a command, until it ends or the person stops it.
 * On SIGINT/SIGTERM: no new step starts, the step running finishes (a step is never cut in half), and
 * the request's owner mark is handed back, so the same command run again resumes at once. A request
 * whose execution continues as new ones (long evacuations) is followed to the last.
 */
import type { EmbeddedRuntime, TrackedExecution } from '../embedded/runtime.ts';
import { leaveQueue } from '../lib/admission/index.ts';
import type { KubeClient } from '../lib/clients/kube/client.ts';
import { releaseOwnership } from '../lib/workflow/ownership.ts';
import { afterInterrupt } from './after-interrupt.ts';
import type { CommandContext } from './command.ts';

export type MachineOutcome =
  | { readonly kind: 'succeeded'; readonly output: unknown }
  | { readonly kind: 'failed'; readonly error: Error }
  | { readonly kind: 'interrupted'; readonly signal: NodeJS.Signals; readonly handedBack: boolean }
  | { readonly kind: 'not-started' };

export interface MachineRequest {
  readonly runtime: EmbeddedRuntime;
  readonly client: KubeClient;
  readonly requestId: string;
  /** Where the admission Lease (and its waiting queue) lives. */
  readonly namespace: string;
  /** Puts the request on the bus (the rules start the execution). */
  put(): Promise<void>;
  /** The execution the request started. */
  find(): TrackedExecution | undefined;
}

function interruption(context: CommandContext): { signal: Promise<NodeJS.Signals>; release: () => void } {
  let release: () => void = () => {};
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    release = context.onInterrupt(resolve);
  });
  return { signal, release };
}

/**
 * Stops at a safe point and hands the request back: its owner mark (so a re-run claims it at once) and
 * its place in the admission queue (so requests behind it do not wait for the entry to expire), each
 * riding out a transient API fault for a while (cli/after-interrupt.ts). False when either could not be
 * removed; both then expire on their own, and the caller says so.
 */
async function stopAndHandBack(request: MachineRequest): Promise<boolean> {
  await request.runtime.stopAtSafePoint();
  // Every execution of the request in this process (a long one continues as new ones): only the one
  // that holds the mark has it removed.
  const executions = request.runtime.executionsFor(request.requestId);
  try {
    for (const execution of executions) {
      await afterInterrupt(() => releaseOwnership(request.client, request.requestId, execution.id));
    }
    await afterInterrupt(() => leaveQueue(request.client, request.namespace, request.requestId, new Date()));
    return true;
  } catch {
    return false;
  }
}

/**
 * The error a Fail state ended with: the interpreter wraps it (ExecutionError, cause: the state's
 * error, named by its `Error` and carrying its `Cause`).
 */
function failureOf(error: Error): Error {
  return error.name === 'ExecutionError' && error.cause instanceof Error ? error.cause : error;
}

export async function runMachine(request: MachineRequest, context: CommandContext): Promise<MachineOutcome> {
  const stop = interruption(context);
  try {
    const stopped = stop.signal.then((signal) => ({ signal }));
    const put = await Promise.race([request.put().then(() => undefined), stopped]);
    const execution = request.find();
    if (put?.signal) return { kind: 'interrupted', signal: put.signal, handedBack: await stopAndHandBack(request) };
    if (!execution) return { kind: 'not-started' };
    // A long evacuation continues as new executions: the chain's last outcome is the request's.
    const chain = request.runtime.chainOf(execution).then((c) => c.outcome);
    const ended = await Promise.race([chain, stopped]);
    if ('signal' in ended) {
      return { kind: 'interrupted', signal: ended.signal, handedBack: await stopAndHandBack(request) };
    }
    return ended.ok ? { kind: 'succeeded', output: ended.output } : { kind: 'failed', error: failureOf(ended.error) };
  } finally {
    stop.release();
    request.runtime.stop();
  }
}
