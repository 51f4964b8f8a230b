/**
 * The scenario file format (YAML): a cluster to start the simulator with. Example (see small.yaml):
 *
 *   name: small
 *   speed: 10                      # default clock speed (`--speed` overrides)
 *   podStartupDelaySeconds: 2      # bound pod → Running and Ready
 *   jobRunSeconds: 5               # how long a Job pod runs before it Succeeds
 *   nodes:
 *     - name: node-1
 *       labels: { topology.kubernetes.io/zone: zone-a }
 *       taints: [{ key: dedicated, value: gpu, effect: NoSchedule }]
 *       capacity: { pods: 110, cpu: "8", memory: 32Gi }
 *       providerID: openstack:///2f0c…
 *       staticPods: [{ name: kube-vip, spec: { containers: [{ name: kube-vip, image: … }] } }]
 *   namespaces: [shop]
 *   crds: [ …CustomResourceDefinition manifests… ]
 *   customResources: [ …objects of those kinds (or any served kind)… ]
 *   workloads: [ …Deployment / StatefulSet / DaemonSet / ReplicaSet / Job manifests… ]
 *   pdbs: [ …PodDisruptionBudget manifests… ]
 *   pods: [ …bare Pod manifests; `count: N` makes N copies named <name>-1…<name>-N… ]
 *   kubevirt: { configuration, timings, virtualMachines, virtualMachineInstances }   # kubevirt-schema.ts
 *
 * Manifests are ordinary Kubernetes objects; an ownerReference without `uid` is resolved by kind and
 * name when the scenario is applied.
 */
import { z } from 'zod';
import { kubevirtSection } from './kubevirt-schema.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const name = z.string().max(253).regex(DNS_SUBDOMAIN, 'must be a lowercase RFC 1123 subdomain');
const labels = z.record(z.string(), z.string());

const taint = z.strictObject({
  key: z.string().min(1),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
});

const quantity = z.union([
  z.number().int().nonnegative(),
  z.string().regex(/^\d+(\.\d+)?([numkMGTPE]i?)?$/, 'must be a quantity'),
]);

const containers = z
  .array(z.looseObject({ name, image: z.string().min(1).optional() }))
  .min(1, 'must list at least one container');
const podSpec = z.looseObject({ containers });

const staticPod = z.strictObject({
  name,
  namespace: name.optional(),
  labels: labels.optional(),
  annotations: labels.optional(),
  spec: podSpec,
});

const node = z.strictObject({
  name,
  labels: labels.optional(),
  annotations: labels.optional(),
  taints: z.array(taint).optional(),
  capacity: z
    .strictObject({ pods: quantity.optional(), cpu: quantity.optional(), memory: quantity.optional() })
    .optional(),
  providerID: z.string().min(1).optional(),
  unschedulable: z.boolean().optional(),
  /** False makes the node NotReady: its kubelet leaves pods as they are. Default true. */
  ready: z.boolean().optional(),
  staticPods: z.array(staticPod).optional(),
});

const metadata = z.looseObject({ name, namespace: name.optional(), labels: labels.optional() });
/** Any Kubernetes object: envelope checked, the rest left to the store's own validation. */
const manifest = z.looseObject({ apiVersion: z.string().min(1), kind: z.string().min(1), metadata });

const template = z.looseObject({ metadata: z.looseObject({ labels: labels.optional() }).optional(), spec: podSpec });
const workload = manifest.extend({
  kind: z.enum(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']),
  spec: z.looseObject({ replicas: z.number().int().nonnegative().optional(), template }),
});

const intOrPercent = z.union([
  z.number().int().nonnegative(),
  z.string().regex(/^\d+%$/, 'must be an integer or a percentage such as "50%"'),
]);
const pdb = manifest.extend({
  kind: z.literal('PodDisruptionBudget'),
  spec: z.looseObject({
    minAvailable: intOrPercent.optional(),
    maxUnavailable: intOrPercent.optional(),
    selector: z.looseObject({}),
  }),
});

const pod = manifest.extend({
  kind: z.literal('Pod'),
  /** Copies to create, named `<name>-1` … `<name>-<count>`. */
  count: z.number().int().min(1).max(1000).optional(),
  spec: podSpec,
});

const crd = manifest.extend({ kind: z.literal('CustomResourceDefinition') });

export const scenarioSchema = z.strictObject({
  name,
  description: z.string().optional(),
  speed: z.number().positive().max(100_000).optional(),
  podStartupDelaySeconds: z.number().nonnegative().optional(),
  jobRunSeconds: z.number().nonnegative().optional(),
  nodes: z.array(node).min(1, 'must list at least one node'),
  namespaces: z.array(name).optional(),
  crds: z.array(crd).optional(),
  customResources: z.array(manifest).optional(),
  workloads: z.array(workload).optional(),
  pdbs: z.array(pdb).optional(),
  pods: z.array(pod).optional(),
  /** Installs the simulated KubeVirt (CRDs, KubeVirt CR, its controllers) and declares VMs. */
  kubevirt: kubevirtSection.optional(),
});

export type ScenarioFile = z.infer<typeof scenarioSchema>;
export type ScenarioNode = z.infer<typeof node>;
export type ScenarioManifest = z.infer<typeof manifest>;
