/** A scenario for the workflow suite: every workload starts on node-1 (the others are cordoned until the test opens them). */
export const WORKFLOW_SCENARIO = {
  name: 'workflow',
  speed: 200,
  podStartupDelaySeconds: 2,
  nodes: [
    { name: 'node-1', providerID: 'aws:///eu-west-1a/i-0aaaaaaaaaaaaaaa1' },
    { name: 'node-2', providerID: 'aws:///eu-west-1a/i-0aaaaaaaaaaaaaaa2', unschedulable: true },
    { name: 'node-3', providerID: 'aws:///eu-west-1b/i-0aaaaaaaaaaaaaaa3', unschedulable: true },
  ],
  namespaces: ['shop', 'monitoring'],
  workloads: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
        },
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'monitoring', labels: { app: 'agent' } },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { containers: [{ name: 'agent', image: 'agent:1' }] },
        },
      },
    },
  ],
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { minAvailable: 3, selector: { matchLabels: { app: 'web' } } },
    },
  ],
};

/** WORKFLOW_SCENARIO with the web PDB at maxUnavailable 0: node-1 can never drain. */
export const BLOCKED_SCENARIO = {
  ...WORKFLOW_SCENARIO,
  name: 'workflow-blocked',
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'web' } } },
    },
  ],
};

/** Three schedulable nodes with only a DaemonSet: every evacuation drains at once (admission tests). */
export const IDLE_NODES_SCENARIO = {
  ...WORKFLOW_SCENARIO,
  name: 'workflow-idle',
  nodes: WORKFLOW_SCENARIO.nodes.map(({ name, providerID }) => ({ name, providerID })),
  workloads: WORKFLOW_SCENARIO.workloads.filter((workload) => workload.kind === 'DaemonSet'),
  pdbs: [],
};
