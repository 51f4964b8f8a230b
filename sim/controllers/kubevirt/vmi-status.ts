/**
 * The VMI statuses virt-controller and virt-handler write, built purely from the VMI, its launcher
 * pod and the time: phase transitions with their timestamps, the `Ready` and `LiveMigratable`
 * conditions, the pod network interface, `activePods`. Field names from
 * `staging/src/kubevirt.io/api/core/v1/types.go`.
 */
import { withCondition } from '../pod-status.ts';
import type { Condition, Pod } from '../types.ts';
import type { Vmi, VmiPhase, VmiStatus } from './api.ts';
import type { NotMigratable } from './faults.ts';
import { LAUNCHER_IMAGE } from './launcher.ts';
import { isActivePod } from './objects.ts';

/** The status with `phase` set and a transition timestamp appended when it changed. */
export function withPhase(status: VmiStatus | undefined, phase: VmiPhase, nowIso: string): VmiStatus {
  const current = status ?? {};
  if (current.phase === phase) return current;
  const stamps = [...(current.phaseTransitionTimestamps ?? []), { phase, phaseTransitionTimestamp: nowIso }];
  return { ...current, phase, phaseTransitionTimestamps: stamps };
}

function macOf(uid: string): string {
  const hex = uid.replace(/-/g, '').padEnd(10, '0');
  return `02:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}:${hex.slice(8, 10)}`;
}

/** The pod-network interface virt-handler reports (IP of the launcher pod). */
export function interfacesFor(vmi: Vmi, pod: Pod): Record<string, unknown>[] {
  const ip = pod.status?.podIP;
  if (!ip) return [];
  return [
    {
      name: 'default',
      interfaceName: 'eth0',
      infoSource: 'domain, guest-agent',
      ipAddress: ip,
      ipAddresses: [ip],
      mac: macOf(vmi.metadata.uid ?? ''),
      queueCount: 1,
      linkState: 'up',
      podInterfaceName: 'eth0',
    },
  ];
}

/** `activePods`: pod uid → node for every active launcher pod with a node. */
export function activePodsOf(pods: readonly Pod[]): Record<string, string> {
  const active: Record<string, string> = {};
  for (const pod of pods) {
    if (isActivePod(pod) && pod.spec.nodeName && pod.metadata.uid) active[pod.metadata.uid] = pod.spec.nodeName;
  }
  return active;
}

/** The `LiveMigratable` condition: True, or False with the reason and message that make it so. */
export function liveMigratableCondition(notMigratable: NotMigratable | undefined): Condition {
  if (!notMigratable) return { type: 'LiveMigratable', status: 'True', lastProbeTime: null };
  return {
    type: 'LiveMigratable',
    status: 'False',
    reason: notMigratable.reason,
    message: notMigratable.message,
    lastProbeTime: null,
  };
}

/** What a running VMI reports about itself while its launcher pod serves it. */
export function runningStatus(
  vmi: Vmi,
  pods: { readonly current: Pod; readonly all: readonly Pod[] },
  notMigratable: NotMigratable | undefined,
  nowIso: string,
): VmiStatus {
  const base = withPhase(vmi.status, 'Running', nowIso);
  let conditions = withCondition(base.conditions, { type: 'Ready', status: 'True', lastTransitionTime: nowIso });
  conditions = conditions.filter((c) => c.type !== 'LiveMigratable');
  conditions.push(liveMigratableCondition(notMigratable));
  return {
    ...base,
    nodeName: pods.current.spec.nodeName ?? base.nodeName ?? '',
    conditions,
    interfaces: interfacesFor(vmi, pods.current),
    activePods: activePodsOf(pods.all),
    guestOSInfo: base.guestOSInfo ?? {},
    launcherContainerImageVersion: LAUNCHER_IMAGE,
    migrationMethod: base.migrationMethod ?? 'LiveMigration',
    migrationTransport: base.migrationTransport ?? 'Unix',
    qosClass: 'Burstable',
  };
}

/** A Running VMI whose launcher pod is terminating: `Ready=False` with KubeVirt's PodTerminating reason. */
export function terminatingStatus(vmi: Vmi, nowIso: string): VmiStatus {
  const conditions = withCondition(vmi.status?.conditions, {
    type: 'Ready',
    status: 'False',
    reason: 'PodTerminating',
    message: 'The Pod is terminating',
    lastTransitionTime: nowIso,
  });
  return { ...vmi.status, conditions };
}

/** A VMI whose guest is gone: final phase, not Ready (KubeVirt's PodNotExists wording), no active pods. */
export function finalStatus(vmi: Vmi, phase: 'Succeeded' | 'Failed', nowIso: string): VmiStatus {
  const status = withPhase(vmi.status, phase, nowIso);
  const conditions = withCondition(status.conditions, {
    type: 'Ready',
    status: 'False',
    reason: 'PodNotExists',
    message: 'virt-launcher pod has not yet been scheduled',
    lastTransitionTime: nowIso,
  }).filter((c) => c.type !== 'LiveMigratable');
  return { ...status, conditions, activePods: {} };
}
