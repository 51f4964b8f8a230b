/**
 * What keeps a scenario with simulated KubeVirt from being settled: VMIs not Running, VMs whose run
 * strategy starts them but that do not run, VMIs without the PDB KubeVirt gives them (or with one
 * they should not have). Empty when KubeVirt is not installed.
 */
import type { ObjectStore } from '../../store/types.ts';
import { REFS, view } from '../types.ts';
import { KV_REFS, type VirtualMachine, type Vmi } from './api.ts';
import { clusterConfig, evictionStrategyOf } from './config.ts';
import { needsEvictionPdb } from './disruption-budget.ts';
import { runStrategyOf } from './vm-controller.ts';

/** Whether the simulated KubeVirt is installed (its CR exists). */
export function kubeVirtInstalled(store: ObjectStore): boolean {
  return store.registry.get(KV_REFS.kubevirts) !== undefined && store.list(KV_REFS.kubevirts).items.length > 0;
}

function hasBudget(store: ObjectStore, vmi: Vmi): boolean {
  return store
    .list(REFS.pdbs, { namespace: vmi.metadata.namespace })
    .items.some((pdb) =>
      (pdb.metadata.ownerReferences ?? []).some((ref) => ref.controller && ref.uid === vmi.metadata.uid),
    );
}

/** Short phrases naming what has not settled yet. */
export function unsettledKubeVirt(store: ObjectStore): string[] {
  if (!kubeVirtInstalled(store)) return [];
  const config = clusterConfig(store);
  const problems: string[] = [];
  for (const vmi of store.list(KV_REFS.vmis).items.map((o) => view<Vmi>(o))) {
    const name = `VirtualMachineInstance ${vmi.metadata.namespace}/${vmi.metadata.name}`;
    if (vmi.status?.phase !== 'Running') problems.push(name);
    else if (needsEvictionPdb(vmi, evictionStrategyOf(vmi, config)) !== hasBudget(store, vmi)) {
      problems.push(`${name} disruption budget`);
    }
  }
  for (const vm of store.list(KV_REFS.vms).items.map((o) => view<VirtualMachine>(o))) {
    const starts = ['Always', 'RerunOnFailure', 'Once'].includes(runStrategyOf(vm));
    if (starts && vm.status?.printableStatus !== 'Running') {
      problems.push(`VirtualMachine ${vm.metadata.namespace}/${vm.metadata.name}`);
    }
  }
  return problems;
}
