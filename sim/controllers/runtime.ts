/**
 * What every control loop gets: the store, its Clock, the options, an event recorder factory, and
 * helpers that turn watch events into work-queue keys and tolerate the store's expected failures.
 */
import { StatusError } from '../store/status.ts';
import type { KubeObject, ObjectStore, ResourceRef, Watch, WatchEvent, WatchOptions } from '../store/types.ts';
import { createRecorder, type EventRecorder, type EventSource, SILENT_RECORDER } from './events.ts';
import type { KubeVirtOptions } from './kubevirt/options.ts';
import type { PodTemplate } from './types.ts';

/** A static pod manifest for one node; the node's kubelet keeps a mirror pod for it. */
export interface StaticPod {
  readonly name: string;
  /** Defaults to `kube-system`. */
  readonly namespace?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly spec: PodTemplate['spec'];
}

/** Tuning of the loops. Times are simulated milliseconds (the Clock scales them by `--speed`). */
export interface ControllerOptions {
  /** From a pod being bound to its containers Running and Ready. Default 2000. */
  readonly podStartupDelayMs?: number;
  /** How long a Job's pod runs before it Succeeds (a pod's `sim.drainbridge.io/run-seconds` overrides). Default 5000. */
  readonly jobPodRunMs?: number;
  /** Whether to write Events (Scheduled, Started, Killing, SuccessfulCreate, …). Default true. */
  readonly events?: boolean;
  /** Static pods by node name. */
  readonly staticPods?: Readonly<Record<string, readonly StaticPod[]>>;
  /** Told about a failed reconcile pass (it is retried). Default: ignored unless `SIM_DEBUG` is set. */
  readonly onError?: (controller: string, key: string, error: unknown) => void;
  /** Simulate KubeVirt (CRDs, virt-api webhooks, virt-controller and virt-handler loops). Off when absent. */
  readonly kubevirt?: KubeVirtOptions;
}

export interface ResolvedOptions {
  readonly podStartupDelayMs: number;
  readonly jobPodRunMs: number;
  readonly events: boolean;
  readonly staticPods: Readonly<Record<string, readonly StaticPod[]>>;
  readonly onError: (controller: string, key: string, error: unknown) => void;
}

function defaultOnError(controller: string, key: string, error: unknown): void {
  // Conflicts and races with deletions are normal and retried; only show them when asked.
  if (process.env.SIM_DEBUG) process.stderr.write(`[sim:${controller}] ${key}: ${String(error)}\n`);
}

function nonNegative(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0)
    throw new RangeError(`${field}: must be a non-negative number, got ${value}`);
  return value;
}

/** Fills defaults and checks the numbers (a RangeError names the bad field). */
export function resolveOptions(options: ControllerOptions = {}): ResolvedOptions {
  return {
    podStartupDelayMs: nonNegative(options.podStartupDelayMs, 2000, 'podStartupDelayMs'),
    jobPodRunMs: nonNegative(options.jobPodRunMs, 5000, 'jobPodRunMs'),
    events: options.events ?? true,
    staticPods: options.staticPods ?? {},
    onError: options.onError ?? defaultOnError,
  };
}

/** A change as the loops see it: ADDED, MODIFIED or DELETED (bookmarks and errors are dropped). */
export type Change = WatchEvent & { object: KubeObject };

/** Shared by every loop. */
export interface Context {
  readonly store: ObjectStore;
  readonly options: ResolvedOptions;
  recorder(source: EventSource): EventRecorder;
  /**
   * Subscribes to every change of `ref` through one shared store watch per resource (the store copies
   * each event once per watch, and a pod change interests every loop). Returns the unsubscribe.
   * Handlers must not modify the object: it is shared.
   */
  subscribe(ref: ResourceRef, handler: (change: Change) => void): () => void;
  /** Ends the shared watches. */
  close(): void;
}

export function createContext(store: ObjectStore, options: ResolvedOptions): Context {
  const streams = new Map<string, { watch: Watch; handlers: Set<(change: Change) => void> }>();
  return {
    store,
    options,
    recorder: (source) => (options.events ? createRecorder(store, source) : SILENT_RECORDER),
    subscribe(ref, handler) {
      const key = `${ref.group}/${ref.resource}`;
      let stream = streams.get(key);
      const joining = stream !== undefined;
      if (!stream) {
        const handlers = new Set<(change: Change) => void>();
        const watch = watchAll(store, ref, (change) => {
          for (const each of handlers) each(change);
        });
        stream = { watch, handlers };
        streams.set(key, stream);
      }
      const { handlers } = stream;
      // Joining a running stream, a subscriber still needs the objects that exist: replay them as ADDED.
      if (joining) for (const object of store.list(ref).items) queueMicrotask(() => handler({ type: 'ADDED', object }));
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    close() {
      for (const { watch } of streams.values()) watch.stop();
      streams.clear();
    },
  };
}

/** A running loop. `stop()` ends its watches and timers. */
export interface Controller {
  stop(): void;
}

/** Subscribes to every object of `ref`, calling `onEvent` for ADDED/MODIFIED/DELETED (not bookmarks or errors). */
export function watchAll(
  store: ObjectStore,
  ref: ResourceRef,
  onEvent: (event: Change) => void,
  options: WatchOptions = {},
): Watch {
  return store.watch(ref, options, (event) => {
    if (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED') onEvent(event);
  });
}

/** Whether an error is the store's 404 or 409: the object changed under us; the next pass sees the new state. */
export function isRace(error: unknown): boolean {
  return error instanceof StatusError && (error.code === 404 || error.code === 409);
}

/** Runs a write, treating 404/409 as "someone else got there first" (returns undefined). */
export function tolerateRace<T>(write: () => T): T | undefined {
  try {
    return write();
  } catch (error) {
    if (isRace(error)) return undefined;
    throw error;
  }
}
