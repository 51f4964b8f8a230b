/**
 * Runs compiled schedules on a clock: one timer per schedule, re-armed after each run from the
 * run's own time (so a slow `fire` does not shift the schedule). Timers longer than Node's limit
 * (~24.8 days) are chained.
 */
/** What the runner needs of a schedule: its name and when it runs next. */
export interface TimedSchedule {
  readonly name: string;
  /** The run after the one at `previous` (or after the runner started), if any. */
  next(previous: Date): Date | undefined;
}

/** Time for envelopes and schedules; injected so tests need not wait for minutes. */
export interface BusClock {
  now(): Date;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const SYSTEM_CLOCK: BusClock = {
  now: () => new Date(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Node's setTimeout limit. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Arms one timer per schedule on a clock and calls `fire` when each is due, with the run's own time. */
export class ScheduleRunner<S extends TimedSchedule = TimedSchedule> {
  readonly #schedules: readonly S[];
  readonly #clock: BusClock;
  readonly #fire: (schedule: S, at: Date) => void;
  readonly #timers = new Map<string, unknown>();
  #running = false;

  constructor(schedules: readonly S[], clock: BusClock, fire: (schedule: S, at: Date) => void) {
    this.#schedules = schedules;
    this.#clock = clock;
    this.#fire = fire;
  }

  /** Arms every schedule from now. Idempotent. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    const now = this.#clock.now();
    for (const schedule of this.#schedules) this.#arm(schedule, now);
  }

  stop(): void {
    this.#running = false;
    for (const timer of this.#timers.values()) this.#clock.clearTimeout(timer);
    this.#timers.clear();
  }

  /** The names of the schedules whose timer is set (for status lines and tests). */
  get armed(): string[] {
    return [...this.#timers.keys()];
  }

  #arm(schedule: S, previous: Date): void {
    this.#timers.delete(schedule.name);
    if (!this.#running) return;
    const at = schedule.next(previous);
    if (!at) return;
    const delay = Math.max(0, at.getTime() - this.#clock.now().getTime());
    const wait = Math.min(delay, MAX_TIMER_MS);
    const timer = this.#clock.setTimeout(() => {
      if (wait < delay) return this.#arm(schedule, previous);
      this.#fire(schedule, at);
      this.#arm(schedule, at);
    }, wait);
    this.#timers.set(schedule.name, timer);
  }
}
