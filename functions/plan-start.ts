import { defineTask } from '../lib/lambda/task.ts';
import { planStartTask } from '../lib/workflow/tasks/start-steps.ts';

/** Evacuate, a request with notBefore: when to start (notBefore − estimate − margin), on an estimate of the node's evacuation. */
export const handler = defineTask(planStartTask);
