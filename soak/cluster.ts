/**
 * The soak's cluster, generated (pure): `nodes` workers in three zones carrying what a fleet carries —
 * Deployments with PDBs (one at its limit, so its pods block a drain), a StatefulSet with a PDB, a
 * DaemonSet, bare pods (a drain without --force refuses them) and KubeVirt VMs that live-migrate.
 */

/** Every fifth node is in the soak's maintenance window (setup.ts). */
export const WINDOW_LABEL = 'soak.drainbridge.io/window';

export const SOAK_NAMESPACES = ['shop', 'data', 'monitoring', 'vms', 'debug'] as const;

function deployment(name: string, namespace: string, replicas: number): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `example/${name}:1` }] } },
    },
  };
}

function budget(name: string, namespace: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace },
    spec: { ...spec, selector: { matchLabels: { app: name } } },
  };
}

function workloads(nodes: number): Record<string, unknown>[] {
  const statefulSet = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'data', labels: { app: 'db' } },
    spec: {
      replicas: 3,
      serviceName: 'db',
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'example/db:1' }] } },
    },
  };
  const daemonSet = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'monitoring', labels: { app: 'agent' } },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'agent', image: 'agent:1' }] } },
    },
  };
  return [
    deployment('web', 'shop', nodes * 2),
    deployment('api', 'shop', Math.max(3, Math.round(nodes / 3))),
    deployment('ledger', 'shop', 2),
    statefulSet,
    daemonSet,
  ];
}

function virtualMachine(index: number): Record<string, unknown> {
  const name = `vm-${index + 1}`;
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: 'vms', labels: { app: 'vm' } },
    spec: {
      runStrategy: 'Always',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': name, app: 'vm' } },
        spec: { evictionStrategy: 'LiveMigrate', domain: { devices: {}, resources: { requests: { memory: '1Gi' } } } },
      },
    },
  };
}

/**
 * With `--nova`, the soak nodes that are the Nova lab's compute hosts (docs/nova.md): labelled as compute
 * nodes (DRAINBRIDGE_NOVA_NODE_SELECTOR matches only them) and naming their host with drainbridge.io/nova-host,
 * the soak's node names not being the hosts'. Node 5 is in the maintenance window too.
 */
export const NOVA_NODES: readonly { readonly index: number; readonly host: string }[] = [
  { index: 3, host: 'compute-1' },
  { index: 4, host: 'compute-2' },
  { index: 5, host: 'compute-3' },
];

/** The compute label that DRAINBRIDGE_NOVA_NODE_SELECTOR selects (soak/nova-lab.ts sets it to `<label>=enabled`). */
export const NOVA_NODE_LABEL = 'openstack-compute-node';

function novaOf(
  index: number,
  nova: boolean,
): { labels?: Record<string, string>; annotations?: Record<string, string> } {
  const host = nova ? NOVA_NODES.find((n) => n.index === index)?.host : undefined;
  return host ? { labels: { [NOVA_NODE_LABEL]: 'enabled' }, annotations: { 'drainbridge.io/nova-host': host } } : {};
}

function cloudOf(index: number): { providerID?: string } {
  const cloud = CLOUD_NODES.find((c) => c.index === index);
  return cloud ? { providerID: providerIdOf(cloud.provider, soakNodeName(index)) } : {};
}

/** The scenario (what startSimulator accepts) of a `nodes`-node soak cluster at `speed`; `nova`: with NOVA_NODES. */
export function soakScenario(nodes: number, speed: number, nova = false): Record<string, unknown> {
  return {
    name: `soak-${nodes}`,
    description: `${nodes} workers under a soak: Deployments, a StatefulSet, PDBs (ledger at its limit), a DaemonSet, bare pods, KubeVirt VMs`,
    speed,
    podStartupDelaySeconds: 2,
    nodes: Array.from({ length: nodes }, (_, i) => {
      const { labels, annotations } = novaOf(i, nova);
      return {
        name: soakNodeName(i),
        labels: {
          'topology.kubernetes.io/zone': `zone-${'abc'[i % 3]}`,
          'node-role.kubernetes.io/worker': '',
          ...(i % 5 === 4 ? { [WINDOW_LABEL]: 'nightly' } : {}),
          ...labels,
        },
        ...(annotations ? { annotations } : {}),
        capacity: { pods: 110, cpu: '32', memory: '128Gi' },
        ...cloudOf(i),
      };
    }),
    namespaces: [...SOAK_NAMESPACES],
    workloads: workloads(nodes),
    pdbs: [
      budget('web', 'shop', { maxUnavailable: '10%' }),
      budget('api', 'shop', { minAvailable: '80%' }),
      // At its limit: no ledger pod may go, so a node carrying one cannot be drained (a named blocker).
      budget('ledger', 'shop', { minAvailable: 2 }),
      budget('db', 'data', { maxUnavailable: 1 }),
    ],
    pods: [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'toolbox', namespace: 'debug' },
        spec: { containers: [{ name: 'shell', image: 'busybox:1.37' }] },
        count: Math.max(2, Math.round(nodes / 10)),
      },
    ],
    kubevirt: {
      configuration: { evictionStrategy: 'LiveMigrate' },
      timings: {
        targetPreparationSeconds: 1,
        migrationStartSeconds: 0.5,
        transferBaseSeconds: 2,
        transferSecondsPerGiB: 1,
        abortSeconds: 0.5,
      },
      virtualMachines: Array.from({ length: Math.max(4, Math.round(nodes / 5)) }, (_, i) => virtualMachine(i)),
    },
  };
}

export type CloudProvider = 'aws' | 'azure' | 'gcp';

/** The soak's cloud nodes: the first three nodes, one per cloud (soak/cluster.ts gives them providerIDs). */
export const CLOUD_NODES: readonly { readonly provider: CloudProvider; readonly index: number }[] = [
  { provider: 'aws', index: 0 },
  { provider: 'azure', index: 1 },
  { provider: 'gcp', index: 2 },
];

/** The providerID a cloud node carries (what its agent matches its metadata against). */
export function providerIdOf(provider: CloudProvider, node: string): string {
  if (provider === 'aws') return `aws:///zone-a/${instanceIdOf(node)}`;
  if (provider === 'azure')
    return `azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/soak/providers/Microsoft.Compute/virtualMachines/${node}`;
  return `gce://soak/zone-c/${node}`;
}

export const instanceIdOf = (node: string): string => `i-0abc${node.replace(/\D/g, '').padStart(12, '0')}`;

/** Node names of the soak cluster, zero-padded so that they sort as they are numbered. */
export function soakNodeName(index: number): string {
  return `node-${String(index + 1).padStart(2, '0')}`;
}
