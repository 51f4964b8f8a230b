/**
 * Faults a test injects into the simulated KubeVirt: a VMI's next migrations fail (with a reason) or
 * hang, or the VMI stops being live-migratable. VMIs are named `namespace/name`. Migration faults
 * are consumed in order when a migration of that VMI starts transferring (enters `Running`), so a
 * migration cancelled earlier does not use one up.
 */

/** What happens to one migration once it runs. */
export type MigrationFault = { readonly kind: 'fail'; readonly reason: string } | { readonly kind: 'hang' };

/** The `LiveMigratable=False` a test forces on a VMI. */
export interface NotMigratable {
  readonly reason: string;
  readonly message: string;
}

/** The failure reason when a test gives none (worded like a libvirt migration error). */
export const DEFAULT_FAILURE_REASON =
  'Live migration failed: error encountered during MigrateToURI3 libvirt api call: operation failed (simulated)';

/**
 * Messages virt-handler writes with some reasons (its LiveMigratable condition calculation in
 * `pkg/virt-handler/vm.go`; the PVC name is the simulator's).
 */
const NOT_MIGRATABLE_MESSAGES: Readonly<Record<string, string>> = {
  DisksNotLiveMigratable:
    'cannot migrate VMI: PVC rootdisk is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)',
  HostDeviceNotLiveMigratable: 'VMI uses a PCI host devices',
  VirtIOFSNotLiveMigratable: 'VMI uses virtiofs',
  SEVNotLiveMigratable: 'VMI uses SEV',
};

/** The condition message for a reason (a generic one for reasons without a known message). */
export function notMigratableMessage(reason: string): string {
  return NOT_MIGRATABLE_MESSAGES[reason] ?? `VMI is not live-migratable: ${reason}`;
}

function checkKey(vmi: string): string {
  if (!/^[^/]+\/[^/]+$/.test(vmi)) throw new RangeError(`vmi: expected "namespace/name", got "${vmi}"`);
  return vmi;
}

function checkCount(count: number): number {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`count: must be a positive integer, got ${count}`);
  return count;
}

/** The fault registry; the simulated controllers read it, tests write it. */
export class KubeVirtFaults {
  readonly #migrations = new Map<string, MigrationFault[]>();
  readonly #notMigratable = new Map<string, NotMigratable>();
  readonly #listeners = new Set<(vmi: string) => void>();

  /** The VMI's next `count` migrations fail once running, with `reason` as `migrationState.failureReason`. */
  failNextMigrations(vmi: string, count = 1, reason = DEFAULT_FAILURE_REASON): void {
    this.#queue(checkKey(vmi), checkCount(count), { kind: 'fail', reason });
  }

  /**
   * The VMI's next `count` migrations make no progress once running. KubeVirt's progress timeout
   * (`migrations.progressTimeout`, 150 s by default) then aborts them, as virt-launcher's migration
   * monitor does; raise it in the KubeVirt CR for a longer hang.
   */
  hangNextMigrations(vmi: string, count = 1): void {
    this.#queue(checkKey(vmi), checkCount(count), { kind: 'hang' });
  }

  /** The VMI reports `LiveMigratable=False` with `reason` (e.g. `DisksNotLiveMigratable`) until `setMigratable`. */
  setNotMigratable(vmi: string, reason = 'DisksNotLiveMigratable', message = notMigratableMessage(reason)): void {
    this.#notMigratable.set(checkKey(vmi), { reason, message });
    this.#changed(vmi);
  }

  /** Removes a `setNotMigratable`; the VMI is migratable again unless its annotation says otherwise. */
  setMigratable(vmi: string): void {
    this.#notMigratable.delete(checkKey(vmi));
    this.#changed(vmi);
  }

  /** Forgets every fault. */
  clear(): void {
    const touched = [...this.#notMigratable.keys()];
    this.#migrations.clear();
    this.#notMigratable.clear();
    for (const vmi of touched) this.#changed(vmi);
  }

  /** Faults still queued for the VMI's migrations (for assertions). */
  pendingMigrationFaults(vmi: string): readonly MigrationFault[] {
    return [...(this.#migrations.get(vmi) ?? [])];
  }

  /** For the controllers: the fault of the migration that starts now, if any (consumed). */
  takeMigrationFault(vmi: string): MigrationFault | undefined {
    const queue = this.#migrations.get(vmi);
    const fault = queue?.shift();
    if (queue && queue.length === 0) this.#migrations.delete(vmi);
    return fault;
  }

  /** For the controllers: a forced `LiveMigratable=False`, if any. */
  notMigratable(vmi: string): NotMigratable | undefined {
    return this.#notMigratable.get(vmi);
  }

  /** For the controllers: called with the VMI key whenever its migratability fault changes. */
  onChange(listener: (vmi: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #queue(vmi: string, count: number, fault: MigrationFault): void {
    const queue = this.#migrations.get(vmi) ?? [];
    for (let i = 0; i < count; i++) queue.push(fault);
    this.#migrations.set(vmi, queue);
  }

  #changed(vmi: string): void {
    for (const listener of this.#listeners) listener(vmi);
  }
}
