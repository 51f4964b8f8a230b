/**
 * The seeded schedule: until the end, wait a random 1–5 s and run one event picked by weight. The seed
 * draws, per event, the wait, the kind and a seed of its own for the event's choices (which node, how
 * long): so `--seed N` runs the same kinds at the same times again, whatever the cluster did between,
 * and each event's choices among the same candidates are the same.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIONS, NAMED_ACTIONS } from './actions.ts';
import { type Random, seededRandom } from './random.ts';
import type { SoakWorld } from './world.ts';

/** One event of the schedule: acts and answers the kind to count, or undefined when it had nothing to act on. */
interface Scheduled {
  readonly kind: string;
  readonly weight: number;
  readonly run: (w: SoakWorld) => Promise<string | undefined>;
}

const SCHEDULED: readonly Scheduled[] = [
  ...ACTIONS.map((a) => ({
    kind: a.kind,
    weight: a.weight,
    run: async (w: SoakWorld) => ((await a.act(w)) ? a.kind : undefined),
  })),
  ...NAMED_ACTIONS.map((a) => ({ kind: 'cloud notice event', weight: a.weight, run: a.act })),
];

/**
 * With `--nova` only (the default schedule draws as before): an operator disables a Nova host's
 * nova-compute with their own reason, and enables it again after a while (soak/nova.ts).
 */
const NOVA_SCHEDULED: readonly Scheduled[] = [
  {
    kind: 'operator disables nova-compute',
    weight: 2,
    run: async (w) => w.nova?.operatorDisables(w.random, ++w.serial),
  },
  { kind: 'operator enables nova-compute again', weight: 2, run: async (w) => w.nova?.operatorEnables(w.random) },
];

function pickAction(random: Random, actions: readonly Scheduled[]): Scheduled {
  let left = random.next() * actions.reduce((sum, a) => sum + a.weight, 0);
  for (const action of actions) {
    left -= action.weight;
    if (left < 0) return action;
  }
  return actions[0] as Scheduled;
}

/** Counts an event and writes it, timed, to events.log beside the processes' logs (to line them up). */
export function count(w: SoakWorld, kind: string): void {
  w.counts.set(kind, (w.counts.get(kind) ?? 0) + 1);
  appendFileSync(join(w.dir, 'events.log'), `${new Date().toISOString()} ${kind}\n`);
}

/** Runs events until `endsAt`; `each` is called every loop (request-log reading, RSS samples). */
export async function runSchedule(w: SoakWorld, endsAt: number, each: () => void): Promise<void> {
  const schedule = w.random;
  const actions = w.nova ? [...SCHEDULED, ...NOVA_SCHEDULED] : SCHEDULED;
  while (Date.now() < endsAt) {
    await new Promise((resolve) => setTimeout(resolve, schedule.int(1_000, 5_000)));
    each();
    const action = pickAction(schedule, actions);
    w.random = seededRandom(schedule.int(0, 2 ** 31));
    try {
      const kind = await action.run(w);
      if (kind) count(w, kind);
    } catch (error) {
      // An event that could not act (kubectl timed out in an outage) is not a finding about drainbridge.
      count(w, `${action.kind} (could not act: ${(error as Error).message.split('\n')[0]?.slice(0, 60)})`);
    }
  }
}
