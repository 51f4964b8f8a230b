/**
 * A kubelet per node. For the pods bound to its node it: starts them (Pending → Running and Ready
 * after the startup delay), finishes run-to-completion pods (Job pods → Succeeded), removes pods whose
 * deletion grace period has passed (a delete with grace 0, as the real kubelet does once containers
 * stopped), and keeps a mirror pod for each of the node's static pods. While its node is not Ready it
 * does nothing at all: pods there stay exactly as they are, terminating ones included.
 */
import { isNodeReady } from '../../lib/clients/kube/scheduling.ts';
import type { KubeObject } from '../store/types.ts';
import type { EventRecorder } from './events.ts';
import { controllerRefOf, isDeleting, isTerminal, keyOf, splitKey } from './meta.ts';
import { MIRROR_ANNOTATION, mirrorPodFor } from './mirror-pods.ts';
import { runningStatus, succeededStatus } from './pod-status.ts';
import { type ReconcileResult, WorkQueue } from './queue.ts';
import { type Change, type Context, type Controller, tolerateRace } from './runtime.ts';
import { type Node, type Pod, REFS, view } from './types.ts';

/** Pod annotation: seconds a pod runs before it Succeeds (any pod; Job pods default to `jobPodRunMs`). */
export const RUN_SECONDS_ANNOTATION = 'sim.drainbridge.io/run-seconds';
/** Queue key for "make sure every static pod has its mirror pod". */
const STATIC_KEY = '<static>';

/** How long the pod runs before it Succeeds, or undefined for pods that run until deleted. */
export function runDurationMs(pod: Pod, jobPodRunMs: number): number | undefined {
  const annotated = pod.metadata.annotations?.[RUN_SECONDS_ANNOTATION];
  if (annotated !== undefined && Number.isFinite(Number(annotated))) return Number(annotated) * 1000;
  return controllerRefOf(pod)?.kind === 'Job' ? jobPodRunMs : undefined;
}

function hostIPOf(node: Node, index: number): string {
  const internal = node.status?.addresses?.find((a) => a.type === 'InternalIP');
  return internal?.address ?? `192.168.0.${10 + (index % 240)}`;
}

/** What the kubelet reports about its node's own state. */
interface NodeFacts {
  readonly ready: boolean;
  readonly unschedulable: boolean;
}

function factsOf(node: Node): NodeFacts {
  return { ready: isNodeReady(node), unschedulable: node.spec?.unschedulable === true };
}

/** The node events a change causes, worded as the kubelet's node status setters word them. */
export function nodeStatusChanges(
  before: NodeFacts,
  after: NodeFacts,
  nodeName: string,
): { reason: string; message: string }[] {
  const changes: { reason: string; message: string }[] = [];
  const say = (reason: string): void => {
    changes.push({ reason, message: `Node ${nodeName} status is now: ${reason}` });
  };
  if (before.unschedulable !== after.unschedulable) say(after.unschedulable ? 'NodeNotSchedulable' : 'NodeSchedulable');
  if (before.ready !== after.ready) say(after.ready ? 'NodeReady' : 'NodeNotReady');
  return changes;
}

/** One node's kubelet. */
class Kubelet {
  readonly #context: Context;
  readonly #nodeName: string;
  readonly #queue: WorkQueue;
  readonly #recorder: EventRecorder;
  readonly #pendingSince = new Map<string, number>();
  readonly #terminatingSince = new Map<string, number>();
  readonly #podIPs = new Map<string, string>();
  readonly #nodeIndex: number;
  #nextIP = 2;
  #lastSeen: NodeFacts;

  constructor(context: Context, node: Node, nodeIndex: number) {
    const nodeName = node.metadata.name;
    this.#context = context;
    this.#nodeName = nodeName;
    this.#nodeIndex = nodeIndex;
    this.#lastSeen = factsOf(node);
    this.#recorder = context.recorder({ component: 'kubelet', host: nodeName });
    this.#recorder.record(node, 'Normal', 'Starting', 'Starting kubelet.');
    this.#queue = new WorkQueue({
      name: `kubelet/${nodeName}`,
      clock: context.store.clock,
      onError: context.options.onError,
      reconcile: (key) => (key === STATIC_KEY ? this.#ensureMirrorPods() : this.#syncPod(key)),
    });
    // The pods already on the node (the node index); later changes come through podChanged.
    for (const pod of context.store.scan(REFS.pods, { fieldSelector: `spec.nodeName=${nodeName}` })) {
      this.#queue.add(keyOf(pod));
    }
    this.#queue.add(STATIC_KEY);
  }

  /** A change of a pod bound to this node. */
  podChanged(event: Change): void {
    const key = keyOf(event.object);
    if (event.type === 'DELETED') this.#forget(key, event.object);
    else this.#queue.add(key);
  }

  /** The node changed: record what `kubectl describe node` shows, and after a Ready flip look at every pod again. */
  nodeChanged(node: Node): void {
    const facts = factsOf(node);
    for (const change of nodeStatusChanges(this.#lastSeen, facts, node.metadata.name)) {
      this.#recorder.record(node, 'Normal', change.reason, change.message);
    }
    const readyFlipped = facts.ready !== this.#lastSeen.ready;
    this.#lastSeen = facts;
    if (!readyFlipped) return;
    this.#queue.add(STATIC_KEY);
    const pods = this.#context.store.list(REFS.pods, { fieldSelector: `spec.nodeName=${this.#nodeName}` }).items;
    for (const pod of pods) this.#queue.add(keyOf(pod));
  }

  stop(): void {
    this.#queue.stop();
  }

  #node(): Node | undefined {
    const node = this.#context.store.get(REFS.nodes, undefined, this.#nodeName);
    return node ? view<Node>(node) : undefined;
  }

  #forget(key: string, object: KubeObject): void {
    this.#pendingSince.delete(key);
    this.#terminatingSince.delete(key);
    this.#podIPs.delete(key);
    // A deleted mirror pod comes back: the static pod it mirrors still runs.
    if (object.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) this.#queue.add(STATIC_KEY);
  }

  #ensureMirrorPods(): ReconcileResult {
    const node = this.#node();
    if (!node || !isNodeReady(node)) return undefined;
    for (const staticPod of this.#context.options.staticPods[this.#nodeName] ?? []) {
      const mirror = mirrorPodFor(staticPod, node);
      const { namespace, name } = mirror.metadata;
      if (this.#context.store.get(REFS.pods, namespace, name ?? '')) continue;
      tolerateRace(() => this.#context.store.create(REFS.pods, mirror));
    }
    return undefined;
  }

  #syncPod(key: string): ReconcileResult {
    const { namespace, name } = splitKey(key);
    const stored = this.#context.store.get(REFS.pods, namespace, name);
    if (!stored) return undefined;
    const pod = view<Pod>(stored);
    const node = this.#node();
    if (pod.spec.nodeName !== this.#nodeName || !node || !isNodeReady(node)) return undefined;
    if (isDeleting(pod)) return this.#terminate(key, pod);
    if (isTerminal(pod)) return undefined;
    if (pod.status?.phase === 'Running') return this.#finishIfDone(key, pod);
    return this.#start(key, pod, node);
  }

  #terminate(key: string, pod: Pod): ReconcileResult {
    const now = this.#context.store.clock.now();
    if (!this.#terminatingSince.has(key)) {
      this.#terminatingSince.set(key, now);
      for (const container of pod.spec.containers) {
        this.#recorder.record(pod, 'Normal', 'Killing', `Stopping container ${container.name}`);
      }
    }
    const graceMs = (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
    // deletionTimestamp is request time + grace cut to whole seconds; the first sighting bounds it too.
    const stampMs = Date.parse(pod.metadata.deletionTimestamp ?? '') + 999;
    const dueMs = Math.min(
      Number.isNaN(stampMs) ? Number.POSITIVE_INFINITY : stampMs,
      (this.#terminatingSince.get(key) ?? now) + graceMs,
    );
    if (now < dueMs) return { requeueAfterMs: dueMs - now };
    const { namespace, name } = splitKey(key);
    tolerateRace(() => this.#context.store.delete(REFS.pods, { namespace, name }, { gracePeriodSeconds: 0 }));
    return undefined;
  }

  #start(key: string, pod: Pod, node: Node): ReconcileResult {
    const now = this.#context.store.clock.now();
    const since = this.#pendingSince.get(key) ?? now;
    this.#pendingSince.set(key, since);
    const dueMs = since + this.#context.options.podStartupDelayMs;
    if (now < dueMs) return { requeueAfterMs: dueMs - now };
    const placement = { hostIP: hostIPOf(node, this.#nodeIndex), podIP: this.#podIP(key, pod, node) };
    const iso = this.#context.store.clock.nowIso();
    const { namespace, name } = splitKey(key);
    const updated = tolerateRace(() =>
      this.#context.store.mutate(
        REFS.pods,
        { namespace, name },
        (copy) => {
          const current = view<Pod>(copy);
          if (isDeleting(current) || current.status?.phase !== pod.status?.phase) return current;
          return { ...current, status: runningStatus(current, placement, iso) };
        },
        { subresource: 'status' },
      ),
    );
    this.#pendingSince.delete(key);
    if (!updated) return undefined;
    for (const container of pod.spec.containers) {
      this.#recorder.record(pod, 'Normal', 'Started', `Started container ${container.name}`);
    }
    return this.#finishIfDone(key, view<Pod>(updated));
  }

  #finishIfDone(key: string, pod: Pod): ReconcileResult {
    const runMs = runDurationMs(pod, this.#context.options.jobPodRunMs);
    if (runMs === undefined) return undefined;
    const now = this.#context.store.clock.now();
    const dueMs = Date.parse(pod.status?.startTime ?? '') + runMs;
    if (!Number.isNaN(dueMs) && now < dueMs) return { requeueAfterMs: dueMs - now };
    const iso = this.#context.store.clock.nowIso();
    const { namespace, name } = splitKey(key);
    tolerateRace(() =>
      this.#context.store.mutate(
        REFS.pods,
        { namespace, name },
        (copy) => {
          const current = view<Pod>(copy);
          if (isDeleting(current) || current.status?.phase !== 'Running') return current;
          return { ...current, status: succeededStatus(current, iso) };
        },
        { subresource: 'status' },
      ),
    );
    return undefined;
  }

  #podIP(key: string, pod: Pod, node: Node): string {
    if (pod.spec.hostNetwork) return hostIPOf(node, this.#nodeIndex);
    const known = this.#podIPs.get(key);
    if (known) return known;
    const cidr = node.spec?.podCIDR?.split('/')[0]?.split('.');
    const prefix = cidr?.length === 4 ? cidr.slice(0, 3).join('.') : `10.244.${this.#nodeIndex % 256}`;
    const ip = `${prefix}.${this.#nextIP}`;
    this.#nextIP = this.#nextIP >= 254 ? 2 : this.#nextIP + 1;
    this.#podIPs.set(key, ip);
    return ip;
  }
}

/**
 * What the pod garbage collector does for a deleted node: its pods go at once (upstream waits out a
 * short quarantine first). Their controllers then replace them elsewhere.
 */
function removePodsOf(context: Context, nodeName: string): void {
  const { store } = context;
  for (const pod of store.list(REFS.pods, { fieldSelector: `spec.nodeName=${nodeName}` }).items) {
    const key = { namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' };
    tolerateRace(() => store.delete(REFS.pods, key, { gracePeriodSeconds: 0 }));
  }
}

/** Starts a kubelet for every node, present and future; a deleted node's kubelet stops and its pods go. */
export function startKubelets(context: Context): Controller {
  const kubelets = new Map<string, Kubelet>();
  let nodeCount = 0;
  // One pod subscription for every kubelet, handed to the pod's node's kubelet: a subscription per
  // kubelet cost every pod change a test per node (5,000 at scale). nodeName never changes once set,
  // so routing by it loses no transition.
  const unsubscribePods = context.subscribe(REFS.pods, (event) => {
    const nodeName = view<Pod>(event.object).spec.nodeName;
    if (nodeName) kubelets.get(nodeName)?.podChanged(event);
  });
  const unsubscribe = context.subscribe(REFS.nodes, (event) => {
    const name = event.object.metadata.name ?? '';
    const existing = kubelets.get(name);
    if (event.type === 'DELETED') {
      existing?.stop();
      kubelets.delete(name);
      removePodsOf(context, name);
    } else if (existing) {
      existing.nodeChanged(view<Node>(event.object));
    } else {
      kubelets.set(name, new Kubelet(context, view<Node>(event.object), nodeCount++));
    }
  });
  return {
    stop() {
      unsubscribe();
      unsubscribePods();
      for (const kubelet of kubelets.values()) kubelet.stop();
      kubelets.clear();
    },
  };
}
