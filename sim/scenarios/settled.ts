/**
 * Whether a started scenario has settled: every pod Running and Ready (or Succeeded), every workload
 * at its desired ready count, every Job finished, every static pod mirrored, every PDB observed, and
 * with KubeVirt simulated every VMI Running with its PDB and every VM that should run running. Tests,
 * the benchmark and `drainbridge sim` wait on this before they begin.
 */
import { kubeVirtInstalled, unsettledKubeVirt } from '../controllers/kubevirt/settled.ts';
import type { KubeObject, ObjectStore } from '../store/types.ts';
import type { Scenario } from './load.ts';

type Fields = Record<string, unknown>;

const field = (object: KubeObject, part: 'spec' | 'status'): Fields => (object[part] ?? {}) as Fields;

function podSettled(pod: KubeObject): boolean {
  const status = field(pod, 'status');
  if (status.phase === 'Succeeded') return true;
  const conditions = (status.conditions ?? []) as { type: string; status: string }[];
  return status.phase === 'Running' && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

function observed(object: KubeObject): boolean {
  return Number(field(object, 'status').observedGeneration ?? 0) >= Number(object.metadata.generation ?? 1);
}

function replicasReady(object: KubeObject): boolean {
  const wanted = Number(field(object, 'spec').replicas ?? 1);
  return observed(object) && Number(field(object, 'status').readyReplicas ?? 0) === wanted;
}

function daemonSetReady(object: KubeObject): boolean {
  const status = field(object, 'status');
  return (
    observed(object) &&
    status.desiredNumberScheduled !== undefined &&
    status.numberReady === status.desiredNumberScheduled
  );
}

function jobFinished(job: KubeObject): boolean {
  const conditions = (field(job, 'status').conditions ?? []) as { type: string; status: string }[];
  return conditions.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

const KUBEVIRT_REFS = [
  { group: 'kubevirt.io', resource: 'virtualmachineinstances' },
  { group: 'kubevirt.io', resource: 'virtualmachines' },
];

/** What is not settled yet, as short phrases (empty when settled). */
export function unsettled(store: ObjectStore, scenario: Scenario): string[] {
  // Read, not copied (scan): a check runs at every burst of events, and copying 25,000 pods each time
  // made settling a 5,000-node cluster take minutes.
  const list = (group: string, resource: string): readonly KubeObject[] => store.scan({ group, resource });
  const name = (o: KubeObject): string => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;
  const pods = list('', 'pods');
  const mirrors = pods.filter((p) => p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined).length;
  const staticCount = Object.values(scenario.staticPods).reduce((sum, list) => sum + list.length, 0);
  return [
    ...pods.filter((p) => !podSettled(p)).map(name),
    ...[...list('apps', 'deployments'), ...list('apps', 'replicasets'), ...list('apps', 'statefulsets')]
      .filter((o) => !replicasReady(o))
      .map(name),
    ...list('apps', 'daemonsets')
      .filter((o) => !daemonSetReady(o))
      .map(name),
    ...list('batch', 'jobs')
      .filter((o) => !jobFinished(o))
      .map(name),
    ...list('policy', 'poddisruptionbudgets')
      .filter((o) => !observed(o))
      .map(name),
    ...(mirrors < staticCount ? [`${staticCount - mirrors} mirror pod(s) missing`] : []),
    ...unsettledKubeVirt(store),
  ];
}

/** Whether the scenario has settled. */
export function isSettled(store: ObjectStore, scenario: Scenario): boolean {
  return unsettled(store, scenario).length === 0;
}

const WATCHED = [
  { group: '', resource: 'pods' },
  { group: 'apps', resource: 'deployments' },
  { group: 'apps', resource: 'daemonsets' },
  { group: 'apps', resource: 'statefulsets' },
  { group: 'batch', resource: 'jobs' },
  { group: 'policy', resource: 'poddisruptionbudgets' },
];

function notSettledError(store: ObjectStore, scenario: Scenario, why: string): Error {
  return new Error(`scenario ${scenario.name} ${why}: ${unsettled(store, scenario).slice(0, 5).join(', ')}`);
}

/**
 * Resolves once the scenario has settled: checked at once (a scenario with nothing to wait for is
 * settled already, and produces no change to react to), then after every burst of changes. Rejects
 * after `timeoutMs` of simulated time, or as soon as the store is closed, with what is still unsettled.
 */
export function whenSettled(store: ObjectStore, scenario: Scenario, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const closed = store.clock.stopped;
    if (closed.aborted) {
      reject(notSettledError(store, scenario, 'cannot settle: the store is closed'));
      return;
    }
    // One check per burst of events: a check lists every object, events come by the hundred.
    let queued = false;
    let done = false;
    const onClosed = (): void => finish(notSettledError(store, scenario, 'did not settle before the store was closed'));
    const finish = (error?: Error): void => {
      if (done) return;
      done = true;
      for (const watch of watches) watch.stop();
      timer.cancel();
      closed.removeEventListener('abort', onClosed);
      if (error) reject(error);
      else resolve();
    };
    const check = (): void => {
      if (queued || done) return;
      queued = true;
      store.clock.setTimeout(() => {
        queued = false;
        if (!done && isSettled(store, scenario)) finish();
      }, 0);
    };
    const timer = store.clock.setTimeout(
      () => finish(notSettledError(store, scenario, `did not settle in ${timeoutMs} ms`)),
      timeoutMs,
    );
    closed.addEventListener('abort', onClosed, { once: true });
    const kubevirtRefs = kubeVirtInstalled(store) ? KUBEVIRT_REFS : [];
    const watches = [...WATCHED, ...kubevirtRefs].map((ref) => store.watch(ref, {}, check));
    check();
  });
}
