/**
 * The scale section's cluster, generated: `nodes` schedulable workers in three zones, a DaemonSet on each,
 * and Deployments spread over them by the scheduler (fewest pods first) — `web` (3 per node, PDB
 * `maxUnavailable: 10%`) and `api` (1 per node, PDB `minAvailable: 90%`) — so every node carries 5 pods.
 * Pure: returns the scenario as an object (what startSimulator accepts, or YAML for `drainbridge sim`).
 */

/** Pods per node the scenario places: web 3, api 1, the DaemonSet pod 1. */
export const PODS_PER_NODE = 5;

function deployment(name: string, replicas: number): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'apps', labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name, image: `example/${name}:1.0` }] },
      },
    },
  };
}

function budget(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: 'apps' },
    spec: { ...spec, selector: { matchLabels: { app: name } } },
  };
}

/** Node names of the scale cluster, zero-padded so that they sort as they are numbered. */
export function scaleNodeName(index: number): string {
  return `node-${String(index + 1).padStart(4, '0')}`;
}

/** The EC2 instance id of node `index` (its providerID's last segment): what a cloud notice names. */
export function scaleInstanceId(index: number): string {
  return `i-${(0x5ca1e000000 + index).toString(16).padStart(17, '0')}`;
}

/** The scenario of a `nodes`-node cluster at `speed`. */
export function scaleScenario(nodes: number, speed: number): Record<string, unknown> {
  return {
    name: `scale-${nodes}`,
    description: `${nodes} workers, ${PODS_PER_NODE} pods each (web ×3, api ×1, a DaemonSet pod), PDBs at 10%`,
    speed,
    podStartupDelaySeconds: 2,
    nodes: Array.from({ length: nodes }, (_, i) => ({
      name: scaleNodeName(i),
      labels: { 'topology.kubernetes.io/zone': `zone-${'abc'[i % 3]}`, 'node-role.kubernetes.io/worker': '' },
      providerID: `aws:///zone-${'abc'[i % 3]}/${scaleInstanceId(i)}`,
      capacity: { pods: 110, cpu: '32', memory: '128Gi' },
    })),
    namespaces: ['apps', 'monitoring'],
    workloads: [
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent', namespace: 'monitoring', labels: { app: 'agent' } },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: { containers: [{ name: 'agent', image: 'example/agent:1.0' }] },
          },
        },
      },
      deployment('web', nodes * 3),
      deployment('api', nodes),
    ],
    pdbs: [budget('web', { maxUnavailable: '10%' }), budget('api', { minAvailable: '90%' })],
  };
}
