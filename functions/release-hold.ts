import { defineTask } from '../lib/lambda/task.ts';
import { releaseHoldTask } from '../lib/workflow/tasks/outcome-steps.ts';

/** Restore: release this request's hold; uncordon per the ledger when it was the last. */
export const handler = defineTask(releaseHoldTask);
