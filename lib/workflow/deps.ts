/**
 * What the workflow's tasks need from the outside world, built once per Lambda container (or once per
 * embedded run) from the configuration. Holds clients only — never evacuation state.
 */
import { createEventBridgeClient, EventBridgePublisher } from '../bus/eventbridge-publisher.ts';
import { PrintingPublisher } from '../bus/printing-publisher.ts';
import type { EventPublisher } from '../bus/types.ts';
import { buildKubeConfig, type Config, loadConfig } from '../config/index.ts';
import { KubeClient, type KubeClientOptions } from '../kube/client.ts';
import { EvacuationProgressStore } from '../progress/evacuation-store.ts';
import type { NovaPort } from './nova-port.ts';
import { type NovaWiringBase, novaPortFor } from './nova-wiring.ts';

export interface WorkflowDeps {
  readonly config: Config;
  readonly kube: KubeClient;
  /** The Evacuation records: per-branch progress, counts and blockers. */
  readonly progress: EvacuationProgressStore;
  readonly publisher: EventPublisher;
  readonly nova: NovaPort;
}

/** Connects the clients for a validated configuration. */
export async function connectDeps(
  config: Config,
  publisher: EventPublisher,
  nova: NovaFactory = novaPortFor,
  kubeOptions: Omit<KubeClientOptions, 'chunkSize'> = {},
): Promise<WorkflowDeps> {
  const kubeConfig = await buildKubeConfig(config);
  const kube = new KubeClient(kubeConfig, { ...kubeOptions, chunkSize: config.drainDefaults.chunkSize });
  const progress = new EvacuationProgressStore(kube);
  return { config, kube, progress, publisher, nova: await nova(config, { kube, progress }) };
}

/** Builds the Nova port; NO_NOVA when Nova is not enabled. */
export type NovaFactory = (config: Config, base: NovaWiringBase) => Promise<NovaPort>;

/**
 * A handler's dependencies from the environment: on Lambda (DRAINBRIDGE_MODE=aws) outcome events go to
 * EventBridge; a handler run alone in embedded mode (`serverless invoke local` against a kubeconfig,
 * `npm run invoke`) has no bus, so they are printed (the embedded runtime passes its in-process bus to
 * connectDeps itself).
 */
export async function depsFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<WorkflowDeps> {
  const config = loadConfig(env);
  const publisher =
    config.mode === 'aws'
      ? new EventBridgePublisher(await createEventBridgeClient(), config.eventBusName)
      : new PrintingPublisher(config.eventBusName);
  return connectDeps(config, publisher);
}
