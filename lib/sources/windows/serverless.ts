/**
 * The windows as serverless.yml declares them: one `schedule` event (EventBridge Scheduler, with
 * `ScheduleExpressionTimezone`) per window on the openWindow function, whose input carries the window
 * and Scheduler's `<aws.scheduler.scheduled-time>`. Used by scripts/serverless-windows.cjs at
 * `serverless package` time. Pure.
 */
import { parseWindows, type WindowDefinition } from './definition.ts';

/** The schedule event of one window, as osls's `schedule` event with `method: scheduler` takes it. */
export function scheduleEventOf(window: WindowDefinition, stage: string) {
  return {
    schedule: {
      method: 'scheduler',
      name: `drainbridge-window-${window.name}-${stage}`.slice(0, 64),
      description: `drainbridge maintenance window ${window.name}: ${window.durationMinutes} min, nodes ${window.nodeSelector || '(all)'}, ${window.maxNodes} at a time, ends on ${window.endsOn}`,
      rate: [window.schedule],
      timezone: window.timezone,
      enabled: window.enabled,
      input: { window, scheduledTime: '<aws.scheduler.scheduled-time>' },
    },
  };
}

/** The `events` of the openWindow function for the `maintenanceWindows` param (JSON; "" is none). */
export function scheduleEvents(param: string, stage: string) {
  return parseWindows(param, 'param maintenanceWindows').map((window) => scheduleEventOf(window, stage));
}
