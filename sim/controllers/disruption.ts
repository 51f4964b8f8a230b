/**
 * The disruption (PDB) controller: recomputes each PodDisruptionBudget's status whenever a pod in its
 * namespace, the budget itself, or a workload's scale changes, with pdb-math.ts's arithmetic, and
 * again when a `disruptedPods` entry expires. The eviction handler (sim/store side) decrements
 * `disruptionsAllowed` and adds `disruptedPods` entries; this loop settles the numbers afterwards.
 */
import { selectorMatches } from '../../lib/clients/kube/selectors.ts';
import type { AdmissionHook, KubeObject, ObjectStore } from '../store/types.ts';
import { controllerRefOf, keyOf, splitKey } from './meta.ts';
import { type BudgetCondition, type BudgetSpec, computeBudgetStatus, type OwnerReference } from './pdb-math.ts';
import { PodFacts } from './pod-facts.ts';
import { type ReconcileResult, SLOW_PASS_HOLD_FACTOR, WorkQueue } from './queue.ts';
import type { Context, Controller } from './runtime.ts';
import { type Pod, REFS, view, type Workload } from './types.ts';
import { selectorString, writeStatus } from './workload.ts';

interface Budget extends KubeObject {
  spec?: BudgetSpec & { selector?: Parameters<typeof selectorMatches>[0] };
  status?: { disruptedPods?: Record<string, string>; conditions?: BudgetCondition[]; expectedPods?: number };
}

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
}

function scaleOfWorkload(
  object: KubeObject | undefined,
  ref: OwnerReference,
): { uid: string; scale: number } | undefined {
  if (!object || object.metadata.uid !== ref.uid) return undefined;
  return { uid: ref.uid, scale: view<Workload>(object).spec.replicas ?? 1 };
}

/**
 * The scale behind a pod's controller, as the controller's finders resolve it: a ReplicaSet owned by
 * a Deployment answers with the Deployment; StatefulSets and other kinds with a `scale` subresource
 * answer with their own `spec.replicas`. DaemonSets and Jobs have no scale: a percentage or
 * `maxUnavailable` budget over their pods fails to sync, as upstream.
 */
export function lookupScale(
  store: ObjectStore,
  namespace: string,
  ref: OwnerReference,
): { uid: string; scale: number } | undefined {
  if (ref.kind === 'ReplicaSet' && groupOf(ref.apiVersion) === 'apps') {
    const rs = store.get(REFS.replicaSets, namespace, ref.name);
    if (!rs || rs.metadata.uid !== ref.uid) return undefined;
    const owner = controllerRefOf(rs);
    if (owner?.kind === 'Deployment') return scaleOfWorkload(store.get(REFS.deployments, namespace, owner.name), owner);
    return scaleOfWorkload(rs, ref);
  }
  const type = store.registry.byKind(groupOf(ref.apiVersion), ref.kind);
  if (!type?.subresources.includes('scale')) return undefined;
  return scaleOfWorkload(store.get({ group: type.group, resource: type.resource }, namespace, ref.name), ref);
}

function syncBudget(context: Context, budget: Budget): ReconcileResult {
  const { store } = context;
  const namespace = budget.metadata.namespace ?? 'default';
  const selector = budget.spec?.selector;
  // A missing selector matches nothing (policy/v1); an empty one matches every pod in the namespace.
  // Read, not copied (scan): a budget over thousands of pods is re-synced at every change of one.
  const items = selector ? store.scan(REFS.pods, { namespace, labelSelector: selectorString(selector) }) : [];
  const pods = items
    .filter((pod) => selectorMatches(selector, pod.metadata.labels))
    .map((pod) => view<Pod>(pod))
    .map((pod) => ({ ...pod, metadata: { ...pod.metadata, name: pod.metadata.name ?? '' } }));
  const nowMs = store.clock.now();
  const sync = computeBudgetStatus({
    generation: budget.metadata.generation ?? 1,
    spec: budget.spec ?? {},
    ...(budget.status ? { previous: budget.status } : {}),
    pods,
    scaleOf: (ref) => lookupScale(store, namespace, ref),
    nowMs,
  });
  const before = JSON.stringify(budget.status?.conditions ?? []);
  // Upstream records NoPods on every sync without pods and its recorder folds the repeats into one
  // event; recording only on the way into "no pods" (or at the first sync) gives the same picture.
  if (pods.length === 0 && budget.status?.expectedPods !== 0) {
    context.recorder({ component: 'controllermanager' }).record(budget, 'Normal', 'NoPods', 'No matching pods found');
  }
  writeStatus(store, REFS.pdbs, budget, { ...sync.status });
  if (sync.error && before !== JSON.stringify(sync.status.conditions)) {
    context
      .recorder({ component: 'controllermanager' })
      .record(
        budget,
        'Warning',
        'CalculateExpectedPodCountFailed',
        `Failed to calculate the number of expected pods: ${sync.error}`,
      );
  }
  return sync.recheckAtMs === undefined ? undefined : { requeueAfterMs: Math.max(1, sync.recheckAtMs - nowMs) };
}

/**
 * Before an eviction is judged, the budgets of its namespace with a pass waiting (a pod changed since
 * their status was written, the pass held because budgets over thousands of pods are slow) get it
 * now: the eviction subresource trusts `disruptionsAllowed`, and a status older than the pods could
 * let a budget be broken. Never answers: the eviction handler decides.
 */
function settleBeforeEviction(store: ObjectStore, queue: WorkQueue): AdmissionHook {
  return {
    name: 'disruption-controller-settle',
    admit: (request) => {
      const isEviction = request.group === '' && request.resource === 'pods' && request.subresource === 'eviction';
      if (isEviction && request.verb === 'create' && request.namespace) {
        for (const budget of store.scan(REFS.pdbs, { namespace: request.namespace })) queue.settle(keyOf(budget));
      }
      return undefined;
    },
  };
}

/** Starts the disruption controller. */
export function startDisruptionController(context: Context): Controller {
  const { store } = context;
  const queue = new WorkQueue({
    name: 'disruption',
    clock: store.clock,
    onError: context.options.onError,
    holdFactor: SLOW_PASS_HOLD_FACTOR,
    reconcile: (key) => {
      const { namespace, name } = splitKey(key);
      const budget = store.get(REFS.pdbs, namespace, name);
      return budget ? syncBudget(context, budget as Budget) : undefined;
    },
  });
  const budgetsIn = (namespace: string | undefined): void => {
    // Read, not copied (scan): this runs at every pod change.
    for (const budget of store.scan(REFS.pdbs, namespace ? { namespace } : {})) queue.add(keyOf(budget));
  };
  const podFacts = new PodFacts();
  const unsubscribes = [
    store.admission.add(settleBeforeEviction(store, queue)),
    context.subscribe(REFS.pdbs, (event) => queue.add(keyOf(event.object))),
    context.subscribe(REFS.pods, (event) => {
      if (podFacts.matters(event)) budgetsIn(event.object.metadata.namespace);
    }),
    ...[REFS.replicaSets, REFS.deployments, REFS.statefulSets].map((ref) =>
      context.subscribe(ref, (event) => budgetsIn(event.object.metadata.namespace)),
    ),
  ];
  return {
    stop() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      queue.stop();
    },
  };
}
