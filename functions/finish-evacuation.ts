import { defineTask } from '../lib/lambda/task.ts';
import { finishEvacuationTask } from '../lib/workflow/tasks/outcome-steps.ts';

/** Evacuate: phase NodeDrained, publish Evacuation Succeeded. */
export const handler = defineTask(finishEvacuationTask);
