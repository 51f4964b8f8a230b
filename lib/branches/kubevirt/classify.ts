/**
 * What each VMI on the node needs, from its effective eviction strategy (the VMI's own, else the
 * KubeVirt CR's default, as `migrations.VMIEvictionStrategy` decides) and its `LiveMigratable`
 * condition. Pure; the plan and every pass classify the same way.
 *
 *   LiveMigrate, or LiveMigrateIfPossible while migratable  → migrate
 *   External                                                → wait for the external controller
 *   None, or not migratable                                 → a blocker (never shut down), unless the
 *                                                             restart opt-in applies (below)
 *
 * The restart opt-in ("power down and restart on another node", the seed article's words) applies
 * only where KubeVirt itself lets the launcher pod be evicted (None, or LiveMigrateIfPossible while
 * not migratable: LiveMigrate forbids it) and a VirtualMachine starts the VMI again (runStrategy Always,
 * or `running: true`). RerunOnFailure does not: a graceful shutdown is not a failure, so the VM stays off.
 */
import type { EvictionStrategy, KubeVirtSettings, VirtualMachine, Vmi } from './model.ts';
import { keyOf } from './model.ts';

export type VmiClass =
  | { readonly kind: 'migrate' }
  | { readonly kind: 'external' }
  /** Not running yet (or its migratability not reported yet): neither movable nor a blocker. */
  | { readonly kind: 'starting' }
  /** Being deleted or already stopped: it is leaving by itself. */
  | { readonly kind: 'leaving' }
  | {
      readonly kind: 'unmigratable';
      /** Why it cannot live-migrate, as a clause: `has evictionStrategy None`, `is not live-migratable (…)`. */
      readonly why: string;
      /** Whether KubeVirt lets its launcher pod be evicted (the restart opt-in needs it). */
      readonly evictable: boolean;
    };

export function effectiveStrategy(vmi: Vmi, settings: KubeVirtSettings): EvictionStrategy {
  return vmi.spec?.evictionStrategy ?? settings.evictionStrategy;
}

/** The `LiveMigratable` condition: undefined when not reported. */
export function liveMigratable(vmi: Vmi): { readonly ok: boolean; readonly why: string } | undefined {
  const condition = vmi.status?.conditions?.find((c) => c.type === 'LiveMigratable');
  if (!condition) return undefined;
  const detail = [condition.reason, condition.message].filter(Boolean).join(': ');
  return { ok: condition.status === 'True', why: detail || 'LiveMigratable is False' };
}

export function isFinalVmi(vmi: Vmi): boolean {
  return vmi.status?.phase === 'Succeeded' || vmi.status?.phase === 'Failed';
}

export function classifyVmi(vmi: Vmi, settings: KubeVirtSettings): VmiClass {
  if (vmi.metadata.deletionTimestamp || isFinalVmi(vmi)) return { kind: 'leaving' };
  if (vmi.status?.phase !== 'Running') return { kind: 'starting' };
  const strategy = effectiveStrategy(vmi, settings);
  if (strategy === 'External') return { kind: 'external' };
  if (strategy === 'None') return { kind: 'unmigratable', why: 'has evictionStrategy None', evictable: true };
  const migratable = liveMigratable(vmi);
  if (!migratable) return { kind: 'starting' };
  if (migratable.ok) return { kind: 'migrate' };
  return {
    kind: 'unmigratable',
    why: `is not live-migratable (${migratable.why})`,
    // virt-api refuses evicting a LiveMigrate VMI that cannot migrate; LiveMigrateIfPossible falls back to shutdown.
    evictable: strategy === 'LiveMigrateIfPossible',
  };
}

/** Whether the VirtualMachine starts its VMI again after a graceful shutdown. */
export function restartsItsVmi(vm: VirtualMachine | undefined): boolean {
  if (!vm) return false;
  const strategy = vm.spec?.runStrategy;
  return strategy !== undefined ? strategy === 'Always' : vm.spec?.running === true;
}

/** Whether the restart opt-in applies to an unmigratable VMI, and the sentence when it does not. */
export function restartVerdict(
  vmi: Vmi,
  cls: Extract<VmiClass, { kind: 'unmigratable' }>,
  owner: { readonly vmName?: string; readonly vm?: VirtualMachine },
): { readonly restart: true } | { readonly restart: false; readonly because: string } {
  if (!cls.evictable) {
    return { restart: false, because: 'its evictionStrategy LiveMigrate forbids shutting it down (KubeVirt refuses)' };
  }
  if (!owner.vmName) return { restart: false, because: 'no VirtualMachine owns it, so nothing would start it again' };
  if (!restartsItsVmi(owner.vm)) {
    const how = owner.vm?.spec?.runStrategy ?? (owner.vm ? `running: ${owner.vm.spec?.running}` : 'not found');
    return {
      restart: false,
      because: `its VirtualMachine ${vmi.metadata.namespace}/${owner.vmName} would not start it again (${how})`,
    };
  }
  return { restart: true };
}

/** The blocker sentence for a VMI that cannot leave without being shut down. */
export function unmigratableReason(
  vmi: Vmi,
  nodeName: string,
  cls: Extract<VmiClass, { kind: 'unmigratable' }>,
  optIn: { readonly enabled: boolean; readonly because?: string },
): string {
  const head = `VMI ${keyOf(vmi)} ${cls.why}: it stays running on node ${nodeName}; drainbridge never shuts a VM down to empty a node`;
  if (optIn.enabled) return `${head} (restart opt-in not applied: ${optIn.because ?? 'not allowed'})`;
  if (!cls.evictable) return head;
  return `${head} unless asked (--kubevirt-restart-unmigratable restarts it elsewhere through its VirtualMachine)`;
}
