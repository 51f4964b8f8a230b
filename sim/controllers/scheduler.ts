/**
 * The scheduler: binds Pending pods without `spec.nodeName` to the least-loaded fitting node, using
 * lib/clients/kube/scheduling.ts's filters. A pod no node takes stays Pending with `PodScheduled=False`
 * (reason Unschedulable) and a FailedScheduling event worded as kube-scheduler words it; it is tried
 * again whenever a node or a bound pod changes.
 */
import { type Placement, placePod, type SchedulingPod } from '../../lib/clients/kube/scheduling.ts';
import { isDeleting, isTerminal, keyOf } from './meta.ts';
import { scheduledStatus, unschedulableStatus } from './pod-status.ts';
import { SLOW_PASS_HOLD_FACTOR, WorkQueue } from './queue.ts';
import { type Context, type Controller, tolerateRace } from './runtime.ts';
import { type Node, type Pod, REFS, view } from './types.ts';

const SCHEDULER_NAME = 'default-scheduler';
/** The one queue key: a pass schedules every pending pod, so capacity is shared fairly in creation order. */
const ALL = 'all';

function isSchedulable(pod: Pod): boolean {
  const name = pod.spec.schedulerName ?? SCHEDULER_NAME;
  return !pod.spec.nodeName && name === SCHEDULER_NAME && !isDeleting(pod) && !isTerminal(pod);
}

function byCreation(a: Pod, b: Pod): number {
  const left = `${a.metadata.creationTimestamp ?? ''} ${keyOf(a)}`;
  const right = `${b.metadata.creationTimestamp ?? ''} ${keyOf(b)}`;
  return left < right ? -1 : left > right ? 1 : 0;
}

function bind(context: Context, pod: Pod, nodeName: string): void {
  const key = { namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '' };
  const bound = tolerateRace(() =>
    context.store.mutate(REFS.pods, key, (copy) => {
      const current = view<Pod>(copy);
      // Another writer may have bound or deleted it since the list; binding twice is a 409 upstream.
      if (current.spec.nodeName || isDeleting(current)) return current;
      current.spec.nodeName = nodeName;
      return current;
    }),
  );
  if (!bound || view<Pod>(bound).spec.nodeName !== nodeName) return;
  const now = context.store.clock.nowIso();
  tolerateRace(() =>
    context.store.mutate(REFS.pods, key, (copy) => ({ ...copy, status: scheduledStatus(view<Pod>(copy), now) }), {
      subresource: 'status',
    }),
  );
}

function markUnschedulable(context: Context, pod: Pod, message: string): boolean {
  const previous = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (previous?.status === 'False' && previous.message === message) return false;
  const key = { namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '' };
  const now = context.store.clock.nowIso();
  tolerateRace(() =>
    context.store.mutate(
      REFS.pods,
      key,
      (copy) => ({ ...copy, status: unschedulableStatus(view<Pod>(copy), message, now) }),
      {
        subresource: 'status',
      },
    ),
  );
  return true;
}

/**
 * How many nodes a placement looks at, as kube-scheduler's `numFeasibleNodesToFind` with the default
 * `percentageOfNodesToScore`: every node below 100; above, an adaptive share (50 % less 1 % per 125
 * nodes, at least 5 %), at least 100 nodes. Upstream counts feasible nodes found; here the window is
 * of nodes, and a pod that fits none of its window is placed against every node.
 */
export function nodesToSearch(total: number): number {
  if (total < 100) return total;
  const percent = Math.max(5, 50 - Math.floor(total / 125));
  return Math.max(100, Math.floor((total * percent) / 100));
}

/** Where the next placement's window starts (upstream's `nextStartNodeIndex`), kept across passes. */
interface SearchStart {
  next: number;
}

/** The pod's placement over a window of the nodes from `start`, or over all of them when none fits there. */
function placeInWindow(
  pod: Pod,
  nodes: readonly Node[],
  podsByNode: ReadonlyMap<string, readonly SchedulingPod[]>,
  start: SearchStart,
): Placement<Node> {
  const size = nodesToSearch(nodes.length);
  if (size >= nodes.length) return placePod(pod, nodes, podsByNode);
  const from = start.next % nodes.length;
  const window = [...nodes.slice(from, from + size), ...nodes.slice(0, Math.max(0, from + size - nodes.length))];
  start.next = (from + size) % nodes.length;
  const placement = placePod(pod, window, podsByNode);
  return placement.fitting.length > 0 ? placement : placePod(pod, nodes, podsByNode);
}

/** One pass: every pending pod, oldest first, against the nodes as the earlier bindings left them. */
function schedulePending(context: Context, start: SearchStart): void {
  const recorder = context.recorder({ component: SCHEDULER_NAME });
  // Read, not copied (scan): a pass reads every pod and node, and changes them only through writes.
  const nodes = context.store.scan(REFS.nodes).map((n) => view<Node>(n));
  const pods = context.store.scan(REFS.pods).map((p) => view<Pod>(p));
  const podsByNode = new Map<string, SchedulingPod[]>();
  for (const pod of pods) {
    if (!pod.spec.nodeName) continue;
    const list = podsByNode.get(pod.spec.nodeName) ?? [];
    list.push(pod);
    podsByNode.set(pod.spec.nodeName, list);
  }
  for (const pod of pods.filter(isSchedulable).sort(byCreation)) {
    const placement = placeInWindow(pod, nodes, podsByNode, start);
    const target = placement.fitting[0];
    if (target) {
      const nodeName = target.metadata.name;
      bind(context, pod, nodeName);
      podsByNode.set(nodeName, [...(podsByNode.get(nodeName) ?? []), { ...pod, spec: { ...pod.spec, nodeName } }]);
      recorder.record(pod, 'Normal', 'Scheduled', `Successfully assigned ${keyOf(pod)} to ${nodeName}`);
    } else if (markUnschedulable(context, pod, placement.message ?? '')) {
      recorder.record(pod, 'Warning', 'FailedScheduling', placement.message ?? '');
    }
  }
}

/** Whether a pod event can change a scheduling decision: a new pending pod, or capacity freed or taken. */
function affectsScheduling(type: string, pod: Pod): boolean {
  if (type === 'DELETED') return true;
  return !pod.spec.nodeName || isTerminal(pod);
}

/** Starts the scheduler. */
export function startScheduler(context: Context): Controller {
  /** Keys of the pods waiting for a node, as the pod events tell them. */
  const pending = new Set<string>();
  const start: SearchStart = { next: 0 };
  const queue = new WorkQueue({
    name: 'scheduler',
    clock: context.store.clock,
    onError: context.options.onError,
    holdFactor: SLOW_PASS_HOLD_FACTOR,
    reconcile: () => {
      // With nothing to place a pass would still read every pod and node: at thousands of nodes each
      // node change (a label, a cordon) cost a read of the whole cluster for nothing.
      if (pending.size > 0) schedulePending(context, start);
      return undefined;
    },
  });
  const unsubscribes = [
    context.subscribe(REFS.nodes, () => queue.add(ALL)),
    context.subscribe(REFS.pods, (event) => {
      const pod = view<Pod>(event.object);
      if (event.type !== 'DELETED' && isSchedulable(pod)) pending.add(keyOf(pod));
      else pending.delete(keyOf(pod));
      if (affectsScheduling(event.type, pod)) queue.add(ALL);
    }),
  ];
  return {
    stop() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      queue.stop();
    },
  };
}
