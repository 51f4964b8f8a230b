/**
 * KubeVirt's disruption-budget controller
 * (`pkg/virt-controller/watch/drain/disruptionbudget/disruptionbudget.go`): one PodDisruptionBudget
 * per VMI that must not simply be evicted — strategy `LiveMigrate` or `External`, or
 * `LiveMigrateIfPossible` while the VMI is migratable — named `kubevirt-disruption-budget-<random>`,
 * controlled by the VMI, `minAvailable: 1` over `kubevirt.io/created-by=<vmi uid>`. It is deleted when
 * the VMI no longer needs it (deleted, strategy changed, no longer migratable).
 *
 * During a migration the migration controller expands it to `minAvailable: 2` with the
 * `kubevirt.io/migrationName` label (expandPDB in older `migration.go`); once that migration is final
 * and the VMI has one active pod again, this controller shrinks it back to 1 and drops the label.
 * Events on the VMI: SuccessfulCreate, SuccessfulDelete, SuccessfulUpdate ("shrank ...").
 */
import type { KubeObject } from '../../store/types.ts';
import { isDeleting } from '../meta.ts';
import { type ReconcileResult, WorkQueue } from '../queue.ts';
import { type Controller, tolerateRace } from '../runtime.ts';
import { REFS } from '../types.ts';
import { API_VERSION, isFinalMigration, KV_REFS, LABELS, type Vmi, type Vmim, vmiKeyOf } from './api.ts';
import { clusterConfig, evictionStrategyOf } from './config.ts';
import { type KubeVirtContext, recorders } from './context.ts';
import { getVmi, isActivePod, launcherPodsOf, mutateObject } from './objects.ts';

/** `vmiNeedsEvictionPDB`. */
export function needsEvictionPdb(vmi: Vmi, strategy: string): boolean {
  if (isDeleting(vmi)) return false;
  if (strategy === 'LiveMigrate' || strategy === 'External') return true;
  if (strategy === 'LiveMigrateIfPossible') {
    return (vmi.status?.conditions ?? []).some((c) => c.type === 'LiveMigratable' && c.status === 'True');
  }
  return false;
}

/** The PDBs the VMI controls (by owner uid; `pdbs.PDBsForVMI`). */
export function budgetsOf(kv: KubeVirtContext, namespace: string, vmiUid: string | undefined): KubeObject[] {
  return kv.context.store
    .list(REFS.pdbs, { namespace })
    .items.filter((pdb) =>
      (pdb.metadata.ownerReferences ?? []).some(
        (ref) => ref.controller && ref.kind === 'VirtualMachineInstance' && ref.uid === vmiUid,
      ),
    );
}

function pdbFor(vmi: Vmi): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      generateName: 'kubevirt-disruption-budget-',
      namespace: vmi.metadata.namespace,
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: 'VirtualMachineInstance',
          name: vmi.metadata.name,
          uid: vmi.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { minAvailable: 1, selector: { matchLabels: { [LABELS.createdBy]: vmi.metadata.uid ?? '' } } },
  };
}

/** A PDB expanded for a migration that has finished, with the VMI down to one active pod again. */
function expandedForFinishedMigration(kv: KubeVirtContext, vmi: Vmi, pdb: KubeObject): boolean {
  const migrationName = pdb.metadata.labels?.[LABELS.migrationName];
  if (!migrationName) return false;
  const migration = kv.context.store.get(KV_REFS.vmims, vmi.metadata.namespace, migrationName) as Vmim | undefined;
  if (migration && !isFinalMigration(migration)) return false;
  return launcherPodsOf(kv.context.store, vmi).filter(isActivePod).length === 1;
}

function shrink(kv: KubeVirtContext, vmi: Vmi, pdb: KubeObject): void {
  mutateObject(kv.context.store, REFS.pdbs, pdb, (copy) => {
    (copy.spec as { minAvailable?: number }).minAvailable = 1;
    const labels = { ...copy.metadata.labels };
    delete labels[LABELS.migrationName];
    copy.metadata.labels = labels;
  });
  recorders(kv).disruptionBudget.record(
    vmi,
    'Normal',
    'SuccessfulUpdate',
    `shrank PodDisruptionBudget ${pdb.metadata.name}`,
  );
}

function syncBudget(kv: KubeVirtContext, vmi: Vmi): ReconcileResult {
  const { store } = kv.context;
  const recorder = recorders(kv).disruptionBudget;
  const budgets = budgetsOf(kv, vmi.metadata.namespace, vmi.metadata.uid);
  const needed = needsEvictionPdb(vmi, evictionStrategyOf(vmi, clusterConfig(store)));
  if (budgets.length === 0 && needed) {
    const created = tolerateRace(() => store.create(REFS.pdbs, pdbFor(vmi)));
    if (created)
      recorder.record(vmi, 'Normal', 'SuccessfulCreate', `Created PodDisruptionBudget ${created.metadata.name}`);
    return undefined;
  }
  for (const pdb of budgets.filter((b) => !isDeleting(b))) {
    if (!needed) {
      tolerateRace(() => store.delete(REFS.pdbs, { namespace: pdb.metadata.namespace, name: pdb.metadata.name ?? '' }));
      recorder.record(vmi, 'Normal', 'SuccessfulDelete', `Deleted PodDisruptionBudget ${pdb.metadata.name}`);
    } else if (expandedForFinishedMigration(kv, vmi, pdb)) {
      shrink(kv, vmi, pdb);
    }
  }
  return undefined;
}

/** Starts the loop: VMI, launcher pod, migration and KubeVirt CR changes re-sync the VMI's budget. */
export function startDisruptionBudgetController(kv: KubeVirtContext): Controller {
  const { context } = kv;
  const queue = new WorkQueue({
    name: 'kubevirt-disruption-budget',
    clock: context.store.clock,
    onError: context.options.onError,
    reconcile: (key) => {
      const [namespace = '', name = ''] = key.split('/');
      const vmi = getVmi(context.store, namespace, name);
      return vmi ? syncBudget(kv, vmi) : undefined;
    },
  });
  const everyVmi = (): void => {
    for (const vmi of context.store.list(KV_REFS.vmis).items) queue.add(vmiKeyOf(vmi));
  };
  const unsubscribes = [
    context.subscribe(KV_REFS.vmis, (event) => queue.add(vmiKeyOf(event.object))),
    context.subscribe(REFS.pods, (event) => {
      const domain = event.object.metadata.annotations?.['kubevirt.io/domain'];
      if (domain) queue.add(`${event.object.metadata.namespace}/${domain}`);
    }),
    context.subscribe(KV_REFS.vmims, (event) => {
      const vmiName = (event.object.spec as { vmiName?: string } | undefined)?.vmiName;
      if (vmiName) queue.add(`${event.object.metadata.namespace}/${vmiName}`);
    }),
    // The cluster-wide eviction strategy decides for VMIs without their own.
    context.subscribe(KV_REFS.kubevirts, everyVmi),
  ];
  return {
    stop() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      queue.stop();
    },
  };
}
