import { defineTask } from '../lib/lambda/task.ts';
import { passTask } from '../lib/workflow/tasks/evacuate-steps.ts';

/** Evacuate: one reconcile pass of a branch of the registry; NotYetDone when nothing changed. */
export const handler = defineTask(passTask);
