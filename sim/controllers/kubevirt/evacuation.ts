/**
 * KubeVirt's evacuation controller (`pkg/virt-controller/watch/drain/evacuation/evacuation.go`), per
 * node: the VMIs to move are every VMI on the node when it carries the drain taint
 * (`migrations.nodeDrainTaintKey`, `kubevirt.io/drain:NoSchedule`), else those marked for eviction
 * (`status.evacuationNodeName` set by virt-api's eviction admitter) that have not moved off that node
 * and are not migrating. Of those, VMIs that migrate on eviction (LiveMigrate, or
 * LiveMigrateIfPossible while migratable), are not final or deleting, have no unfinished migration and
 * a single active launcher pod get a migration `kubevirt-evacuation-<random>` annotated
 * `kubevirt.io/evacuationMigration: <node>` — as many as the free cluster and per-node spots allow
 * (5 s later it looks again). Non-migratable `LiveMigrate` VMIs get a `FailedCreate` event
 * "VirtualMachineInstance is not migrateable" instead (again a minute later).
 *
 * The simulator writes the migration straight to the store, with the label and finalizer virt-api's
 * mutating webhook would add.
 */
import { isDeleting } from '../meta.ts';
import { type ReconcileResult, WorkQueue } from '../queue.ts';
import { type Controller, tolerateRace } from '../runtime.ts';
import { type Node, REFS, view } from '../types.ts';
import {
  ANNOTATIONS,
  API_VERSION,
  FINALIZERS,
  isFinalVmi,
  isMigratable,
  isRunningMigration,
  KV_REFS,
  LABELS,
  type Vmi,
  type Vmim,
} from './api.ts';
import { type ClusterConfig, clusterConfig, migratesOnEviction } from './config.ts';
import { type KubeVirtContext, recorders } from './context.ts';
import { isActivePod, launcherPodsOf, listVmis, unfinishedMigrations } from './objects.ts';

const NO_SPOTS_RECHECK_MS = 5_000;
const NOT_MIGRATABLE_RECHECK_MS = 60_000;

function hasDrainTaint(node: Node, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key && t.effect === 'NoSchedule');
}

/** `vmisToMigrate`: all VMIs on a drain-tainted node, else those marked for eviction from it. */
function vmisToMigrate(node: Node, onNode: readonly Vmi[], config: ClusterConfig, active: readonly Vmim[]): Vmi[] {
  if (hasDrainTaint(node, config.nodeDrainTaintKey)) return [...onNode];
  const migrating = new Set(active.map((m) => `${m.metadata.namespace}/${m.spec.vmiName}`));
  return onNode.filter((vmi) => {
    const marked = vmi.status?.evacuationNodeName;
    return (
      marked !== undefined &&
      marked === vmi.status?.nodeName &&
      !migrating.has(`${vmi.metadata.namespace}/${vmi.metadata.name}`)
    );
  });
}

/** `filterRunningNonMigratingVMIs`. */
function candidates(kv: KubeVirtContext, vmis: readonly Vmi[], config: ClusterConfig, active: readonly Vmim[]) {
  const migrating = new Set(active.map((m) => `${m.metadata.namespace}/${m.spec.vmiName}`));
  const migratable: Vmi[] = [];
  const notMigratable: Vmi[] = [];
  for (const vmi of vmis) {
    if (isFinalVmi(vmi) || isDeleting(vmi) || !migratesOnEviction(vmi, config)) continue;
    if (!isMigratable(vmi)) {
      notMigratable.push(vmi);
      continue;
    }
    if (migrating.has(`${vmi.metadata.namespace}/${vmi.metadata.name}`)) continue;
    if (launcherPodsOf(kv.context.store, vmi).filter(isActivePod).length > 1) continue;
    migratable.push(vmi);
  }
  return { migratable, notMigratable };
}

function evacuationMigration(vmi: Vmi, node: string): Vmim {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineInstanceMigration',
    metadata: {
      generateName: 'kubevirt-evacuation-',
      name: '',
      namespace: vmi.metadata.namespace,
      annotations: { [ANNOTATIONS.evacuationMigration]: node },
      labels: { [LABELS.vmiName]: vmi.metadata.name },
      finalizers: [FINALIZERS.migration],
    },
    spec: { vmiName: vmi.metadata.name },
  };
}

function syncNode(kv: KubeVirtContext, node: Node): ReconcileResult {
  const { store } = kv.context;
  const config = clusterConfig(store);
  const nodeName = node.metadata.name;
  const onNode = listVmis(store).filter((vmi) => vmi.status?.nodeName === nodeName);
  const active = unfinishedMigrations(store);
  const { migratable, notMigratable } = candidates(kv, vmisToMigrate(node, onNode, config, active), config, active);
  if (migratable.length === 0 && notMigratable.length === 0) return undefined;
  const running = active.filter(isRunningMigration);
  const onNodeNames = new Set(onNode.map((vmi) => vmi.metadata.name));
  const fromNode = running.filter((m) => onNodeNames.has(m.spec.vmiName ?? '')).length;
  const freeSpots = Math.min(
    config.parallelMigrationsPerCluster - running.length,
    config.parallelOutboundMigrationsPerNode - fromNode,
  );
  if (freeSpots <= 0) return { requeueAfterMs: NO_SPOTS_RECHECK_MS };
  const selected = migratable.slice(0, freeSpots);
  const warned = notMigratable.slice(0, Math.max(0, freeSpots - selected.length));
  const recorder = recorders(kv).evacuation;
  for (const vmi of warned) recorder.record(vmi, 'Normal', 'FailedCreate', 'VirtualMachineInstance is not migrateable');
  for (const vmi of selected) {
    const created = tolerateRace(() => store.create(KV_REFS.vmims, evacuationMigration(vmi, nodeName)));
    if (created) recorder.record(vmi, 'Normal', 'SuccessfulCreate', `Created Migration ${created.metadata.name}`);
  }
  if (selected.length === 0 && warned.length > 0) return { requeueAfterMs: NOT_MIGRATABLE_RECHECK_MS };
  return undefined;
}

/** Starts the evacuation controller, keyed by node; VMI, migration and node changes re-sync the node. */
export function startEvacuationController(kv: KubeVirtContext): Controller {
  const { context } = kv;
  const queue = new WorkQueue({
    name: 'kubevirt-evacuation',
    clock: context.store.clock,
    onError: context.options.onError,
    reconcile: (key) => {
      const node = context.store.get(REFS.nodes, undefined, key);
      return node ? syncNode(kv, view<Node>(node)) : undefined;
    },
  });
  const nodeOfVmi = (namespace: string | undefined, name: string | undefined): void => {
    const vmi = context.store.get(KV_REFS.vmis, namespace, name ?? '') as Vmi | undefined;
    if (vmi?.status?.nodeName) queue.add(vmi.status.nodeName);
  };
  const unsubscribes = [
    context.subscribe(REFS.nodes, (event) => queue.add(event.object.metadata.name ?? '')),
    context.subscribe(KV_REFS.vmis, (event) => {
      const node = (event.object as Vmi).status?.nodeName;
      if (node) queue.add(node);
    }),
    context.subscribe(KV_REFS.vmims, (event) => {
      // The node a migration leaves gets a free spot when it ends: re-sync it as well as the VMI's node.
      const source = event.object.metadata.annotations?.[ANNOTATIONS.evacuationMigration];
      const state = (event.object.status as { migrationState?: { sourceNode?: string } } | undefined)?.migrationState;
      for (const node of [source, state?.sourceNode]) if (node) queue.add(node);
      nodeOfVmi(event.object.metadata.namespace, (event.object.spec as { vmiName?: string }).vmiName);
    }),
  ];
  return {
    stop() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      queue.stop();
    },
  };
}
