/**
 * What the workload controllers (ReplicaSet, Deployment, StatefulSet, DaemonSet, Job) share: the
 * loop skeleton (owner watch + pod watch → owner key), finding owned pods, creating pods from the
 * template, choosing which pods go first on scale-down, and writing status only when it changed.
 */
import { formatSelector, type LabelSelector, requirementsOf } from '../../lib/clients/kube/selectors.ts';
import type { KubeObject, ObjectStore, ResourceRef } from '../store/types.ts';
import { controllerRefOf, controllerRefTo, isControlledBy, isPodReady, keyOf, sameJson, splitKey } from './meta.ts';
import { PodFacts } from './pod-facts.ts';
import { type ReconcileResult, SLOW_PASS_HOLD_FACTOR, WorkQueue } from './queue.ts';
import { type Change, type Context, type Controller, tolerateRace } from './runtime.ts';
import { type Pod, type PodSpec, REFS, view, type Workload } from './types.ts';

/** A structured selector in the string form the store's list takes. */
export function selectorString(selector: LabelSelector): string {
  return formatSelector(requirementsOf(selector));
}

/**
 * Pods in the owner's namespace whose controller reference points at it and that `selector` selects. The store's own objects, not copies (scan): read them, change
 * them only through the store's writes.
 */
export function ownedPods(store: ObjectStore, owner: KubeObject, selector?: LabelSelector): Pod[] {
  const namespace = owner.metadata.namespace;
  // The owner index: the pods with a reference to this owner, not every pod (thousands per workload at scale).
  const options = {
    ...(namespace ? { namespace } : {}),
    ...(selector ? { labelSelector: selectorString(selector) } : {}),
    ...(owner.metadata.uid ? { ownerUid: owner.metadata.uid } : {}),
  };
  return store
    .scan(REFS.pods, options)
    .filter((pod) => isControlledBy(pod, owner))
    .map((pod) => view<Pod>(pod));
}

/** The parts of a new pod beyond the template. */
export interface PodExtras {
  readonly name?: string;
  readonly labels?: Record<string, string>;
  readonly spec?: Partial<PodSpec>;
}

/** A pod from the owner's template: labels and annotations copied, the owner as controller. */
export function podFromTemplate(owner: Workload, extras: PodExtras = {}): KubeObject {
  const template = owner.spec.template;
  const naming = extras.name ? { name: extras.name } : { generateName: `${owner.metadata.name}-` };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...naming,
      namespace: owner.metadata.namespace ?? 'default',
      labels: { ...template.metadata?.labels, ...extras.labels },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [controllerRefTo(owner)],
    },
    spec: { ...structuredClone(template.spec), ...extras.spec },
  };
}

function creationOf(pod: Pod): string {
  return pod.metadata.creationTimestamp ?? '';
}

/**
 * Scale-down order (upstream `ActivePodsWithRanks`, simplified): unbound before bound, Pending before
 * Running, not Ready before Ready, newer before older.
 */
export function deletionOrder(a: Pod, b: Pod): number {
  const rank = (pod: Pod): number[] => [
    pod.spec.nodeName ? 1 : 0,
    pod.status?.phase === 'Running' ? 1 : 0,
    isPodReady(pod) ? 1 : 0,
  ];
  const [ra, rb] = [rank(a), rank(b)];
  for (let i = 0; i < ra.length; i++) {
    const diff = (ra[i] ?? 0) - (rb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return creationOf(b).localeCompare(creationOf(a));
}

/** Writes `status` to the object's status subresource unless it already holds it. */
export function writeStatus(
  store: ObjectStore,
  ref: ResourceRef,
  object: KubeObject,
  status: Record<string, unknown>,
): void {
  if (sameJson(object.status, status)) return;
  const key = { namespace: object.metadata.namespace, name: object.metadata.name ?? '' };
  tolerateRace(() => store.mutate(ref, key, (copy) => ({ ...copy, status }), { subresource: 'status' }));
}

/** Deletes a pod the way controllers do (the pod's own grace period); a pod already gone is fine. */
export function deletePod(store: ObjectStore, pod: Pod): void {
  tolerateRace(() => store.delete(REFS.pods, { namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' }));
}

/** Creates a pod; a name already taken or a namespace gone is left to the next pass. */
export function createPod(store: ObjectStore, pod: KubeObject): Pod | undefined {
  const created = tolerateRace(() => store.create(REFS.pods, pod));
  return created ? view<Pod>(created) : undefined;
}

/** Another resource whose changes re-sync some owners (nodes → every DaemonSet, a ReplicaSet → its Deployment). */
export interface Trigger {
  readonly ref: ResourceRef;
  /** Queue keys (`namespace/name`) of the owners to re-sync. */
  readonly keysFor: (object: KubeObject, type: Change['type']) => string[];
}

/** The wiring of one workload controller. */
export interface WorkloadLoop {
  readonly name: string;
  readonly ref: ResourceRef;
  /** The kind in pods' controller references; pods whose controller has it re-sync their owner. */
  readonly podOwnerKind?: string;
  /** One pass for one owner (already read from the store and not being deleted). */
  readonly sync: (owner: Workload) => ReconcileResult;
  readonly triggers?: readonly Trigger[];
}

/** Runs a workload loop: owner, pod and trigger events become owner keys; each key gets one `sync`. */
export function startWorkloadLoop(context: Context, loop: WorkloadLoop): Controller {
  const { store } = context;
  const queue = new WorkQueue({
    name: loop.name,
    clock: store.clock,
    onError: context.options.onError,
    holdFactor: SLOW_PASS_HOLD_FACTOR,
    reconcile: (key) => {
      const { namespace, name } = splitKey(key);
      const owner = store.get(loop.ref, namespace, name);
      if (!owner || owner.metadata.deletionTimestamp) return undefined;
      return loop.sync(view<Workload>(owner));
    },
  });
  const unsubscribes = [
    context.subscribe(loop.ref, (event) => queue.add(keyOf(event.object))),
    ...(loop.triggers ?? []).map((trigger) =>
      context.subscribe(trigger.ref, (event) => {
        for (const key of trigger.keysFor(event.object, event.type)) queue.add(key);
      }),
    ),
  ];
  if (loop.podOwnerKind) {
    const kind = loop.podOwnerKind;
    const facts = new PodFacts();
    unsubscribes.push(
      context.subscribe(REFS.pods, (event) => {
        if (!facts.matters(event)) return;
        const ref = controllerRefOf(event.object);
        if (ref?.kind === kind) queue.add(`${event.object.metadata.namespace}/${ref.name}`);
      }),
    );
  }
  return {
    stop() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      queue.stop();
    },
  };
}
