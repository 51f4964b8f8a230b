/**
 * The StatefulSet controller: pods `<set>-0 … <set>-(N-1)`. With the default OrderedReady policy it
 * acts on one pod at a time: it creates the lowest missing ordinal only when every lower one is
 * Running and Ready, recreates a pod under the same name only after the old one is gone, and removes
 * surplus pods highest ordinal first. `Parallel` lifts the one-at-a-time rule. Writes status.
 * Not modelled: volumeClaimTemplates (no PVCs), rolling updates by revision, partitions.
 */
import type { KubeObject } from '../store/types.ts';
import { isDeleting, isPodReady, isTerminal, templateHash } from './meta.ts';
import type { ReconcileResult } from './queue.ts';
import type { Context, Controller } from './runtime.ts';
import { type Pod, REFS, type Workload } from './types.ts';
import { createPod, deletePod, ownedPods, podFromTemplate, startWorkloadLoop, writeStatus } from './workload.ts';

/** The ordinal of `<set>-<n>`, or undefined for a name that does not belong to the set. */
export function ordinalOf(setName: string, podName: string | undefined): number | undefined {
  if (!podName?.startsWith(`${setName}-`)) return undefined;
  const rest = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

function newPod(set: Workload, ordinal: number, revision: string) {
  const name = `${set.metadata.name}-${ordinal}`;
  const serviceName = typeof set.spec.serviceName === 'string' ? set.spec.serviceName : undefined;
  return podFromTemplate(set, {
    name,
    labels: {
      'statefulset.kubernetes.io/pod-name': name,
      'apps.kubernetes.io/pod-index': String(ordinal),
      'controller-revision-hash': revision,
    },
    spec: { hostname: name, ...(serviceName ? { subdomain: serviceName } : {}) },
  });
}

/** What one ordinal needs: `'next'` when it is fine and an ordered set may look at the next one. */
function syncOrdinal(context: Context, set: Workload, pod: Pod | undefined, create: () => KubeObject): 'next' | 'wait' {
  if (!pod) {
    const created = createPod(context.store, create());
    if (created) {
      const message = `create Pod ${created.metadata.name} in StatefulSet ${set.metadata.name} successful`;
      context.recorder({ component: 'statefulset-controller' }).record(set, 'Normal', 'SuccessfulCreate', message);
    }
    return 'wait';
  }
  if (isTerminal(pod) && !isDeleting(pod)) {
    // A finished pod of a set is replaced: delete it now, recreate once it is gone.
    deletePod(context.store, pod);
    return 'wait';
  }
  return isDeleting(pod) || !isPodReady(pod) ? 'wait' : 'next';
}

/** Acts on ordinals below `replicas`; returns false when an ordered set must wait. */
function fillOrdinals(context: Context, set: Workload, byOrdinal: Map<number, Pod>, revision: string): boolean {
  const parallel = set.spec.podManagementPolicy === 'Parallel';
  let allReady = true;
  for (let ordinal = 0; ordinal < (set.spec.replicas ?? 1); ordinal++) {
    const verdict = syncOrdinal(context, set, byOrdinal.get(ordinal), () => newPod(set, ordinal, revision));
    if (verdict === 'wait') {
      allReady = false;
      if (!parallel) return false;
    }
  }
  return allReady || parallel;
}

function removeSurplus(context: Context, set: Workload, byOrdinal: Map<number, Pod>): void {
  const parallel = set.spec.podManagementPolicy === 'Parallel';
  const surplus = [...byOrdinal.entries()]
    .filter(([ordinal]) => ordinal >= (set.spec.replicas ?? 1))
    .sort(([a], [b]) => b - a)
    .map(([, pod]) => pod);
  for (const pod of surplus) {
    if (!isDeleting(pod)) {
      deletePod(context.store, pod);
      context
        .recorder({ component: 'statefulset-controller' })
        .record(
          set,
          'Normal',
          'SuccessfulDelete',
          `delete Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`,
        );
    }
    // Ordered scale-down waits for the highest pod to be gone before touching the next.
    if (!parallel) return;
  }
}

function syncStatefulSet(context: Context, set: Workload): ReconcileResult {
  const setName = set.metadata.name ?? '';
  const byOrdinal = new Map<number, Pod>();
  for (const pod of ownedPods(context.store, set, set.spec.selector)) {
    const ordinal = ordinalOf(setName, pod.metadata.name);
    if (ordinal !== undefined) byOrdinal.set(ordinal, pod);
  }
  const revision = `${setName}-${templateHash(set.spec.template)}`;
  if (fillOrdinals(context, set, byOrdinal, revision)) removeSurplus(context, set, byOrdinal);
  const pods = [...byOrdinal.values()].filter((pod) => !isTerminal(pod));
  const ready = pods.filter(isPodReady).length;
  writeStatus(context.store, REFS.statefulSets, set, {
    observedGeneration: set.metadata.generation ?? 1,
    replicas: pods.length,
    readyReplicas: ready,
    availableReplicas: ready,
    currentReplicas: pods.length,
    updatedReplicas: pods.length,
    currentRevision: revision,
    updateRevision: revision,
    collisionCount: 0,
  });
  return undefined;
}

/** Starts the StatefulSet controller. */
export function startStatefulSetController(context: Context): Controller {
  return startWorkloadLoop(context, {
    name: 'statefulset',
    ref: REFS.statefulSets,
    podOwnerKind: 'StatefulSet',
    sync: (set) => syncStatefulSet(context, set),
  });
}
