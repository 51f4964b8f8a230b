/** Turns a validated `Maintenance Requested` detail into the domain's MaintenanceRequest. */
import type { DrainOptions, MaintenanceRequest, Target } from '../domain/request.ts';
import type { MaintenanceRequestedEvent } from './contracts.ts';

/** Options given in the request win over the configured defaults, field by field. */
export function mergeDrainOptions(defaults: DrainOptions, given: Partial<DrainOptions> | undefined): DrainOptions {
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(given ?? {})) {
    if (value !== undefined) merged[key] = value;
  }
  return merged as unknown as DrainOptions;
}

function toTarget(target: MaintenanceRequestedEvent['target']): Target {
  if (target.nodeName !== undefined) return { nodeName: target.nodeName };
  if (target.providerID !== undefined) return { providerID: target.providerID };
  // The schema guarantees exactly one key is set.
  return { instance: target.instance as { provider: 'aws' | 'azure' | 'gcp' | 'openstack'; id: string } };
}

export function toMaintenanceRequest(
  event: MaintenanceRequestedEvent,
  drainDefaults: DrainOptions,
): MaintenanceRequest {
  return {
    requestId: event.requestId,
    requester: event.requester,
    origin: event.origin,
    target: toTarget(event.target),
    reason: event.reason,
    ...(event.notBefore ? { notBefore: event.notBefore } : {}),
    ...(event.deadline ? { deadline: event.deadline } : {}),
    drain: mergeDrainOptions(drainDefaults, event.drain),
    ...(event.window ? { window: { ...event.window } } : {}),
  };
}
