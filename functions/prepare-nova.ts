import { defineTask } from '../lib/lambda/task.ts';
import { prepareNovaTask } from '../lib/workflow/tasks/evacuate-steps.ts';

/** Evacuate: disable the host's nova-compute service (no-op without Nova). */
export const handler = defineTask(prepareNovaTask);
