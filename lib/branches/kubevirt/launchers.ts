/**
 * Launcher pods, as the KubeVirt branch sees them. The pod branches never evict a launcher pod (its
 * eviction could shut the VM down); the VMs move with their VMIs. So that no VM is left behind
 * unnoticed, every active launcher pod on the node must belong to a VMI the branch handles: one that
 * belongs to none (KubeVirt not installed, a VMI KubeVirt does not report on this node) is a blocker,
 * a migration's target pod landing here is waited for, and the old launcher pod of a VMI that moved
 * away completes by itself (not waited on). `--pod-selector` narrows which launcher pods —
 * and so which VMs — the evacuation moves, as it narrows kubectl's pods. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { podKey } from '../../clients/kube/paths.ts';
import type { Blocker, SkippedItem } from '../../model/plan.ts';
import { isFinalVmi } from './classify.ts';
import { itemOf } from './decide.ts';
import {
  isFinalMigration,
  isOwnMigration,
  KUBEVIRT_LABELS,
  MIGRATION_MARKS,
  type Vmi,
  vmiKeyOfMigration,
} from './model.ts';
import { type KubeVirtObservation, launcherVmi } from './observe.ts';

function isActive(pod: V1Pod): boolean {
  return pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

function createdBy(pod: V1Pod): string | undefined {
  return pod.metadata?.labels?.[KUBEVIRT_LABELS.createdBy];
}

/** The VMIs on the node the evacuation moves (running or starting), and those `--pod-selector` leaves alone. */
export function selectedVmis(observation: KubeVirtObservation): { selected: Vmi[]; skipped: SkippedItem[] } {
  const live = observation.vmis.filter((vmi) => !isFinalVmi(vmi));
  const ordered = [...live].sort((a, b) =>
    `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
  );
  if (!observation.podSelector) return { selected: ordered, skipped: [] };
  const matching = new Set(observation.launcherPods.map(createdBy));
  const reason = `not selected: its launcher pod does not match --pod-selector=${observation.podSelector}`;
  return {
    selected: ordered.filter((vmi) => matching.has(vmi.metadata.uid)),
    skipped: ordered.filter((vmi) => !matching.has(vmi.metadata.uid)).map((vmi) => ({ item: itemOf(vmi), reason })),
  };
}

/**
 * Whether the launcher pod's VMI has left this node (the pod is its old source, completing): KubeVirt
 * reports the VMI on another node, or a migration of this request moved it off this node. Its launcher
 * exits a little after the move (virt-handler cleans the migrated domain up first); nothing to wait for.
 */
function movedAway(pod: V1Pod, observation: KubeVirtObservation, requestId: string | undefined): boolean {
  const vmi = launcherVmi(pod);
  const reported = observation.elsewhere.get(vmi.uid)?.status?.nodeName;
  if (reported && reported !== observation.nodeName) return true;
  if (requestId === undefined) return false;
  const key = `${vmi.namespace}/${vmi.name}`;
  return observation.migrations.some(
    (m) =>
      m.status?.phase === 'Succeeded' &&
      vmiKeyOfMigration(m) === key &&
      isOwnMigration(m, requestId) &&
      m.metadata.annotations?.[MIGRATION_MARKS.sourceNodeAnnotation] === observation.nodeName,
  );
}

/**
 * Launcher pods no handled VMI accounts for: blockers, or waited for (a migration's target pod landing
 * here, a stopping VM). The old launcher pod of a VMI that moved away is neither: it is completing.
 * `requestId`: the request whose finished migrations count as moves (none for `drainbridge plan`).
 */
export function launcherBlockers(
  observation: KubeVirtObservation,
  requestId?: string,
): {
  blockers: Blocker[];
  inFlight: number;
  detail: string[];
} {
  const live = new Set(observation.vmis.filter((vmi) => !isFinalVmi(vmi)).map((vmi) => vmi.metadata.uid));
  const stopped = new Set(observation.vmis.filter(isFinalVmi).map((vmi) => vmi.metadata.uid));
  const running = new Set(observation.migrations.filter((m) => !isFinalMigration(m)).map((m) => m.metadata.uid));
  const blockers: Blocker[] = [];
  const detail: string[] = [];
  let inFlight = 0;
  const waitFor = (pod: V1Pod, what: string): void => {
    inFlight++;
    detail.push(`${podKey(pod)} ${what}`);
  };
  for (const pod of observation.launcherPods.filter(isActive)) {
    const uid = createdBy(pod) ?? '';
    const migrationJob = pod.metadata?.labels?.[KUBEVIRT_LABELS.migrationJobUid];
    if (live.has(uid)) continue;
    if (stopped.has(uid)) waitFor(pod, 'stopping');
    else if (migrationJob !== undefined && running.has(migrationJob))
      waitFor(pod, 'is a migration target landing here');
    else if (movedAway(pod, observation, requestId)) continue;
    else if (migrationJob !== undefined) waitFor(pod, 'is a migration target landing here');
    else blockers.push(unaccounted(pod, observation));
  }
  return { blockers, inFlight, detail };
}

function unaccounted(pod: V1Pod, observation: KubeVirtObservation): Blocker {
  const why = observation.settings.installed
    ? 'belongs to no VirtualMachineInstance KubeVirt reports on this node'
    : 'runs a VM, but KubeVirt does not serve VirtualMachineInstances in this cluster, so it cannot be live-migrated';
  return {
    code: 'LauncherPod',
    reason: `KubeVirt launcher pod ${podKey(pod)} on node ${observation.nodeName} ${why}; launcher pods are never evicted (the VM would shut down)`,
    item: { kind: 'Pod', uid: pod.metadata?.uid ?? '', name: podKey(pod) },
  };
}
