import { defineTask } from '../lib/lambda/task.ts';
import { restoreNovaTask } from '../lib/workflow/tasks/outcome-steps.ts';

/** Restore: abort drainbridge's migrations, re-enable nova-compute if the reason is still ours. */
export const handler = defineTask(restoreNovaTask);
