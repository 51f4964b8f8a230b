/**
 * serverless.yml's maintenance windows: the `events` of the openWindow function, one EventBridge
 * Scheduler schedule per window of the `maintenanceWindows` param (a JSON list, the same format as
 * DRAINBRIDGE_MAINTENANCE_WINDOWS for `drainbridge run`). Validation is lib/sources/windows/definition.ts's, so a
 * mistake fails `serverless package` naming the window and the field, not a deploy minutes later.
 */
'use strict';

module.exports.events = async ({ resolveVariable }) => {
  const { scheduleEvents } = await import('../lib/sources/windows/serverless.ts');
  const param = await resolveVariable('param:maintenanceWindows');
  const stage = await resolveVariable('sls:stage');
  return scheduleEvents(String(param ?? ''), String(stage));
};
