import { defineTask } from '../lib/lambda/task.ts';
import { normalizeAwsNoticeTask } from '../lib/sources/clouds/aws/normalize.ts';

/** AWS Health scheduled changes and Spot interruption warnings (default bus) → Maintenance Requested/Ended. */
export const handler = defineTask(normalizeAwsNoticeTask);
