/**
 * The node agent against a fake metadata server and the Kubernetes API simulator: real HTTP to both.
 * The agent runs under a ServiceAccount with only what it needs (get/list nodes, get Evacuations), so a
 * read it should not make fails the test. The cluster state a drain leaves (Evacuation record at
 * NodeDrained, the node's phase and ledger hold) is written here as the workflow writes it.
 */
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { type DetailByType, type DetailType, parseDetail } from '../../lib/bus/contracts/index.ts';
import type { EventPublisher } from '../../lib/bus/types.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { evacuationName } from '../../lib/clients/kube/paths.ts';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { PHASE_ANNOTATION } from '../../lib/node/phase.ts';
import { type AgentConfig, loadAgentConfig } from '../../lib/sources/clouds/config.ts';
import type { AgentLogger } from '../../lib/sources/clouds/loop.ts';
import { MemoryNoticeMetrics } from '../../lib/sources/clouds/metrics.ts';
import { type NodeAgent, type NodeAgentOptions, startNodeAgent } from '../../lib/sources/node-agent/agent.ts';
import { type KubeObject, type Simulator, startSimulator } from '../../sim/index.ts';

const ROOT = new URL('../../', import.meta.url);

/** The node agent's least privilege: its own node and the others' (Azure approvals), Evacuation records. */
export const AGENT_RBAC = `
apiVersion: v1
kind: ServiceAccount
metadata: { name: node-agent, namespace: drainbridge }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: drainbridge-node-agent }
rules:
  - apiGroups: [""]
    resources: [nodes]
    verbs: [get, list]
  - apiGroups: [drainbridge.io]
    resources: [evacuations]
    verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: drainbridge-node-agent }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: drainbridge-node-agent }
subjects: [{ kind: ServiceAccount, name: node-agent, namespace: drainbridge }]
`;

export const AZURE_VMSS =
  'azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc_rg_aks_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool-12345678-vmss/virtualMachines';

/** node-1, node-2: AKS scale-set instances 0 and 1 (resources `aks-pool-12345678-vmss_0`, `_1`); node-3: a standalone VM `worker-3`. */
export const AZURE_NODES = [
  { name: 'node-1', providerID: `${AZURE_VMSS}/0` },
  { name: 'node-2', providerID: `${AZURE_VMSS}/1` },
  {
    name: 'node-3',
    providerID:
      'azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/worker-3',
  },
];

export const AWS_NODES = [
  { name: 'node-1', providerID: 'aws:///us-west-2a/i-abcd1111' },
  { name: 'node-2', providerID: 'aws:///us-west-2b/i-abcd2222' },
  { name: 'node-3', providerID: 'aws:///us-west-2c/i-abcd3333' },
];

export const GCP_NODES = [{ name: 'node-1', providerID: 'gce://my-project/europe-west1-b/node-1' }];

/** node-1 … node-3 in one GCE zone (the GCP e2e tests' cluster). */
export const GCP_THREE = ['node-1', 'node-2', 'node-3'].map((name) => ({
  name,
  providerID: `gce://my-project/europe-west1-b/${name}`,
}));

/** A publisher that validates like the real ones and records what went out. */
export class RecordingPublisher implements EventPublisher {
  readonly events: { detailType: DetailType; detail: Record<string, unknown> }[] = [];
  /** While set, publishing fails (as a bus outage would). */
  failing = false;

  async publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void> {
    parseDetail(detailType, detail);
    if (this.failing) throw new Error('the bus is down');
    this.events.push({ detailType, detail: structuredClone(detail) as Record<string, unknown> });
  }

  of(detailType: DetailType): Record<string, unknown>[] {
    return this.events.filter((e) => e.detailType === detailType).map((e) => e.detail);
  }
}

export class RecordingLogger implements AgentLogger {
  readonly lines: { level: string; message: string; extra: Record<string, unknown> }[] = [];
  debug(message: string, extra: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'debug', message, extra });
  }
  info(message: string, extra: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'info', message, extra });
  }
  warn(message: string, extra: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'warn', message, extra });
  }
  error(message: string, extra: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'error', message, extra });
  }
  has(message: string, where: (extra: Record<string, unknown>) => boolean = () => true): boolean {
    return this.lines.some((line) => line.message === message && where(line.extra));
  }
}

/**
 * The node agent's own client on a simulated cluster, as the DaemonSet gets it: its RBAC applied, its
 * ServiceAccount's token, quick retries.
 */
export async function agentKubeOn(sim: Simulator, options: { readonly timeoutMs?: number } = {}): Promise<KubeClient> {
  sim.apply(AGENT_RBAC, 'node agent RBAC');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sim.kubeconfig(await sim.tokenFor('drainbridge/node-agent')));
  return new KubeClient(kubeConfig, { retry: { baseDelayMs: 5, maxDelayMs: 20 }, ...options });
}

export interface AgentCluster {
  readonly sim: Simulator;
  /** The agent's client, as its ServiceAccount. */
  readonly kube: KubeClient;
  /** Records what a drain by drainbridge leaves: Evacuation at NodeDrained, node phase NodeDrained, the request's hold. */
  markDrained(nodeName: string, requestId: string): void;
  /** Only the ledger hold (a request admitted, not drained yet). */
  markHeld(nodeName: string, requestId: string): void;
  stop(): Promise<void>;
}

const NODES = { group: '', resource: 'nodes' };
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };

export async function startAgentCluster(nodes: readonly { name: string; providerID: string }[]): Promise<AgentCluster> {
  const sim = await startSimulator({ scenario: { name: 'notices', nodes: [...nodes] } });
  try {
    sim.apply(
      readFileSync(new URL('deploy/base/crds/evacuations.yaml', ROOT), 'utf8'),
      'deploy/base/crds/evacuations.yaml',
    );
    sim.apply('apiVersion: v1\nkind: Namespace\nmetadata: { name: drainbridge }\n');
    const kube = await agentKubeOn(sim, { timeoutMs: 5_000 });
    const hold = (nodeName: string, requestId: string, phase?: string) =>
      sim.store.mutate(NODES, { name: nodeName }, (node: KubeObject) => {
        node.metadata.annotations ??= {};
        const annotations = node.metadata.annotations;
        const since = new Date().toISOString();
        const ledger = { holds: { [requestId]: { requester: 'test', origin: 'azure', since } }, released: {} };
        annotations[LEDGER_ANNOTATION] = JSON.stringify(ledger);
        if (phase) annotations[PHASE_ANNOTATION] = phase;
        (node as { spec?: Record<string, unknown> }).spec = {
          ...(node as { spec?: object }).spec,
          unschedulable: true,
        };
        return undefined;
      });
    return {
      sim,
      kube,
      markHeld: (nodeName, requestId) => void hold(nodeName, requestId),
      markDrained: (nodeName, requestId) => {
        const name = evacuationName(requestId);
        sim.store.create(EVACUATIONS, {
          apiVersion: 'drainbridge.io/v1alpha1',
          kind: 'Evacuation',
          metadata: { name },
          spec: { requestId, nodeName },
        } as KubeObject);
        sim.store.mutate(EVACUATIONS, { name }, (record: KubeObject) => {
          (record as { status?: unknown }).status = { phase: 'NodeDrained', branches: {} };
          return undefined;
        });
        hold(nodeName, requestId, 'NodeDrained');
      },
      stop: () => sim.stop(),
    };
  } catch (error) {
    await sim.stop();
    throw error;
  }
}

/** An agent configuration for tests: the fake's URL, fast polling, approvals checked at every read. */
export function testConfig(env: Record<string, string>): AgentConfig {
  const config = loadAgentConfig(env);
  return { ...config, pollSeconds: 0.05, azure: { ...config.azure, approvalCheckSeconds: 0 } };
}

export interface RunningAgent {
  readonly agent: NodeAgent;
  /** What the agent published (empty when another publisher was given). */
  readonly publisher: RecordingPublisher;
  readonly logger: RecordingLogger;
  readonly metrics: MemoryNoticeMetrics;
}

export function runAgent(config: AgentConfig, kube: KubeClient, extra: Partial<NodeAgentOptions> = {}): RunningAgent {
  const recording = extra.publisher instanceof RecordingPublisher ? extra.publisher : new RecordingPublisher();
  const logger = new RecordingLogger();
  const metrics = new MemoryNoticeMetrics();
  const agent = startNodeAgent({ config, kube, publisher: recording, logger, metrics, ...extra });
  return { agent, publisher: recording, logger, metrics };
}

/**
 * A simulator scenario of `nodes` running one Deployment `shop/web` of nginx pods (the cloud e2e tests' cluster);
 * `terminationGracePeriodSeconds` when a test needs the pods to take their time stopping.
 */
export function webScenario(
  name: string,
  nodes: readonly { name: string; providerID: string }[],
  replicas: number,
  pods: { readonly terminationGracePeriodSeconds?: number } = {},
) {
  return {
    name,
    podStartupDelaySeconds: 1,
    nodes,
    namespaces: ['shop'],
    workloads: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
        spec: {
          replicas,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { ...pods, containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
          },
        },
      },
    ],
  };
}
