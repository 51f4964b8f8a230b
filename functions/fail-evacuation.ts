import { defineTask } from '../lib/lambda/task.ts';
import { failEvacuationTask } from '../lib/workflow/tasks/outcome-steps.ts';

/** Evacuate: record the failure, publish Evacuation Failed; the safe state is kept. */
export const handler = defineTask(failEvacuationTask);
