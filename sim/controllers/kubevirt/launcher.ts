/**
 * virt-launcher pods as virt-controller's template service renders them
 * (`pkg/virt-controller/services/template.go`, `RenderLaunchManifest` / `RenderMigrationManifest`):
 * `generateName: virt-launcher-<vmi>-`, the VMI's labels plus `kubevirt.io=virt-launcher`,
 * `kubevirt.io/created-by=<vmi uid>` and `vm.kubevirt.io/name`, the `kubevirt.io/domain` annotation
 * virt-api's eviction admitter reads, the VMI as controller owner, a `compute` container, restart
 * policy Never, and a grace period of the VMI's (default 30 s) plus two 15 s paddings.
 *
 * Target pods also carry `kubevirt.io/migrationJobUID` and the `kubevirt.io/migrationJobName`
 * annotation (`pkg/virt-controller/watch/migration/migration.go`, createTargetPod) and KubeVirt's
 * required pod anti-affinity against the VMI's other pods on the same host. The simulated scheduler
 * does not evaluate inter-pod anti-affinity, so target pods also get a required node affinity
 * `kubernetes.io/hostname NotIn [<source node>]`: the placement outcome is the same.
 */
import type { KubeObject, OwnerReference } from '../../store/types.ts';
import type { Pod } from '../types.ts';
import { ANNOTATIONS, API_VERSION, LABELS, type Vmi, type Vmim } from './api.ts';

export const LAUNCHER_IMAGE = 'quay.io/kubevirt/virt-launcher:v1.5.0';
/** KubeVirt pads the VMI's grace period twice by 15 s for the launcher pod. */
const GRACE_PADDING_SECONDS = 30;
const DEFAULT_VMI_GRACE_SECONDS = 30;

function ownerReferenceTo(vmi: Vmi): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineInstance',
    name: vmi.metadata.name,
    uid: vmi.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The hostname KubeVirt derives from the VMI (its `spec.hostname`, else its name). */
function hostnameOf(vmi: Vmi): string {
  const hostname = vmi.spec.hostname;
  return typeof hostname === 'string' && hostname !== '' ? hostname : vmi.metadata.name;
}

/** The VMI's launcher pod, not yet created. */
export function launcherPod(vmi: Vmi): KubeObject {
  const grace = (vmi.spec.terminationGracePeriodSeconds ?? DEFAULT_VMI_GRACE_SECONDS) + GRACE_PADDING_SECONDS;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `virt-launcher-${vmi.metadata.name}-`,
      namespace: vmi.metadata.namespace,
      labels: {
        ...vmi.metadata.labels,
        [LABELS.app]: 'virt-launcher',
        [LABELS.createdBy]: vmi.metadata.uid ?? '',
        [LABELS.vmName]: hostnameOf(vmi),
      },
      annotations: { [ANNOTATIONS.domain]: vmi.metadata.name, [ANNOTATIONS.defaultContainer]: 'compute' },
      ownerReferences: [ownerReferenceTo(vmi)],
    },
    spec: {
      hostname: hostnameOf(vmi),
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: grace,
      automountServiceAccountToken: false,
      containers: [{ name: 'compute', image: LAUNCHER_IMAGE, command: ['/usr/bin/virt-launcher-monitor'] }],
      nodeSelector: { ...vmi.spec.nodeSelector, [LABELS.schedulable]: 'true' },
      ...(vmi.spec.tolerations ? { tolerations: structuredClone(vmi.spec.tolerations) } : {}),
      ...(vmi.spec.affinity ? { affinity: structuredClone(vmi.spec.affinity) } : {}),
    },
  };
}

type Affinity = {
  nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: Record<string, unknown>[] } };
  podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: unknown[] };
  [key: string]: unknown;
};

/** Adds `hostname NotIn [node]` to every required node-selector term (one term when there is none). */
function avoidingNode(affinity: Affinity, node: string): Affinity {
  const required = affinity.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? {};
  const terms = required.nodeSelectorTerms?.length ? required.nodeSelectorTerms : [{}];
  const notIn = { key: 'kubernetes.io/hostname', operator: 'NotIn', values: [node] };
  const nodeSelectorTerms = terms.map((term) => ({
    ...term,
    matchExpressions: [...((term.matchExpressions as unknown[] | undefined) ?? []), notIn],
  }));
  return {
    ...affinity,
    nodeAffinity: {
      ...affinity.nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: { ...required, nodeSelectorTerms },
    },
  };
}

/** The migration's target pod: the launcher template plus the migration's label, annotation and anti-affinity. */
export function targetPod(vmi: Vmi, migration: Vmim): KubeObject {
  const pod = launcherPod(vmi) as Pod;
  pod.metadata.labels = { ...pod.metadata.labels, [LABELS.migrationJobUid]: migration.metadata.uid ?? '' };
  pod.metadata.annotations = { ...pod.metadata.annotations, [ANNOTATIONS.migrationJobName]: migration.metadata.name };
  const antiAffinityTerm = {
    labelSelector: { matchLabels: { [LABELS.createdBy]: vmi.metadata.uid ?? '' } },
    topologyKey: 'kubernetes.io/hostname',
  };
  const affinity = (pod.spec.affinity ?? {}) as Affinity;
  const antiAffinity = affinity.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const withAnti: Affinity = {
    ...affinity,
    podAntiAffinity: {
      ...affinity.podAntiAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: [...antiAffinity, antiAffinityTerm],
    },
  };
  pod.spec.affinity = avoidingNode(withAnti, vmi.status?.nodeName ?? '') as Pod['spec']['affinity'];
  return pod;
}

/** Whether a pod is one of the VMI's launcher pods (by the created-by label, as KubeVirt selects them). */
export function isLauncherOf(pod: KubeObject, vmi: Vmi): boolean {
  return (
    pod.metadata.labels?.[LABELS.app] === 'virt-launcher' && pod.metadata.labels[LABELS.createdBy] === vmi.metadata.uid
  );
}
