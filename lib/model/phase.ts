/**
 * The phases of a maintenance, after DrainSafe's states, in the order of a normal evacuation and
 * restore; `Failed` can follow any of them. Recorded on the node (annotation), in the Evacuation record
 * and in the outcome events — one list for all three.
 */
export const PHASES = [
  'MaintenanceScheduled',
  'NodeCordoning',
  'NodeCordoned',
  'NodeDraining',
  'NodeDrained',
  'MaintenanceStarted',
  'NodeRunning',
  'NodeUncordoned',
  'Failed',
] as const;
export type Phase = (typeof PHASES)[number];
