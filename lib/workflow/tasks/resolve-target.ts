/**
 * Step 1 of both machines: validate the input (pure), find the node and check the request id names no
 * other node (reads). Changes nothing.
 */

import type { TaskSpec } from '../../lambda/task.ts';
import { resolveNode } from '../../node/resolve.ts';
import { acceptRequest } from '../accept.ts';
import { chainOf, splitContinuation } from '../continuation.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';
import { refuseReusedRequestId } from '../request-node.ts';
import { ResolveInput, type TaskInput } from '../state.ts';

export const resolveTargetTask: TaskSpec<ResolveInput, TaskInput, WorkflowDeps> = {
  name: 'resolveTarget',
  input: ResolveInput,
  deps: depsFromEnvironment,
  run: async (input, deps, { logger, now }) => {
    const { event, continuedFrom } = splitContinuation(input.machine, input.input);
    const request = acceptRequest(input.machine, event, deps.config.drainDefaults);
    const nodeName = await resolveNode(deps.kube, request.target);
    await refuseReusedRequestId(deps.kube, request.requestId, nodeName);
    const chain = chainOf(continuedFrom);
    logger.info('request accepted', { requestId: request.requestId, node: nodeName, origin: request.origin, ...chain });
    // The evacuation starts now; a request with notBefore starts when PlanStart says, which sets startedAt
    // again. The maximum evacuation time counts from there. Read from the tasks' clock rather than
    // $$.Execution.StartTime so that deadlines and durations use one clock (they differ where the embedded
    // runtime runs on a simulated clock). A continued execution keeps the chain's start: the deadline
    // applies across the chain.
    const startsAt = now().getTime();
    return {
      request: { ...request, nodeName },
      executionId: input.executionId,
      startedAt: continuedFrom?.startedAt ?? new Date(startsAt).toISOString(),
      chain,
    };
  },
};
