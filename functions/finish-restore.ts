import { defineTask } from '../lib/lambda/task.ts';
import { finishRestoreTask } from '../lib/workflow/tasks/outcome-steps.ts';

/** Restore: publish Node Restored. */
export const handler = defineTask(finishRestoreTask);
