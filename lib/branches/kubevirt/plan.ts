/**
 * The KubeVirt part of `drainbridge plan`: the node's VMs by effective eviction strategy, what the
 * evacuation would do with each (live-migrate, wait for an external controller, restart when opted
 * in) and what would block it, with KubeVirt's limits. Reads only; decides as a pass would.
 */

import type { KubeClient } from '../../clients/kube/client.ts';
import { KubeVirtApi } from '../../clients/kubevirt/api.ts';
import type { BranchPlan, PlanItem } from '../../model/plan.ts';
import { liveMigratable } from './classify.ts';
import { decideVmi, itemOf } from './decide.ts';
import { launcherBlockers, selectedVmis } from './launchers.ts';
import { migrationsByVmi } from './migrations.ts';
import { type EvictionStrategy, type KubeVirtOptions, type KubeVirtSettings, keyOf } from './model.ts';
import { observeNode } from './observe.ts';
import { restartCandidates } from './pass.ts';
import { freeSlots } from './planner.ts';

/** One VMI of the plan. */
export interface PlannedVmi {
  readonly name: string;
  readonly strategy: EvictionStrategy;
  /** The `LiveMigratable` condition (undefined: not reported yet). */
  readonly migratable?: boolean;
  readonly action:
    | 'live-migrate'
    | 'already migrating'
    | 'wait for external controller'
    | 'restart'
    | 'blocker'
    | 'wait until running';
}

export interface KubeVirtPlan extends BranchPlan {
  readonly kubevirt: {
    readonly settings: KubeVirtSettings;
    /** The limits the branch keeps (the tighter of drainbridge's and KubeVirt's) and the migrations already in flight. */
    readonly limits: { readonly fromNode: number; readonly cluster: number; readonly inFlightFromNode: number };
    readonly vmis: readonly PlannedVmi[];
    /** External VMIs, waited for (blockers only if the evacuation gives up). */
    readonly waiting: readonly PlanItem[];
  };
}

export async function planKubeVirtNode(
  kube: KubeClient,
  nodeName: string,
  settings: { readonly podSelector: string; readonly options: KubeVirtOptions; readonly now?: Date },
): Promise<KubeVirtPlan> {
  const ownersOf = restartCandidates(settings.options);
  const observation = await observeNode(new KubeVirtApi(kube), nodeName, {
    podSelector: settings.podSelector,
    ...(ownersOf ? { ownersOf } : {}),
  });
  const requestId = 'plan';
  const byVmi = migrationsByVmi(observation.migrations, requestId);
  const { selected, skipped } = selectedVmis(observation);
  const now = settings.now ?? new Date();
  const toMove: PlanItem[] = [];
  const blockers = [...launcherBlockers(observation).blockers];
  const waiting: PlanItem[] = [];
  const vmis: PlannedVmi[] = [];
  for (const vmi of selected) {
    const decision = decideVmi(vmi, {
      nodeName,
      settings: observation.settings,
      options: settings.options,
      now,
      migrations: byVmi.get(keyOf(vmi)),
      previous: undefined,
      launcherPod: observation.launcherPods.find(
        (pod) => pod.metadata?.labels?.['kubevirt.io/created-by'] === vmi.metadata.uid,
      ),
      owner: observation.owners.get(keyOf(vmi)),
    });
    const action = actionOf(decision);
    if (action === 'live-migrate' || action === 'restart' || action === 'already migrating') toMove.push(itemOf(vmi));
    if (decision.blocker) blockers.push(decision.blocker);
    if (decision.waiting) waiting.push(itemOf(vmi));
    const migratable = liveMigratable(vmi)?.ok;
    vmis.push({
      name: keyOf(vmi),
      strategy: decision.progress.strategy,
      ...(migratable !== undefined ? { migratable } : {}),
      action,
    });
  }
  const slots = freeSlots({ requestId, nodeName, observation, state: { vmis: {} }, options: settings.options, now });
  const cluster = Math.min(settings.options.maxMigrationsPerCluster, observation.settings.parallelMigrationsPerCluster);
  return {
    branch: 'kubevirt',
    toMove,
    skipped,
    blockers,
    kubevirt: {
      settings: observation.settings,
      limits: { fromNode: slots.nodeLimit, cluster, inFlightFromNode: slots.fromNode },
      vmis,
      waiting,
    },
  };
}

function actionOf(decision: ReturnType<typeof decideVmi>): PlannedVmi['action'] {
  if (decision.wants === 'migrate') return 'live-migrate';
  if (decision.wants === 'restart') return 'restart';
  if (decision.blocker) return 'blocker';
  if (decision.waiting) return 'wait for external controller';
  if (decision.progress.status === 'migrating') return 'already migrating';
  return 'wait until running';
}

/** The lines `drainbridge plan` prints under the branch heading: KubeVirt's settings and the VMs by strategy. */
export function kubeVirtPlanLines(plan: BranchPlan): string[] {
  const details = (plan as Partial<KubeVirtPlan>).kubevirt;
  if (!details) return [];
  if (!details.settings.installed) return ['  KubeVirt: not installed (no VirtualMachineInstances served)'];
  const { limits, settings } = details;
  const lines = [
    `  KubeVirt: cluster default evictionStrategy ${settings.evictionStrategy}; migrations at most ${limits.fromNode} from the node (${limits.inFlightFromNode} in flight now), ${limits.cluster} in the cluster`,
  ];
  const strategies: EvictionStrategy[] = ['LiveMigrate', 'LiveMigrateIfPossible', 'External', 'None'];
  lines.push(`  VMs by effective eviction strategy (${details.vmis.length}):`);
  for (const strategy of strategies) {
    const vmis = details.vmis.filter((vmi) => vmi.strategy === strategy);
    if (vmis.length === 0) continue;
    lines.push(`    ${strategy} (${vmis.length}):`);
    for (const vmi of vmis) {
      const migratable = vmi.migratable === undefined ? '' : vmi.migratable ? ', migratable' : ', not migratable';
      lines.push(`      ${vmi.name}${migratable} → ${vmi.action}`);
    }
  }
  return lines;
}
