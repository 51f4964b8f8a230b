/**
 * VirtualMachines (`pkg/virt-controller/watch/vm/vm.go`): a VM owns one VMI of its own name, created
 * from `spec.template` with the VM as controller, according to its run strategy (`spec.runStrategy`,
 * or the deprecated `spec.running`: true → Always, false → Halted; types.go `RunStrategy()`):
 *
 * - `Always`: a VMI must run; a VMI that ended (Succeeded or Failed) is deleted and created again —
 *   the "power down and restart on another node" an evicted `None` VM gets.
 * - `RerunOnFailure`: started once; restarted only after it Failed (a graceful stop stays stopped).
 * - `Once`: started once, never restarted. `Manual`: never started or stopped by the controller.
 * - `Halted`: a running VMI is deleted.
 *
 * Status: `created`, `ready`, the `Ready` condition and `printableStatus` (Stopped, Starting, Running,
 * Migrating, Stopping, Terminating), as the VM controller's status calculation reports them.
 */
import { isControlledBy, isDeleting } from '../meta.ts';
import { type ReconcileResult, WorkQueue } from '../queue.ts';
import { type Controller, tolerateRace } from '../runtime.ts';
import { view } from '../types.ts';
import {
  API_VERSION,
  conditionOf,
  isFinalVmi,
  KV_REFS,
  type RunStrategy,
  type VirtualMachine,
  type Vmi,
  vmiKeyOf,
} from './api.ts';
import { type KubeVirtContext, recorders } from './context.ts';
import { getVmi, mutateObject } from './objects.ts';

/** `VirtualMachine.RunStrategy()`. */
export function runStrategyOf(vm: VirtualMachine): RunStrategy {
  if (vm.spec.running !== undefined) return vm.spec.running ? 'Always' : 'Halted';
  return vm.spec.runStrategy ?? 'Halted';
}

function vmiFor(vm: VirtualMachine): Vmi {
  const template = vm.spec.template ?? {};
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineInstance',
    metadata: {
      name: vm.metadata.name,
      namespace: vm.metadata.namespace,
      ...(template.metadata?.labels ? { labels: { ...template.metadata.labels } } : {}),
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: 'VirtualMachine',
          name: vm.metadata.name,
          uid: vm.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: structuredClone((template.spec ?? {}) as Vmi['spec']),
  };
}

/** Whether the strategy wants a VMI started now, given the one that exists (if any). */
function wantsStart(strategy: RunStrategy, vmi: Vmi | undefined, vm: VirtualMachine): boolean {
  if (vmi) return false;
  if (strategy === 'Always' || strategy === 'RerunOnFailure') return true;
  return strategy === 'Once' && vm.status?.created === undefined;
}

/** Whether the strategy wants the existing VMI gone (to stop it, or to restart it). */
function wantsDelete(strategy: RunStrategy, vmi: Vmi): boolean {
  if (isDeleting(vmi)) return false;
  if (strategy === 'Halted') return true;
  if (strategy === 'Always') return isFinalVmi(vmi);
  return strategy === 'RerunOnFailure' && vmi.status?.phase === 'Failed';
}

function printableStatus(vm: VirtualMachine, vmi: Vmi | undefined, strategy: RunStrategy): string {
  if (isDeleting(vm)) return 'Terminating';
  if (!vmi || isFinalVmi(vmi)) return 'Stopped';
  if (isDeleting(vmi) || strategy === 'Halted') return 'Stopping';
  const migration = vmi.status?.migrationState;
  if (migration && !migration.completed && migration.migrationUid) return 'Migrating';
  return vmi.status?.phase === 'Running' ? 'Running' : 'Starting';
}

function statusFor(vm: VirtualMachine, vmi: Vmi | undefined, strategy: RunStrategy, nowIso: string): object {
  const ready = vmi !== undefined && !isFinalVmi(vmi) && conditionOf(vmi, 'Ready')?.status === 'True';
  const previous = (vm.status?.conditions as { type: string; status: string; lastTransitionTime?: string }[]) ?? [];
  const before = previous.find((c) => c.type === 'Ready');
  const status = ready ? 'True' : 'False';
  const readyCondition = {
    type: 'Ready',
    status,
    lastProbeTime: null,
    lastTransitionTime: before?.status === status ? before.lastTransitionTime : nowIso,
    ...(ready
      ? {}
      : { reason: vmi ? 'PodNotExists' : 'VMINotExists', message: vmi ? 'Not ready' : 'VMI does not exist' }),
  };
  return {
    ...(vmi ? { created: true } : {}),
    ...(ready ? { ready: true } : {}),
    printableStatus: printableStatus(vm, vmi, strategy),
    runStrategy: strategy,
    conditions: [readyCondition],
    desiredGeneration: vm.metadata.generation ?? 1,
    observedGeneration: vm.metadata.generation ?? 1,
  };
}

function syncVm(kv: KubeVirtContext, vm: VirtualMachine): ReconcileResult {
  const { store } = kv.context;
  const strategy = runStrategyOf(vm);
  const found = getVmi(store, vm.metadata.namespace, vm.metadata.name);
  const vmi = found && isControlledBy(found, vm) ? found : undefined;
  const recorder = recorders(kv).vm;
  if (!isDeleting(vm) && !found && wantsStart(strategy, vmi, vm)) {
    const created = tolerateRace(() => store.create(KV_REFS.vmis, vmiFor(vm)));
    const message = `Started the virtual machine by creating the new virtual machine instance ${vm.metadata.name}`;
    if (created) recorder.record(vm, 'Normal', 'SuccessfulCreate', message);
  } else if (vmi && !isDeleting(vm) && wantsDelete(strategy, vmi)) {
    tolerateRace(() => store.delete(KV_REFS.vmis, { namespace: vmi.metadata.namespace, name: vmi.metadata.name }));
    const message = `Stopped the virtual machine by deleting the virtual machine instance ${vmi.metadata.uid}`;
    recorder.record(vm, 'Normal', 'SuccessfulDelete', message);
  }
  const now = store.clock.nowIso();
  const current = getVmi(store, vm.metadata.namespace, vm.metadata.name);
  const owned = current && isControlledBy(current, vm) ? current : undefined;
  mutateObject(store, KV_REFS.vms, vm, (copy) => {
    copy.status = statusFor(copy, owned, strategy, now) as VirtualMachine['status'];
  });
  return undefined;
}

/** Starts the VirtualMachine loop; a VM re-syncs when it or its VMI changes. */
export function startVmController(kv: KubeVirtContext): Controller {
  const { context } = kv;
  const queue = new WorkQueue({
    name: 'kubevirt-vm',
    clock: context.store.clock,
    onError: context.options.onError,
    reconcile: (key) => {
      const [namespace = '', name = ''] = key.split('/');
      const vm = context.store.get(KV_REFS.vms, namespace, name);
      return vm ? syncVm(kv, view<VirtualMachine>(vm)) : undefined;
    },
  });
  const unsubscribes = [
    context.subscribe(KV_REFS.vms, (event) => queue.add(vmiKeyOf(event.object))),
    // A VM's VMI has the VM's name; a VMI of no VM re-syncs nothing.
    context.subscribe(KV_REFS.vmis, (event) => queue.add(vmiKeyOf(event.object))),
  ];
  return {
    stop() {
      for (const unsubscribe of unsubscribes) unsubscribe();
      queue.stop();
    },
  };
}
