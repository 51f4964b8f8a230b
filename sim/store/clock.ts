/**
 * A clock whose time runs `speed` times faster than real time. Simulated time starts at the real
 * time of creation; every timer is tracked so that `stop()` leaves nothing pending (the test process
 * must exit).
 */
import type { Clock, ClockTimer } from './types.ts';

/** Creates a scaled clock. `speed` must be a positive finite number. */
export function createClock(speed = 1, startMs = Date.now()): Clock {
  if (!Number.isFinite(speed) || speed <= 0) throw new RangeError(`speed: must be a positive number, got ${speed}`);
  const realStart = performance.now();
  const pending = new Set<NodeJS.Timeout>();
  let stopped = false;

  const now = (): number => startMs + (performance.now() - realStart) * speed;
  const realDelay = (ms: number): number => Math.max(0, ms / speed);

  function schedule(callback: () => void, ms: number, repeat: boolean): ClockTimer {
    if (stopped) return { cancel: () => {} };
    const run = (): void => {
      if (!repeat) pending.delete(handle);
      callback();
    };
    const handle = repeat ? setInterval(run, Math.max(1, realDelay(ms))) : setTimeout(run, realDelay(ms));
    pending.add(handle);
    return {
      cancel: () => {
        clearTimeout(handle);
        pending.delete(handle);
      },
    };
  }

  const pendingSleeps = new Set<(error: Error) => void>();
  const stopSignal = new AbortController();

  return {
    speed,
    now,
    nowIso: () => `${new Date(now()).toISOString().slice(0, 19)}Z`,
    setTimeout: (callback, ms) => schedule(callback, ms, false),
    setInterval: (callback, ms) => schedule(callback, ms, true),
    sleep: (ms) =>
      new Promise<void>((resolve, reject) => {
        if (stopped) {
          reject(new Error('clock stopped'));
          return;
        }
        pendingSleeps.add(reject);
        schedule(
          () => {
            pendingSleeps.delete(reject);
            resolve();
          },
          ms,
          false,
        );
      }),
    stopped: stopSignal.signal,
    stop: () => {
      if (stopped) return;
      stopped = true;
      for (const handle of pending) clearTimeout(handle);
      pending.clear();
      for (const reject of pendingSleeps) reject(new Error('clock stopped'));
      pendingSleeps.clear();
      stopSignal.abort(new Error('clock stopped'));
    },
  };
}
