import { defineTask } from '../lib/lambda/task.ts';
import { restoreBranchesTask } from '../lib/workflow/tasks/outcome-steps.ts';

/** Restore: abort drainbridge's moves, then each branch undoes its prepare if the reason is still ours. */
export const handler = defineTask(restoreBranchesTask);
