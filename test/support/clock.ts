/**
 * A simulator clock (sim/store's `Clock`) that moves only when the test moves it: `advance(ms)` runs the
 * timers that fall due, in order. A test that needs time to have passed says how much, instead of sleeping
 * and hoping the machine was fast enough (or slow enough).
 */
import type { Clock, ClockTimer } from '../../sim/store/types.ts';

export interface SteppedClock extends Clock {
  /** Moves simulated time on by `ms`, running each timer that falls due at its own time. */
  advance(ms: number): void;
}

interface Timer {
  due: number;
  readonly every: number | undefined;
  readonly callback: () => void;
}

export function steppedClock(startMs = Date.parse('2026-01-01T00:00:00Z')): SteppedClock {
  let now = startMs;
  const timers = new Set<Timer>();
  const stop = new AbortController();
  const schedule = (callback: () => void, ms: number, every: number | undefined): ClockTimer => {
    if (stop.signal.aborted) return { cancel: () => {} };
    const timer: Timer = { due: now + Math.max(0, ms), every, callback };
    timers.add(timer);
    return { cancel: () => timers.delete(timer) };
  };
  const clock: SteppedClock = {
    speed: 1,
    now: () => now,
    nowIso: () => `${new Date(now).toISOString().slice(0, 19)}Z`,
    setTimeout: (callback, ms) => schedule(callback, ms, undefined),
    setInterval: (callback, ms) => schedule(callback, ms, Math.max(1, ms)),
    sleep: (ms) =>
      new Promise<void>((resolve, reject) => {
        if (stop.signal.aborted) return reject(new Error('clock stopped'));
        const timer = schedule(resolve, ms, undefined);
        stop.signal.addEventListener('abort', () => {
          timer.cancel();
          reject(new Error('clock stopped'));
        });
      }),
    stopped: stop.signal,
    stop: () => {
      timers.clear();
      stop.abort(new Error('clock stopped'));
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const next = [...timers].filter((t) => t.due <= until).sort((a, b) => a.due - b.due)[0];
        if (!next) break;
        now = next.due;
        if (next.every === undefined) timers.delete(next);
        else next.due += next.every;
        next.callback();
      }
      now = until;
    },
  };
  return clock;
}
