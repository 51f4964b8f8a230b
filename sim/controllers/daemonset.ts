/**
 * The DaemonSet controller: one pod per eligible node. A node is eligible when the pod template's
 * nodeSelector / required node affinity match it and the node's NoSchedule/NoExecute taints are
 * tolerated — with the tolerations every DaemonSet pod gets, so cordoned nodes stay eligible. Pods are
 * placed directly on their node (`spec.nodeName`, plus the `metadata.name` node affinity upstream
 * sets). A pod stays on a node that turned ineligible only through a NoSchedule taint; pods on nodes
 * it no longer matches or that vanished are deleted; failed ones are replaced. Not modelled:
 * rolling updates, pod capacity (a full node still gets its daemon pod), minReadySeconds.
 */
import {
  effectiveTaints,
  firstUntoleratedTaint,
  isTolerated,
  matchesNodeSelector,
  matchesRequiredNodeAffinity,
  type Toleration,
} from '../../lib/clients/kube/scheduling.ts';
import type { KubeObject } from '../store/types.ts';
import { isDeleting, isPodReady, isTerminal, keyOf, templateHash } from './meta.ts';
import type { ReconcileResult } from './queue.ts';
import type { Change, Context, Controller } from './runtime.ts';
import { type Node, type Pod, type PodSpec, REFS, view, type Workload } from './types.ts';
import { createPod, deletePod, ownedPods, podFromTemplate, startWorkloadLoop, writeStatus } from './workload.ts';

/** The tolerations the DaemonSet controller adds to every daemon pod (`AddOrUpdateDaemonPodTolerations`). */
export function daemonTolerations(spec: PodSpec): Toleration[] {
  const added: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec.hostNetwork)
    added.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  const own = spec.tolerations ?? [];
  const missing = added.filter((t) => !own.some((o) => o.key === t.key && o.effect === t.effect));
  return [...own, ...missing];
}

/**
 * Whether the DaemonSet should start a pod on `node`, and whether a pod already there may stay: as
 * upstream, a NoSchedule taint only stops new pods; a NoExecute one the pod does not tolerate evicts.
 */
export function daemonPlacement(set: Workload, node: Node): { shouldRun: boolean; shouldContinue: boolean } {
  const spec = set.spec.template.spec;
  const pod = { metadata: {}, spec: { ...spec, tolerations: daemonTolerations(spec) } };
  if (!matchesNodeSelector(pod, node) || !matchesRequiredNodeAffinity(pod, node)) {
    return { shouldRun: false, shouldContinue: false };
  }
  if (!firstUntoleratedTaint(pod, node)) return { shouldRun: true, shouldContinue: true };
  const evicting = effectiveTaints(node).some((t) => t.effect === 'NoExecute' && !isTolerated(t, pod.spec.tolerations));
  return { shouldRun: false, shouldContinue: !evicting };
}

function daemonPodFor(set: Workload, nodeName: string): ReturnType<typeof podFromTemplate> {
  const spec = set.spec.template.spec;
  return podFromTemplate(set, {
    labels: {
      'controller-revision-hash': templateHash(set.spec.template),
      'pod-template-generation': String(set.metadata.generation ?? 1),
    },
    spec: {
      nodeName,
      tolerations: daemonTolerations(spec),
      affinity: {
        ...spec.affinity,
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
          },
        },
      },
    },
  });
}

/** Creates or deletes pods on one node; returns whether it is eligible and its live pods after the pass. */
function syncNode(
  context: Context,
  set: Workload,
  node: Node,
  pods: readonly Pod[],
): { eligible: boolean; live: Pod[] } {
  const recorder = context.recorder({ component: 'daemonset-controller' });
  const { shouldRun, shouldContinue } = daemonPlacement(set, node);
  for (const failed of pods.filter((p) => p.status?.phase === 'Failed' && !isDeleting(p)))
    deletePod(context.store, failed);
  const live = pods.filter((p) => !isTerminal(p) && !isDeleting(p));
  const keep = shouldContinue ? 1 : 0;
  for (const extra of live.slice(keep)) {
    deletePod(context.store, extra);
    recorder.record(set, 'Normal', 'SuccessfulDelete', `Deleted pod: ${extra.metadata.name}`);
  }
  if (shouldRun && live.length === 0) {
    const created = createPod(context.store, daemonPodFor(set, node.metadata.name));
    if (created) recorder.record(set, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`);
  }
  return { eligible: shouldRun, live: live.slice(0, keep) };
}

function podsByNode(context: Context, set: Workload): Map<string, Pod[]> {
  const byNode = new Map<string, Pod[]>();
  for (const pod of ownedPods(context.store, set, set.spec.selector)) {
    const list = byNode.get(pod.spec.nodeName ?? '') ?? [];
    list.push(pod);
    byNode.set(pod.spec.nodeName ?? '', list);
  }
  return byNode;
}

function syncDaemonSet(context: Context, set: Workload): ReconcileResult {
  const nodes = context.store.scan(REFS.nodes).map((n) => view<Node>(n));
  const byNode = podsByNode(context, set);
  const counts = { desired: 0, scheduled: 0, misscheduled: 0, ready: 0 };
  for (const node of nodes) {
    const { eligible, live } = syncNode(context, set, node, byNode.get(node.metadata.name) ?? []);
    byNode.delete(node.metadata.name);
    const running = live.length > 0 ? 1 : 0;
    if (eligible) {
      counts.desired++;
      counts.scheduled += running;
      counts.ready += live.filter(isPodReady).length;
    } else counts.misscheduled += running;
  }
  // What is left sits on nodes that no longer exist (or none): the pod GC would remove it.
  for (const orphans of byNode.values()) for (const pod of orphans) if (!isDeleting(pod)) deletePod(context.store, pod);
  const { desired, scheduled, misscheduled, ready } = counts;
  writeStatus(context.store, REFS.daemonSets, set, {
    currentNumberScheduled: scheduled,
    desiredNumberScheduled: desired,
    numberMisscheduled: misscheduled,
    numberReady: ready,
    numberAvailable: ready,
    ...(desired - ready > 0 ? { numberUnavailable: desired - ready } : {}),
    updatedNumberScheduled: scheduled,
    observedGeneration: set.metadata.generation ?? 1,
  });
  return undefined;
}

/**
 * Which DaemonSets a node change re-syncs: all of them when the node comes or goes, else only when
 * where daemon pods should run or may stay on it changed (upstream's `shouldIgnoreNodeUpdate`) — a
 * label or a cordon that changes no placement costs no pass over every node.
 */
function nodeTrigger(context: Context): (object: KubeObject, type: Change['type']) => string[] {
  const placementsSeen = new Map<string, string>();
  return (object, type) => {
    const name = object.metadata.name ?? '';
    const sets = context.store.scan(REFS.daemonSets);
    if (type === 'DELETED') {
      placementsSeen.delete(name);
      return sets.map(keyOf);
    }
    const node = view<Node>(object);
    const placements = sets
      .map((set) => {
        const { shouldRun, shouldContinue } = daemonPlacement(view<Workload>(set), node);
        return `${keyOf(set)}:${shouldRun}:${shouldContinue}`;
      })
      .join(',');
    if (placementsSeen.get(name) === placements) return [];
    placementsSeen.set(name, placements);
    return sets.map(keyOf);
  };
}

/** Starts the DaemonSet controller. */
export function startDaemonSetController(context: Context): Controller {
  return startWorkloadLoop(context, {
    name: 'daemonset',
    ref: REFS.daemonSets,
    podOwnerKind: 'DaemonSet',
    sync: (set) => syncDaemonSet(context, set),
    triggers: [{ ref: REFS.nodes, keysFor: nodeTrigger(context) }],
  });
}
