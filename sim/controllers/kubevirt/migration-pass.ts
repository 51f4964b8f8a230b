/**
 * The state one migration-controller pass works with: the configuration and time it read once, the
 * migrations already counted against the limits, the VMIs by key, and the in-memory clocks of each
 * migration (when it entered its phase, when an abort was asked, what fault it runs with) that
 * stand in for virt-handler's and virt-launcher's own timers. API timestamps have second precision;
 * these keep the simulated durations exact.
 */
import { type MigrationPhase, type Vmi, type Vmim, vmiKeyOf } from './api.ts';
import type { ClusterConfig } from './config.ts';
import type { KubeVirtContext } from './context.ts';
import type { MigrationFault } from './faults.ts';

interface Clock {
  phase: MigrationPhase;
  sinceMs: number;
  abortSinceMs?: number;
  fault?: MigrationFault;
  warned?: Set<string>;
}

/** A source launcher pod that exits once its migration's clean-up is done. */
export interface SourceExit {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly dueMs: number;
}

/** Per-migration clocks, by uid; forgotten when the migration is final or gone. */
export class MigrationClocks {
  readonly #clocks = new Map<string, Clock>();
  /** Source launcher pods of migrations that succeeded, by pod uid (they outlive their migration's clock). */
  readonly #sourceExits = new Map<string, SourceExit>();

  /** The source launcher pod `exit` exits at `exit.dueMs`. */
  scheduleSourceExit(exit: SourceExit): void {
    this.#sourceExits.set(exit.uid, exit);
  }

  /** Takes the source exits due at `nowMs`; the earliest one still to come, if any. */
  takeDueSourceExits(nowMs: number): { due: SourceExit[]; nextMs: number | undefined } {
    const due: SourceExit[] = [];
    let nextMs: number | undefined;
    for (const [uid, exit] of this.#sourceExits) {
      if (exit.dueMs <= nowMs) {
        due.push(exit);
        this.#sourceExits.delete(uid);
      } else nextMs = nextMs === undefined ? exit.dueMs : Math.min(nextMs, exit.dueMs);
    }
    return { due, nextMs };
  }

  /** When the migration entered its current phase (now, if first seen in it). */
  since(vmim: Vmim, nowMs: number): number {
    const phase = vmim.status?.phase ?? '';
    const uid = vmim.metadata.uid ?? '';
    const clock = this.#clocks.get(uid);
    if (clock && clock.phase === phase) return clock.sinceMs;
    this.#clocks.set(uid, { ...clock, phase, sinceMs: nowMs });
    return nowMs;
  }

  /** Records that the migration entered `phase` now. */
  entered(vmim: Vmim, phase: MigrationPhase, nowMs: number): void {
    const uid = vmim.metadata.uid ?? '';
    this.#clocks.set(uid, { ...this.#clocks.get(uid), phase, sinceMs: nowMs });
  }

  /** When the abort of the migration was first seen (now, if first seen). */
  abortSince(vmim: Vmim, nowMs: number): number {
    const clock = this.#ensure(vmim, nowMs);
    clock.abortSinceMs ??= nowMs;
    return clock.abortSinceMs;
  }

  setFault(vmim: Vmim, fault: MigrationFault | undefined, nowMs: number): void {
    const clock = this.#ensure(vmim, nowMs);
    if (fault) clock.fault = fault;
    else delete clock.fault;
  }

  fault(vmim: Vmim): MigrationFault | undefined {
    return this.#clocks.get(vmim.metadata.uid ?? '')?.fault;
  }

  /** True the first time a warning `kind` is asked for this migration (events recorded once, not every pass). */
  firstWarning(vmim: Vmim, kind: string, nowMs: number): boolean {
    const clock = this.#ensure(vmim, nowMs);
    clock.warned ??= new Set();
    if (clock.warned.has(kind)) return false;
    clock.warned.add(kind);
    return true;
  }

  forget(uid: string): void {
    this.#clocks.delete(uid);
  }

  /** Keeps only the clocks of these uids. */
  retain(uids: ReadonlySet<string>): void {
    for (const uid of this.#clocks.keys()) if (!uids.has(uid)) this.#clocks.delete(uid);
  }

  #ensure(vmim: Vmim, nowMs: number): Clock {
    const uid = vmim.metadata.uid ?? '';
    let clock = this.#clocks.get(uid);
    if (!clock) {
      clock = { phase: vmim.status?.phase ?? '', sinceMs: nowMs };
      this.#clocks.set(uid, clock);
    }
    return clock;
  }
}

/** One pass of the migration controller. */
export class MigrationPass {
  readonly kv: KubeVirtContext;
  readonly config: ClusterConfig;
  readonly clocks: MigrationClocks;
  readonly nowMs: number;
  readonly vmis: ReadonlyMap<string, Vmi>;
  /** Every migration as listed when the pass began, oldest first. */
  readonly migrations: readonly Vmim[];
  /** Migrations counted against the limits (running, or holding a target pod), with their source node. */
  readonly #running: { uid: string; node: string }[] = [];
  #wakeAtMs: number | undefined;

  constructor(
    kv: KubeVirtContext,
    config: ClusterConfig,
    clocks: MigrationClocks,
    listed: { vmis: readonly Vmi[]; migrations: readonly Vmim[] },
  ) {
    this.kv = kv;
    this.config = config;
    this.clocks = clocks;
    this.nowMs = kv.context.store.clock.now();
    this.vmis = new Map(listed.vmis.map((vmi) => [vmiKeyOf(vmi), vmi]));
    this.migrations = listed.migrations;
  }

  get nowIso(): string {
    return this.kv.context.store.clock.nowIso();
  }

  vmiOf(vmim: Vmim): Vmi | undefined {
    return this.vmis.get(`${vmim.metadata.namespace}/${vmim.spec.vmiName ?? ''}`);
  }

  /** Counts a migration against the limits, from the node its VMI runs on. */
  countRunning(vmim: Vmim): void {
    const uid = vmim.metadata.uid ?? '';
    if (this.#running.some((r) => r.uid === uid)) return;
    this.#running.push({ uid, node: this.vmiOf(vmim)?.status?.nodeName ?? '' });
  }

  runningCount(): number {
    return this.#running.length;
  }

  /** `outboundMigrationsOnNode`: counted migrations whose VMI runs on `node`. */
  outboundFrom(node: string): number {
    return this.#running.filter((r) => r.node === node).length;
  }

  /** Asks for another pass at `atMs` (simulated); the earliest request wins. */
  wakeAt(atMs: number): void {
    const at = Math.max(atMs, this.nowMs + 1);
    this.#wakeAtMs = this.#wakeAtMs === undefined ? at : Math.min(this.#wakeAtMs, at);
  }

  /** Milliseconds until the next pass is due, if one was asked for. */
  requeueAfterMs(): number | undefined {
    return this.#wakeAtMs === undefined ? undefined : this.#wakeAtMs - this.nowMs;
  }
}
