/**
 * The seeded schedule: until the end, wait a random 1–5 s and run one event picked by weight. The seed
 * draws, per event, the wait, the kind and a seed of its own for the event's choices (which node, how
 * long): so `--seed N` runs the same kinds at the same times again, whatever the cluster did between,
 * and each event's choices among the same candidates are the same.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIONS } from './actions.ts';
import { type Random, seededRandom } from './random.ts';
import type { SoakWorld } from './world.ts';

const TOTAL_WEIGHT = ACTIONS.reduce((sum, a) => sum + a.weight, 0);

function pickAction(random: Random): (typeof ACTIONS)[number] {
  let left = random.next() * TOTAL_WEIGHT;
  for (const action of ACTIONS) {
    left -= action.weight;
    if (left < 0) return action;
  }
  return ACTIONS[0] as (typeof ACTIONS)[number];
}

/** Counts an event and writes it, timed, to events.log beside the processes' logs (to line them up). */
export function count(w: SoakWorld, kind: string): void {
  w.counts.set(kind, (w.counts.get(kind) ?? 0) + 1);
  appendFileSync(join(w.dir, 'events.log'), `${new Date().toISOString()} ${kind}\n`);
}

/** Runs events until `endsAt`; `each` is called every loop (request-log reading, RSS samples). */
export async function runSchedule(w: SoakWorld, endsAt: number, each: () => void): Promise<void> {
  const schedule = w.random;
  while (Date.now() < endsAt) {
    await new Promise((resolve) => setTimeout(resolve, schedule.int(1_000, 5_000)));
    each();
    const action = pickAction(schedule);
    w.random = seededRandom(schedule.int(0, 2 ** 31));
    try {
      if (await action.act(w)) count(w, action.kind);
    } catch (error) {
      // An event that could not act (kubectl timed out in an outage) is not a finding about drainbridge.
      count(w, `${action.kind} (could not act: ${(error as Error).message.split('\n')[0]?.slice(0, 60)})`);
    }
  }
}
