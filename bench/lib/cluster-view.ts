/**
 * What the benchmark reads straight from a simulator's store (never through HTTP, so nothing here shows
 * in the request log): the pods a drain must move, and the inputs of the physical floor.
 */
import { matchesAll, parseSelector } from '../../lib/clients/kube/selectors.ts';
import type { Simulator } from '../../sim/index.ts';
import type { FloorBudget, FloorPod, FloorTimings, Replacement } from './floor.ts';

export const PODS = { group: '', resource: 'pods' };
export const PDBS = { group: 'policy', resource: 'poddisruptionbudgets' };

export interface PodView {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; controller?: boolean }[];
    deletionTimestamp?: string;
  };
  spec?: { terminationGracePeriodSeconds?: number };
  status?: { phase?: string };
}

interface PdbView {
  metadata: { name: string; namespace?: string };
  spec?: { selector?: FloorBudget['selector'] };
  status?: { disruptionsAllowed?: number };
}

const keyOf = (pod: PodView): string => `${pod.metadata.namespace}/${pod.metadata.name}`;

/** Pods on `node` that a drain with `podSelector` must remove: not DaemonSet, mirror or finished. */
export function drainablePodsOn(sim: Simulator, node: string, podSelector: string): PodView[] {
  const requirements = parseSelector(podSelector);
  return (sim.store.list(PODS, { fieldSelector: `spec.nodeName=${node}` }).items as unknown as PodView[])
    .filter((pod) => matchesAll(requirements, pod.metadata.labels))
    .filter((pod) => !pod.metadata.ownerReferences?.some((owner) => owner.controller && owner.kind === 'DaemonSet'))
    .filter((pod) => pod.metadata.annotations?.['kubernetes.io/config.mirror'] === undefined)
    .filter((pod) => pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed');
}

/** `namespace/name` of the pods a drain must remove. */
export function drainablePods(sim: Simulator, node: string, podSelector: string): string[] {
  return drainablePodsOn(sim, node, podSelector).map(keyOf);
}

/** Every PodDisruptionBudget in the store, as the eviction API sees it. */
export function budgetsIn(sim: Simulator): FloorBudget[] {
  return (sim.store.list(PDBS).items as unknown as PdbView[]).map((pdb) => ({
    namespace: pdb.metadata.namespace ?? '',
    name: pdb.metadata.name,
    selector: pdb.spec?.selector,
    disruptionsAllowed: pdb.status?.disruptionsAllowed ?? 0,
  }));
}

function replacementOf(pod: PodView): Replacement {
  const owner = pod.metadata.ownerReferences?.find((ref) => ref.controller)?.kind;
  if (owner === 'ReplicaSet') return 'when-terminating';
  if (owner === 'StatefulSet') return 'when-gone';
  return 'never';
}

/** The floor's inputs for draining `node` of the settled cluster `sim`. */
export function floorInputs(
  sim: Simulator,
  node: string,
  podSelector: string,
): { pods: FloorPod[]; budgets: FloorBudget[]; timings: FloorTimings } {
  const pods = drainablePodsOn(sim, node, podSelector).map((pod) => ({
    key: keyOf(pod),
    namespace: pod.metadata.namespace ?? '',
    labels: pod.metadata.labels ?? {},
    graceSeconds: pod.spec?.terminationGracePeriodSeconds ?? 30,
    replacement: replacementOf(pod),
  }));
  const timings = {
    startupSeconds: (sim.scenario?.podStartupDelayMs ?? 2000) / 1000,
    // Simulated pods are Ready as soon as they run (no readiness probes).
    readinessSeconds: 0,
    speed: sim.clock.speed,
  };
  return { pods, budgets: budgetsIn(sim), timings };
}
