/**
 * Launcher pods, as the KubeVirt branch sees them. The pod branches never evict a launcher pod (its
 * eviction could shut the VM down); the VMs move with their VMIs. So that no VM is left behind
 * unnoticed, every active launcher pod on the node must belong to a VMI the branch handles: one that
 * belongs to none (KubeVirt not installed, a VMI KubeVirt does not report on this node) is a blocker,
 * a migration's target pod landing here is waited for. `--pod-selector` narrows which launcher pods —
 * and so which VMs — the evacuation moves, as it narrows kubectl's pods. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Blocker, SkippedItem } from '../domain/plan.ts';
import { podKey } from '../kube/paths.ts';
import { isFinalVmi } from './classify.ts';
import { itemOf } from './decide.ts';
import { KUBEVIRT_LABELS, type Vmi } from './model.ts';
import type { KubeVirtObservation } from './observe.ts';

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

/** Launcher pods no handled VMI accounts for: blockers, or (a migration's target pod, a stopping VM) waited for. */
export function launcherBlockers(observation: KubeVirtObservation): {
  blockers: Blocker[];
  inFlight: number;
  detail: string[];
} {
  const live = new Set(observation.vmis.filter((vmi) => !isFinalVmi(vmi)).map((vmi) => vmi.metadata.uid));
  const stopped = new Set(observation.vmis.filter(isFinalVmi).map((vmi) => vmi.metadata.uid));
  const blockers: Blocker[] = [];
  const detail: string[] = [];
  let inFlight = 0;
  for (const pod of observation.launcherPods.filter(isActive)) {
    const uid = createdBy(pod) ?? '';
    if (live.has(uid)) continue;
    if (stopped.has(uid) || pod.metadata?.labels?.[KUBEVIRT_LABELS.migrationJobUid] !== undefined) {
      inFlight++;
      detail.push(`${podKey(pod)} ${stopped.has(uid) ? 'stopping' : 'is a migration target landing here'}`);
      continue;
    }
    const why = observation.settings.installed
      ? 'belongs to no VirtualMachineInstance KubeVirt reports on this node'
      : 'runs a VM, but KubeVirt does not serve VirtualMachineInstances in this cluster, so it cannot be live-migrated';
    blockers.push({
      code: 'LauncherPod',
      reason: `KubeVirt launcher pod ${podKey(pod)} on node ${observation.nodeName} ${why}; launcher pods are never evicted (the VM would shut down)`,
      item: { kind: 'Pod', uid: pod.metadata?.uid ?? '', name: podKey(pod) },
    });
  }
  return { blockers, inFlight, detail };
}
