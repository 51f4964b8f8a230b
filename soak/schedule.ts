/**
 * The seeded schedule: until the end, wait a random 1–5 s and run one event picked by weight. Every
 * choice (when, what, on which node, for how long) comes from the world's seeded random source, so
 * `--seed N` runs the same schedule again (what drainbridge does in between depends on timing).
 */
import { ACTIONS } from './actions.ts';
import type { SoakWorld } from './world.ts';

const TOTAL_WEIGHT = ACTIONS.reduce((sum, a) => sum + a.weight, 0);

function pickAction(w: SoakWorld): (typeof ACTIONS)[number] {
  let left = w.random.next() * TOTAL_WEIGHT;
  for (const action of ACTIONS) {
    left -= action.weight;
    if (left < 0) return action;
  }
  return ACTIONS[0] as (typeof ACTIONS)[number];
}

export function count(w: SoakWorld, kind: string): void {
  w.counts.set(kind, (w.counts.get(kind) ?? 0) + 1);
}

/** Runs events until `endsAt`; `each` is called every loop (request-log reading, RSS samples). */
export async function runSchedule(w: SoakWorld, endsAt: number, each: () => void): Promise<void> {
  while (Date.now() < endsAt) {
    await new Promise((resolve) => setTimeout(resolve, w.random.int(1_000, 5_000)));
    each();
    const action = pickAction(w);
    try {
      if (await action.act(w)) count(w, action.kind);
    } catch (error) {
      // An event that could not act (kubectl timed out in an outage) is not a finding about drainbridge.
      count(w, `${action.kind} (could not act: ${(error as Error).message.split('\n')[0]?.slice(0, 60)})`);
    }
  }
}
