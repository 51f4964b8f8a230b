/**
 * The node lifecycle controller's NoSchedule tainting pass, for the one taint a cordon causes: a node
 * with `spec.unschedulable: true` gets `node.kubernetes.io/unschedulable:NoSchedule` (with `timeAdded`),
 * and loses it when the cordon goes (kube-controller-manager's `doNoScheduleTaintingPass`, which sets
 * `timeAdded` on every taint it adds in `SwapNodeControllerTaint`). Other taints are left alone: the
 * pass only compares the taints it manages. The condition taints (not-ready, pressure) are not written
 * here: the scheduler counts a NotReady node as tainted by itself.
 */
import { TAINT_KEYS } from '../../lib/clients/kube/scheduling.ts';
import { WorkQueue } from './queue.ts';
import { type Context, type Controller, tolerateRace } from './runtime.ts';
import { type Node, REFS, view } from './types.ts';

type Taint = NonNullable<NonNullable<Node['spec']>['taints']>[number] & { readonly timeAdded?: string };

const isCordonTaint = (taint: Taint): boolean =>
  taint.key === TAINT_KEYS.unschedulable && taint.effect === 'NoSchedule';

/**
 * The taints `node` should carry after the pass, or undefined when they are right already. Pure: `nowIso`
 * is the `timeAdded` of an added taint.
 */
export function cordonTaints(node: Node, nowIso: string): Taint[] | undefined {
  const taints = node.spec?.taints ?? [];
  const has = taints.some(isCordonTaint);
  const wants = node.spec?.unschedulable === true;
  if (has === wants) return undefined;
  if (wants) return [...taints, { key: TAINT_KEYS.unschedulable, effect: 'NoSchedule', timeAdded: nowIso }];
  return taints.filter((taint) => !isCordonTaint(taint));
}

function syncNode(context: Context, name: string): undefined {
  const { store } = context;
  const stored = store.get(REFS.nodes, undefined, name);
  if (!stored || !cordonTaints(view<Node>(stored), store.clock.nowIso())) return undefined;
  tolerateRace(() =>
    store.mutate(REFS.nodes, { name }, (copy) => {
      const taints = cordonTaints(view<Node>(copy), store.clock.nowIso());
      if (!taints) return copy;
      const spec = (copy.spec ?? {}) as Record<string, unknown>;
      // The API server omits an empty list (omitempty), so the last taint going drops the field.
      if (taints.length > 0) spec.taints = taints;
      else delete spec.taints;
      copy.spec = spec;
      return copy;
    }),
  );
  return undefined;
}

/** Starts the pass: every node change is checked, a node whose cordon taint is wrong is patched. */
export function startNodeLifecycleController(context: Context): Controller {
  const queue = new WorkQueue({
    name: 'node-lifecycle',
    clock: context.store.clock,
    onError: context.options.onError,
    reconcile: (key) => syncNode(context, key),
  });
  const unsubscribe = context.subscribe(REFS.nodes, (change) => {
    if (change.type !== 'DELETED') queue.add(change.object.metadata.name ?? '');
  });
  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}
