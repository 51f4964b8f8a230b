/**
 * The VMI lifecycle: virt-controller's VMI controller and virt-handler folded into one loop
 * (`pkg/virt-controller/watch/vmi/*`, `pkg/virt-handler/vm.go`). A new VMI gets the finalizer and a
 * launcher pod (Pending → Scheduling); once the scheduler and kubelet have the pod Running and Ready
 * it becomes Scheduled (node set) and then Running (Ready, LiveMigratable, interfaces, activePods).
 *
 * A Running VMI whose launcher pod is terminating reports `Ready=False` (PodTerminating); once the pod
 * is gone the guest was shut down with it and the VMI ends `Succeeded`, as virt-handler reports a
 * graceful shutdown (kubevirt/kubevirt#9823: an evicted `RerunOnFailure` VM stays stopped). A VMI
 * whose pod disappears before it started ends `Failed`. A deleted VMI has its pods deleted and loses
 * its finalizer when they are gone. Migrations move the VMI between nodes (migration-controller.ts).
 */
import { isDeleting } from '../meta.ts';
import { type ReconcileResult, WorkQueue } from '../queue.ts';
import type { Controller } from '../runtime.ts';
import { type Pod, REFS } from '../types.ts';
import { FINALIZERS, isFinalVmi, KV_REFS, SIM_ANNOTATIONS, type Vmi, vmiKeyOf } from './api.ts';
import { type KubeVirtContext, recorders } from './context.ts';
import { type NotMigratable, notMigratableMessage } from './faults.ts';
import { launcherPod } from './launcher.ts';
import {
  currentPodOf,
  dropFinalizer,
  getVmi,
  isActivePod,
  isServing,
  launcherPodsOf,
  mutateObject,
  removeFinalizer,
} from './objects.ts';
import { finalStatus, runningStatus, terminatingStatus, withPhase } from './vmi-status.ts';

/** The reason a VMI is not live-migratable: a test's fault, else the simulator annotation. */
export function notMigratableOf(kv: KubeVirtContext, vmi: Vmi): NotMigratable | undefined {
  const forced = kv.faults.notMigratable(vmiKeyOf(vmi));
  if (forced) return forced;
  const reason = vmi.metadata.annotations?.[SIM_ANNOTATIONS.notMigratable];
  return reason ? { reason, message: notMigratableMessage(reason) } : undefined;
}

function writeVmi(kv: KubeVirtContext, vmi: Vmi, change: (copy: Vmi) => void): void {
  mutateObject(kv.context.store, KV_REFS.vmis, vmi, change);
}

function nowIso(kv: KubeVirtContext): string {
  return kv.context.store.clock.nowIso();
}

/** Deleting: delete the launcher pods; when none is left, the VMI is shut down and released. */
function finishDeletion(kv: KubeVirtContext, vmi: Vmi, pods: readonly Pod[]): ReconcileResult {
  const { store } = kv.context;
  const remaining = pods.filter(isActivePod);
  for (const pod of remaining.filter((p) => !isDeleting(p))) {
    store.delete(REFS.pods, { namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' });
  }
  if (remaining.length > 0) return undefined;
  writeVmi(kv, vmi, (copy) => {
    if (!isFinalVmi(copy)) copy.status = finalStatus(copy, 'Succeeded', nowIso(kv));
    dropFinalizer(copy.metadata, FINALIZERS.vmi);
  });
  return undefined;
}

/** Pending: create the launcher pod, then Scheduling once it exists. */
function syncPending(kv: KubeVirtContext, vmi: Vmi, current: Pod | undefined): void {
  const { store } = kv.context;
  if (!current) {
    const pod = store.create(REFS.pods, launcherPod(vmi));
    recorders(kv).vmi.record(vmi, 'Normal', 'SuccessfulCreate', `Created virtual machine pod ${pod.metadata.name}`);
    writeVmi(kv, vmi, (copy) => {
      copy.status = withPhase(copy.status, 'Pending', nowIso(kv));
    });
    return;
  }
  writeVmi(kv, vmi, (copy) => {
    copy.status = withPhase(copy.status, 'Scheduling', nowIso(kv));
  });
}

/** Scheduling: the pod serves → Scheduled on its node; the pod gone → Failed. */
function syncScheduling(kv: KubeVirtContext, vmi: Vmi, current: Pod | undefined): void {
  if (!current) {
    writeVmi(kv, vmi, (copy) => {
      copy.status = finalStatus(copy, 'Failed', nowIso(kv));
    });
    return;
  }
  if (!isServing(current) || !current.spec.nodeName) return;
  const node = current.spec.nodeName;
  writeVmi(kv, vmi, (copy) => {
    copy.status = { ...withPhase(copy.status, 'Scheduled', nowIso(kv)), nodeName: node };
    copy.metadata.labels = { ...copy.metadata.labels, 'kubevirt.io/nodeName': node };
  });
}

/** Scheduled or Running: keep the running status, or notice the launcher pod going away. */
function syncRunning(kv: KubeVirtContext, vmi: Vmi, pods: readonly Pod[]): void {
  const current = currentPodOf(vmi, pods);
  const now = nowIso(kv);
  const handler = recorders(kv).handler(vmi.status?.nodeName ?? '');
  if (!current) {
    writeVmi(kv, vmi, (copy) => {
      copy.status = finalStatus(copy, 'Succeeded', now);
    });
    handler.record(vmi, 'Normal', 'Stopped', 'The VirtualMachineInstance was shut down.');
    return;
  }
  if (isDeleting(current)) {
    writeVmi(kv, vmi, (copy) => {
      copy.status = terminatingStatus(copy, now);
    });
    return;
  }
  const wasRunning = vmi.status?.phase === 'Running';
  writeVmi(kv, vmi, (copy) => {
    copy.status = runningStatus(copy, { current, all: pods }, notMigratableOf(kv, copy), now);
  });
  if (!wasRunning) handler.record(vmi, 'Normal', 'Started', 'VirtualMachineInstance started.');
}

function syncVmi(kv: KubeVirtContext, vmi: Vmi): ReconcileResult {
  const pods = launcherPodsOf(kv.context.store, vmi);
  if (isDeleting(vmi)) return finishDeletion(kv, vmi, pods);
  if (isFinalVmi(vmi)) {
    if (!pods.some(isActivePod)) removeFinalizer(kv.context.store, KV_REFS.vmis, vmi, FINALIZERS.vmi);
    return undefined;
  }
  if (!vmi.metadata.finalizers?.includes(FINALIZERS.vmi)) {
    writeVmi(kv, vmi, (copy) => {
      copy.metadata.finalizers = [...(copy.metadata.finalizers ?? []), FINALIZERS.vmi];
    });
    return undefined;
  }
  const phase = vmi.status?.phase ?? '';
  if (phase === '' || phase === 'Pending') syncPending(kv, vmi, currentPodOf(vmi, pods));
  else if (phase === 'Scheduling') syncScheduling(kv, vmi, currentPodOf(vmi, pods));
  else syncRunning(kv, vmi, pods);
  return undefined;
}

/** Starts the VMI lifecycle loop. VMI and launcher-pod changes, and migratability faults, re-sync the VMI. */
export function startVmiController(kv: KubeVirtContext): Controller {
  const { context } = kv;
  const queue = new WorkQueue({
    name: 'kubevirt-vmi',
    clock: context.store.clock,
    onError: context.options.onError,
    reconcile: (key) => {
      const [namespace = '', name = ''] = key.split('/');
      const vmi = getVmi(context.store, namespace, name);
      return vmi ? syncVmi(kv, vmi) : undefined;
    },
  });
  const unsubscribes = [
    context.subscribe(KV_REFS.vmis, (event) => queue.add(vmiKeyOf(event.object))),
    context.subscribe(REFS.pods, (event) => {
      const domain = event.object.metadata.annotations?.['kubevirt.io/domain'];
      if (domain) queue.add(`${event.object.metadata.namespace}/${domain}`);
    }),
    kv.faults.onChange((key) => queue.add(key)),
  ];
  return {
    stop() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      queue.stop();
    },
  };
}
