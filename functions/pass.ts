import { defineTask } from '../lib/lambda/task.ts';
import { passTask } from '../lib/workflow/tasks/evacuate-steps.ts';

/** Evacuate: one reconcile pass of a branch (pods, nova, infra-pods); NotYetDone when nothing changed. */
export const handler = defineTask(passTask);
