/**
 * How a KubeVirt pass waits, bounded, for a migration slot to free up instead of returning and waiting out
 * a Step Functions backoff (2 s × 1.5ⁿ, up to 30 s) that knows nothing of when a migration ends. After a
 * round that leaves drainbridge's migrations in flight, the pass lists this request's migrations once,
 * watches them from that list, and runs its round again (observe, plan, claim, perform, record) as soon as
 * one reaches a final phase or is deleted — or when a failed VMI's retry comes due. It returns when the
 * branch is done, when the wait is over, when the watch ends (the next pass lists afresh), when a Restore
 * released the hold (the round saw it), or when the workflow says the request must stop (an abort: asked
 * at most every STILL_WANTED_EVERY_MS; each round has already recorded what it did).
 */
import type { KubeClient } from '../../clients/kube/client.ts';
import type { KubeVirtApi } from '../../clients/kubevirt/api.ts';
import type { Vmim } from '../../clients/kubevirt/types.ts';
import type { PassInput, PassResult } from '../../model/pass.ts';
import { isFinalMigration, type KubeVirtBranchState, ownMigrationsSelector } from './model.ts';

/** What one round of the pass left. */
export interface KubeVirtRound {
  readonly result: PassResult;
  /** The progress as recorded by the round. */
  readonly state: KubeVirtBranchState;
  /** A Restore released the hold since this step's guard: the pass returns at once. */
  readonly released: boolean;
}

/** The watch of this request's migrations, as the waiting loop uses it. */
export interface MigrationsWatch {
  /** The migrations as the watch last saw them. */
  items(): readonly Vmim[];
  /** True on a waking event (or one since the last call); false after `ms` or once the watch ended. */
  changed(ms: number): Promise<boolean>;
  readonly ended: boolean;
  close(): void;
}

export interface WaitingRounds {
  /** How long the pass may wait in all (0: one round). */
  readonly waitMs: number;
  /** One round at `now`; `woken`: after a wait (a migration ended or a retry came due: one is likely to start). */
  readonly round: (now: Date, woken: boolean) => Promise<KubeVirtRound>;
  /** Lists and watches this request's migrations for `waitMs` at most; undefined without KubeVirt. */
  readonly watch: (waitMs: number) => Promise<MigrationsWatch | undefined>;
}

/**
 * How often, at most, a waiting pass asks the workflow whether the request is still wanted (two reads):
 * an abort, written on the Evacuation record that no watch here sees, stops it within about this long.
 */
const STILL_WANTED_EVERY_MS = 5_000;

/** Whether a watch event can free a slot: a migration reached a final phase or was deleted. */
export const freesSlot = (type: string, vmim: Vmim): boolean => type === 'DELETED' || isFinalMigration(vmim);

/**
 * Lists this request's migrations (by their labels) and opens a watch from that list for `waitMs` and a
 * margin; undefined without KubeVirt. A watch that fails or does not open reads as ended.
 */
export async function watchOwnMigrations(
  kube: KubeClient,
  api: KubeVirtApi,
  requestId: string,
  waitMs: number,
): Promise<MigrationsWatch | undefined> {
  const watched = await api.watchedMigrations(ownMigrationsSelector(requestId), freesSlot);
  if (!watched) return undefined;
  const { list, signal } = watched;
  await list.start(kube.kubeConfig, waitMs / 1000 + 5);
  return {
    items: () => list.items(),
    changed: (ms) => signal.changed(ms),
    get ended() {
      return signal.ended;
    },
    close: () => list.close(),
  };
}

/** The names of drainbridge's migrations the round left moving VMIs. */
function ownInFlight(state: KubeVirtBranchState): Set<string> {
  return new Set(
    Object.values(state.vmis).flatMap((vmi) =>
      vmi.status === 'migrating' && vmi.migrationBy === 'drainbridge' && vmi.migration ? [vmi.migration] : [],
    ),
  );
}

/** Milliseconds until the first failed VMI's retry comes due (0 when one is due), or Infinity. */
function untilRetry(state: KubeVirtBranchState, nowMs: number): number {
  const due = Object.values(state.vmis).flatMap((vmi) =>
    vmi.status === 'retry-wait' && vmi.retryAt ? [Date.parse(vmi.retryAt) - nowMs] : [],
  );
  return Math.max(0, Math.min(Number.POSITIVE_INFINITY, ...due));
}

/**
 * Whether one of the migrations the round saw in flight had already ended when the watch listed them
 * (it ended between the round's reads and the list: no event will report it).
 */
function endedBeforeTheList(watch: MigrationsWatch, inFlight: ReadonlySet<string>): boolean {
  const listed = new Map(watch.items().map((vmim) => [vmim.metadata.name, vmim]));
  return [...inFlight].some((name) => {
    const vmim = listed.get(name);
    return vmim === undefined || isFinalMigration(vmim);
  });
}

/** One waiting pass: its clock, its watch (opened when first needed) and when it last asked the workflow. */
class Waiter {
  readonly #input: PassInput;
  readonly #rounds: WaitingRounds;
  readonly #startedMs = performance.now();
  #askedMs = this.#startedMs;
  #watch: MigrationsWatch | undefined;

  constructor(input: PassInput, rounds: WaitingRounds) {
    this.#input = input;
    this.#rounds = rounds;
  }

  clock(): Date {
    return new Date(this.#input.now.getTime() + (performance.now() - this.#startedMs));
  }

  /**
   * Waits for what the round left to wait for: 'round' when one of its migrations ended or a retry came
   * due, 'ask' after a slice with neither, 'return' when the wait is over, nothing is left to wait for,
   * or the watch ended.
   */
  async next(round: KubeVirtRound): Promise<'round' | 'ask' | 'return'> {
    if (round.result.done || round.released) return 'return';
    const left = this.#rounds.waitMs - (performance.now() - this.#startedMs);
    const inFlight = ownInFlight(round.state);
    const retryIn = untilRetry(round.state, this.clock().getTime());
    if (left <= 0 || (inFlight.size === 0 && retryIn > left)) return 'return';
    if (!this.#watch) {
      this.#watch = await this.#rounds.watch(left);
      if (!this.#watch) return 'return';
      if (endedBeforeTheList(this.#watch, inFlight)) return 'round';
    }
    const slice = Math.min(left, retryIn, STILL_WANTED_EVERY_MS);
    const woke = await this.#watch.changed(slice);
    if (this.#watch.ended) return 'return';
    return woke || retryIn <= slice ? 'round' : 'ask';
  }

  /** Asks the workflow whether the request is still wanted, at most every STILL_WANTED_EVERY_MS; throws if not. */
  async askIfDue(): Promise<void> {
    if (performance.now() - this.#askedMs < STILL_WANTED_EVERY_MS) return;
    this.#askedMs = performance.now();
    // Every round has already recorded what it did: throwing here loses nothing.
    await this.#input.stillWanted?.();
  }

  close(): void {
    this.#watch?.close();
  }
}

/** Rounds of the pass within `waitMs`; the result of the last round, `progressed` if any round progressed. */
export async function roundsWithin(input: PassInput, rounds: WaitingRounds): Promise<PassResult> {
  const waiter = new Waiter(input, rounds);
  let round = await rounds.round(input.now, false);
  let progressed = round.result.progressed;
  let reported = false;
  try {
    for (;;) {
      const next = await waiter.next(round);
      if (next === 'return') break;
      // The pass goes on: what this round moved is told now (Evacuation Progress per move), not at its end.
      if (round.result.progressed && !reported) await input.reportProgress?.(round.result);
      reported = true;
      await waiter.askIfDue();
      if (next === 'ask') continue;
      round = await rounds.round(waiter.clock(), true);
      reported = false;
      progressed ||= round.result.progressed;
    }
  } finally {
    waiter.close();
  }
  return { ...round.result, progressed };
}
