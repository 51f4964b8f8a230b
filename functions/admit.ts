import { publishGateVerdictsOnLambda } from '../lib/lambda/gate-metrics.ts';
import { defineTask } from '../lib/lambda/task.ts';
import { admitTask } from '../lib/workflow/tasks/evacuate-steps.ts';

/** Evacuate: take a maintenance slot and this request's hold (cordon). */
export const handler = defineTask(admitTask);

// The health gates' verdicts as EMF metrics (GateOpen, GateEvaluationErrors by gate).
publishGateVerdictsOnLambda();
