import { defineTask } from '../lib/lambda/task.ts';
import { resolveTargetTask } from '../lib/workflow/tasks/resolve-target.ts';

/** Evacuate/Restore step 1: validate the input and find the node. */
export const handler = defineTask(resolveTargetTask);
