/**
 * The Evacuate machine's wait for a slot (WaitForSlot, a `lambda:invoke.waitForTaskToken` Task): the
 * function parks the execution's task token on the request's place in line and returns; the execution
 * then sleeps, reading nothing, until the watch of `drainbridge run`/the forwarder sends the token back
 * as a slot frees (lib/admission/wake.ts), or the state's TimeoutSeconds pass. Admit decides again
 * either way: this step decides nothing.
 */
import { z } from 'zod';
import { parkWakeToken } from '../../admission/index.ts';
import type { TaskSpec } from '../../lambda/task.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';
import { TaskInput } from '../state.ts';

/** The task input plus the task token (Step Functions' are up to 2,048 characters). */
export const SlotWaitInput = TaskInput.extend({ taskToken: z.string().min(1).max(2048) });
export type SlotWaitInput = TaskInput & { readonly taskToken: string };

export interface SlotWait {
  /** Whether the token is on the request's place (false: only the fallback ends this wait). */
  readonly parked: boolean;
}

export const awaitSlotTask: TaskSpec<SlotWaitInput, SlotWait, WorkflowDeps> = {
  name: 'awaitSlot',
  input: SlotWaitInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    const at = { namespace: deps.config.namespace, now: tools.now() };
    const parked = await parkWakeToken(deps.kube, at, input.request.requestId, input.taskToken);
    if (!parked) tools.logger.info('no wake-up token parked: waiting for the fallback', { fallback: 'TimeoutSeconds' });
    return { parked };
  },
};
