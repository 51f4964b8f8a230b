/**
 * What the workflow's tasks need from the outside world, built once per Lambda container (or once per
 * embedded run) from the configuration. Holds clients only — never evacuation state.
 */

import type { BranchConnector, WorkflowDeps } from '../branches/contract/workflow-deps.ts';
import { BRANCH_REGISTRY } from '../branches/registry.ts';
import { createEventBridgeClient, EventBridgePublisher } from '../bus/eventbridge-publisher.ts';
import { PrintingPublisher } from '../bus/printing-publisher.ts';
import type { EventPublisher } from '../bus/types.ts';
import { KubeClient, type KubeClientOptions } from '../clients/kube/client.ts';
import { buildKubeConfig, type Config, loadConfig } from '../config/index.ts';
import { EvacuationProgressStore } from '../progress/evacuation-store.ts';

export type { BranchConnector, WorkflowDeps } from '../branches/contract/workflow-deps.ts';

/** Connectors that replace a branch's own (tests: Nova against a lab with its own credentials). */
export type BranchConnectors = Readonly<Record<string, BranchConnector>>;

/** Connects the clients for a validated configuration, and each branch that has a connection. */
export async function connectDeps(
  config: Config,
  publisher: EventPublisher,
  connectors: BranchConnectors = {},
  kubeOptions: Omit<KubeClientOptions, 'chunkSize'> = {},
): Promise<WorkflowDeps> {
  const kubeConfig = await buildKubeConfig(config);
  const kube = new KubeClient(kubeConfig, { ...kubeOptions, chunkSize: config.drainDefaults.chunkSize });
  const progress = new EvacuationProgressStore(kube);
  const connections = new Map<string, unknown>();
  for (const branch of BRANCH_REGISTRY) {
    const connect = connectors[branch.name] ?? branch.connect;
    if (connect) connections.set(branch.name, await connect(config, { kube, progress }));
  }
  return { config, kube, progress, publisher, connections };
}

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
