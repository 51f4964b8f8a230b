/**
 * The in-cluster forwarder: cluster state → events on the bus. See README.md in this folder.
 *
 * What `drainbridge forwarder` imports: nothing here may load @kubernetes/client-node at run time (the
 * lean client, lib/clients/kube/http, reaches the API server), so that the process stays within its memory budget.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EVENTBRIDGE_CLIENT_DEFAULTS, EventBridgePublisher } from '../../bus/eventbridge-publisher.ts';
import type { BusAdapter } from '../../bus/types.ts';
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../log/logger.ts';
import { RebootSource } from '../reboot/source.ts';
import { Forwarder, type ForwarderParts } from './forwarder.ts';
import { connectKube } from './kube.ts';
import type { ForwarderSettings } from './settings.ts';

export { REBOOT_REQUESTER, RebootSource } from '../reboot/source.ts';
export type { EventOutlet, ForwardedEvent, ForwarderSource, PublishReceipt } from '../types.ts';
export { Forwarder, type ForwarderParts, trimNode } from './forwarder.ts';
export { connectKube } from './kube.ts';
export { createForwarderMetrics, type ForwarderMetrics } from './metrics.ts';
export { FORWARDER_SETTINGS, type ForwarderSettings, loadForwarderSettings } from './settings.ts';

/** PutEvents to `config.eventBusName` with the SDK's credential chain (IRSA, Pod Identity, environment). */
export function eventBridgePublisher(config: Pick<Config, 'eventBusName'>): EventBridgePublisher {
  return new EventBridgePublisher(new EventBridgeClient({ ...EVENTBRIDGE_CLIENT_DEFAULTS }), config.eventBusName);
}

/** A forwarder for `config`'s cluster publishing to `sink` (EventBridge: `config.eventBusName`, when not given). */
export async function createForwarder(
  config: Config,
  settings: ForwarderSettings,
  logger: Logger,
  extra: Partial<Omit<ForwarderParts, 'client' | 'settings' | 'logger' | 'namespace'>> & { sink?: BusAdapter } = {},
): Promise<Forwarder> {
  const client = await connectKube(config);
  const sink = extra.sink ?? eventBridgePublisher(config);
  // Maintenance windows that end on reboot: the forwarder sees the node come back (reboot/source.ts).
  const extraSources = [...(extra.extraSources ?? []), new RebootSource({ client, logger })];
  return new Forwarder({ ...extra, extraSources, client, settings, logger, namespace: config.namespace, sink });
}
