/**
 * The embedded runner's maintenance windows: each enabled window's cron, in its time zone, on a clock
 * (lib/bus/scheduler.ts's runner), calling `open` with the window and the occurrence's time — what
 * EventBridge Scheduler does on AWS with `<aws.scheduler.scheduled-time>`.
 */
import { parseCron } from '../../bus/cron.ts';
import { type BusClock, ScheduleRunner, type TimedSchedule } from '../../bus/scheduler.ts';
import type { WindowDefinition } from './definition.ts';

interface WindowSchedule extends TimedSchedule {
  readonly window: WindowDefinition;
}

export class WindowScheduler {
  readonly #runner: ScheduleRunner<WindowSchedule>;

  constructor(
    windows: readonly WindowDefinition[],
    clock: BusClock,
    open: (window: WindowDefinition, scheduledTime: Date) => void,
  ) {
    const schedules = windows
      .filter((window) => window.enabled)
      .map((window): WindowSchedule => {
        const cron = parseCron(window.schedule, window.timezone);
        return { name: window.name, window, next: (previous) => cron.next(previous) };
      });
    this.#runner = new ScheduleRunner(schedules, clock, (schedule, at) => open(schedule.window, at));
  }

  /** Arms every enabled window from now. Idempotent. */
  start(): void {
    this.#runner.start();
  }

  stop(): void {
    this.#runner.stop();
  }

  /** The windows whose next opening is armed. */
  get armed(): string[] {
    return this.#runner.armed;
  }
}
