import { defineTask } from '../lib/lambda/task.ts';
import { openWindowTask } from '../lib/workflow/tasks/window-steps.ts';

/** A maintenance window's schedule fired: one Maintenance Requested per node its selector matches. */
export const handler = defineTask(openWindowTask);
