/**
 * Every migration the simulated cluster saw, whoever created it, with its phases and the simulated
 * time of each — kept after the object is deleted or garbage-collected, so tests can read what
 * happened (phase sequences, how many ran at once) rather than sample the store.
 */
import type { ObjectStore, Watch } from '../../store/types.ts';
import { isFinalMigration, KV_REFS, type MigrationPhase, type Vmim } from './api.ts';

export interface PhaseAt {
  readonly phase: MigrationPhase;
  /** Simulated epoch milliseconds when the phase was observed. */
  readonly atMs: number;
}

export interface MigrationRecord {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  /** `namespace/name` of the VMI. */
  readonly vmi: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly createdAtMs: number;
  /** Phases in the order observed (each once). */
  readonly phases: readonly PhaseAt[];
  /** When the object was removed from the store. */
  readonly removedAtMs?: number;
  /** The last `status.migrationState` the migration carried (source/target node, failure reason, …). */
  readonly migrationState?: Readonly<Record<string, unknown>>;
}

interface MutableRecord {
  uid: string;
  namespace: string;
  name: string;
  vmi: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  createdAtMs: number;
  phases: PhaseAt[];
  removedAtMs?: number;
  migrationState?: Record<string, unknown>;
  final: boolean;
}

/** The migration log. */
export class MigrationHistory {
  readonly #records = new Map<string, MutableRecord>();
  readonly #listeners = new Set<() => void>();
  readonly #store: ObjectStore;
  #watch: Watch | undefined;

  constructor(store: ObjectStore) {
    this.#store = store;
  }

  /** Starts recording (the migration resource must be served). */
  start(): void {
    this.#watch ??= this.#store.watch(KV_REFS.vmims, {}, (event) => {
      if (event.type === 'ADDED' || event.type === 'MODIFIED') this.#observe(event.object as Vmim, false);
      else if (event.type === 'DELETED') this.#observe(event.object as Vmim, true);
    });
  }

  stop(): void {
    this.#watch?.stop();
    this.#watch = undefined;
    this.#listeners.clear();
  }

  /** Every migration seen, in creation order; `filter` narrows (e.g. by label or VMI). */
  migrations(filter: (record: MigrationRecord) => boolean = () => true): MigrationRecord[] {
    return [...this.#records.values()].map((r) => this.#frozen(r)).filter(filter);
  }

  /** The migrations of one VMI (`namespace/name`). */
  forVmi(vmi: string): MigrationRecord[] {
    return this.migrations((r) => r.vmi === vmi);
  }

  /**
   * The greatest number of migrations (of those `filter` keeps) in flight at the same time: created
   * (or, with `from`, having reached that phase — `Scheduling` counts only those past Pending, as
   * KubeVirt's limits do) and not yet Succeeded, Failed or removed.
   */
  maxInFlight(
    filter: (record: MigrationRecord) => boolean = () => true,
    options: { from?: MigrationPhase } = {},
  ): number {
    const edges: { atMs: number; delta: number }[] = [];
    for (const record of this.migrations(filter)) {
      const start = options.from ? record.phases.find((p) => p.phase === options.from)?.atMs : record.createdAtMs;
      if (start === undefined) continue;
      edges.push({ atMs: start, delta: 1 });
      const end = endOf(record);
      if (end !== undefined) edges.push({ atMs: end, delta: -1 });
    }
    // At equal times an end is counted before a start: a migration ending as another begins is not overlap.
    edges.sort((a, b) => a.atMs - b.atMs || a.delta - b.delta);
    let current = 0;
    let max = 0;
    for (const edge of edges) {
      current += edge.delta;
      max = Math.max(max, current);
    }
    return max;
  }

  /**
   * Resolves once `predicate` holds for the history (checked now and after every recorded change);
   * rejects after `timeoutMs` of simulated time or when the store closes.
   */
  when(predicate: (history: MigrationHistory) => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const { clock } = this.#store;
      const finish = (error?: Error): void => {
        this.#listeners.delete(check);
        timer.cancel();
        clock.stopped.removeEventListener('abort', onStop);
        if (error) reject(error);
        else resolve();
      };
      const check = (): void => {
        if (predicate(this)) finish();
      };
      const onStop = (): void => finish(new Error('the simulator stopped before the migration history matched'));
      const timer = clock.setTimeout(
        () => finish(new Error(`migration history did not match in ${timeoutMs} ms`)),
        timeoutMs,
      );
      clock.stopped.addEventListener('abort', onStop, { once: true });
      this.#listeners.add(check);
      check();
    });
  }

  #observe(vmim: Vmim, removed: boolean): void {
    const uid = vmim.metadata.uid ?? '';
    const now = this.#store.clock.now();
    let record = this.#records.get(uid);
    if (!record) {
      record = {
        uid,
        namespace: vmim.metadata.namespace,
        name: vmim.metadata.name,
        vmi: `${vmim.metadata.namespace}/${vmim.spec.vmiName ?? ''}`,
        labels: { ...vmim.metadata.labels },
        annotations: { ...vmim.metadata.annotations },
        createdAtMs: now,
        phases: [],
        final: false,
      };
      this.#records.set(uid, record);
    }
    record.labels = { ...vmim.metadata.labels };
    record.annotations = { ...vmim.metadata.annotations };
    const phase = vmim.status?.phase;
    if (phase && !record.phases.some((p) => p.phase === phase)) record.phases.push({ phase, atMs: now });
    if (vmim.status?.migrationState) record.migrationState = structuredClone(vmim.status.migrationState);
    record.final ||= isFinalMigration(vmim);
    if (removed) record.removedAtMs ??= now;
    for (const listener of [...this.#listeners]) listener();
  }

  #frozen(record: MutableRecord): MigrationRecord {
    const { final: _final, ...rest } = record;
    return structuredClone(rest);
  }
}

/** When the migration stopped counting as in flight: its final phase, else its removal. */
function endOf(record: MigrationRecord): number | undefined {
  const final = record.phases.find((p) => p.phase === 'Succeeded' || p.phase === 'Failed');
  return final?.atMs ?? record.removedAtMs;
}
