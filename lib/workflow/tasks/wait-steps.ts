/**
 * The Evacuate machine's wait for a slot (WaitForSlot, a `lambda:invoke.waitForTaskToken` Task): the
 * function parks the execution's task token on the request's place in line and returns; the execution
 * then sleeps, reading nothing, until the watch of `drainbridge run`/the forwarder sends the token back
 * as a slot frees (lib/admission/wake.ts), or the state's TimeoutSeconds pass. Admit decides again
 * either way: this step decides nothing.
 */
import { z } from 'zod';
import { parkWakeToken } from '../../admission/index.ts';
import { TokenNotParked } from '../../errors/index.ts';
import type { TaskSpec } from '../../lambda/task.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';
import { TaskInput } from '../state.ts';

/**
 * The task input plus the task token (Step Functions' are up to 2,048 characters). `longWait`: the state
 * is WaitInLine (a minute's fallback), which a token not written cuts short (TokenNotParked).
 */
export const SlotWaitInput = TaskInput.extend({
  taskToken: z.string().min(1).max(2048),
  longWait: z.boolean().optional(),
});
export type SlotWaitInput = TaskInput & { readonly taskToken: string; readonly longWait?: boolean };

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
    const outcome = await parkWakeToken(deps.kube, at, input.request.requestId, input.taskToken);
    if (outcome === 'not-written' && input.longWait) {
      throw new TokenNotParked(
        `request ${input.request.requestId}: its wake-up token could not be parked (no place on the Lease yet, or the admission lock was held); waiting 10 s instead of a minute`,
      );
    }
    if (outcome !== 'parked') {
      tools.logger.info('no wake-up token parked: waiting for the fallback', { fallback: 'TimeoutSeconds', outcome });
    }
    return { parked: outcome === 'parked' };
  },
};
