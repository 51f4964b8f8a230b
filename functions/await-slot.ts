import { defineTask } from '../lib/lambda/task.ts';
import { awaitSlotTask } from '../lib/workflow/tasks/wait-steps.ts';

/** Evacuate: park the task token on the request's place in line (WaitForSlot, woken when a slot frees). */
export const handler = defineTask(awaitSlotTask);
