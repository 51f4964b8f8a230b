/** Turns a validated `Maintenance Requested` detail into the domain's MaintenanceRequest. */
import { resolveDrainOptions } from '../../model/drain-defaults.ts';
import type { DrainOptions, MaintenanceRequest, Target } from '../../model/request.ts';
import type { MaintenanceRequestedEvent } from './contracts.ts';

function toTarget(target: MaintenanceRequestedEvent['target']): Target {
  if (target.nodeName !== undefined) return { nodeName: target.nodeName };
  if (target.providerID !== undefined) return { providerID: target.providerID };
  // The schema guarantees exactly one key is set.
  return { instance: target.instance as { provider: 'aws' | 'azure' | 'gcp' | 'openstack'; id: string } };
}

/**
 * `operatorDrain`: the drain options the operator set for every request (lib/config `drainDefaults`); the
 * event's own `drain` wins over them, and they over the origin's defaults (lib/model/drain-defaults.ts).
 */
export function toMaintenanceRequest(
  event: MaintenanceRequestedEvent,
  operatorDrain: Partial<DrainOptions>,
): MaintenanceRequest {
  return {
    requestId: event.requestId,
    requester: event.requester,
    origin: event.origin,
    target: toTarget(event.target),
    reason: event.reason,
    ...(event.notBefore ? { notBefore: event.notBefore } : {}),
    ...(event.deadline ? { deadline: event.deadline } : {}),
    drain: resolveDrainOptions(event.origin, operatorDrain, event.drain),
    ...(event.window ? { window: { ...event.window } } : {}),
    ...(event.revision ? { revision: { ...event.revision } } : {}),
  };
}
