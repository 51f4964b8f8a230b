/**
 * The in-cluster forwarder: cluster state → events on the bus. See README.md in this folder.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EVENTBRIDGE_CLIENT_DEFAULTS, EventBridgePublisher } from '../bus/eventbridge-publisher.ts';
import { buildKubeConfig, type Config } from '../config/index.ts';
import { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/logger.ts';
import { Forwarder, type ForwarderParts } from './forwarder.ts';
import { RebootSource } from './reboot/source.ts';
import type { ForwarderSettings } from './settings.ts';
import { type BusSink, EventBridgeSink } from './sinks.ts';

export { Forwarder, type ForwarderParts, trimNode } from './forwarder.ts';
export { createForwarderMetrics, type ForwarderMetrics } from './metrics.ts';
export { REBOOT_REQUESTER, RebootSource } from './reboot/source.ts';
export { FORWARDER_ENV_VARS, type ForwarderSettings, loadForwarderSettings } from './settings.ts';
export { type BusSink, EventBridgeSink, InProcessSink } from './sinks.ts';
export type { EventOutlet, ForwardedEvent, ForwarderSource, PublishReceipt } from './types.ts';

/** A forwarder for `config`'s cluster publishing to `sink` (EventBridge: `config.eventBusName`, when not given). */
export async function createForwarder(
  config: Config,
  settings: ForwarderSettings,
  logger: Logger,
  extra: Partial<Omit<ForwarderParts, 'client' | 'kubeConfig' | 'settings' | 'logger' | 'namespace'>> & {
    sink?: BusSink;
  } = {},
): Promise<Forwarder> {
  const kubeConfig = await buildKubeConfig(config);
  const client = new KubeClient(kubeConfig);
  const sink =
    extra.sink ??
    new EventBridgeSink(
      new EventBridgePublisher(new EventBridgeClient({ ...EVENTBRIDGE_CLIENT_DEFAULTS }), config.eventBusName),
    );
  // Maintenance windows that end on reboot: the forwarder sees the node come back (reboot/source.ts).
  const extraSources = [...(extra.extraSources ?? []), new RebootSource({ client, kubeConfig, logger })];
  return new Forwarder({
    ...extra,
    extraSources,
    client,
    kubeConfig,
    settings,
    logger,
    namespace: config.namespace,
    sink,
  });
}
