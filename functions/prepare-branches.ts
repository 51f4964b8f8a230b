import { defineTask } from '../lib/lambda/task.ts';
import { prepareBranchesTask } from '../lib/workflow/tasks/evacuate-steps.ts';

/** Evacuate: each branch's step before the passes (Nova disables the host's nova-compute service). */
export const handler = defineTask(prepareBranchesTask);
