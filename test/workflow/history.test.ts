/**
 * The longest drain the defaults allow stays under Step Functions' 25,000-event execution history
 * limit. A calculation, not an 8-hour run: the Retry settings come from the packaged definition
 * (workflow/definitions.json), the event accounting from the executor's `estimateHistoryEvents`, the
 * time limit from the configuration's default, and full jitter is simulated with a seeded generator.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type ExecutionStats, estimateHistoryEvents } from '../../embedded/executor.ts';
import { MAX_EVACUATION_HOURS_LIMIT } from '../../lib/config/schema.ts';

const HISTORY_LIMIT = 25_000;
/** The kubelet's default --max-pods: the most pods one node carries by default. */
const DEFAULT_MAX_PODS = 110;
/** A pass progresses only when an item changes state: its eviction is accepted, or it leaves the node. */
const PROGRESS_STEPS_PER_ITEM = 2;

interface Retrier {
  readonly ErrorEquals: readonly string[];
  readonly IntervalSeconds: number;
  readonly BackoffRate: number;
  readonly MaxDelaySeconds: number;
  readonly MaxAttempts: number;
  readonly JitterStrategy?: string;
}
interface State {
  readonly Type: string;
  readonly Retry?: readonly Retrier[];
  readonly Branches?: readonly { States: Record<string, State> }[];
}

const definitions = JSON.parse(readFileSync(new URL('../../workflow/definitions.json', import.meta.url), 'utf8')) as {
  stateMachines: { evacuate: { States: Record<string, State> } };
};

/** Every state of a machine, through Parallel branches. */
function allStates(states: Record<string, State>): [string, State][] {
  return Object.entries(states).flatMap(([name, state]) => [
    [name, state] as [string, State],
    ...(state.Branches ?? []).flatMap((branch) => allStates(branch.States)),
  ]);
}

function notYetDoneRetrier(stateName: string): Retrier {
  const state = allStates(definitions.stateMachines.evacuate.States).find(([name]) => name === stateName)?.[1];
  const retrier = state?.Retry?.find((r) => r.ErrorEquals.includes('NotYetDone'));
  assert.ok(retrier, `${stateName} retries NotYetDone`);
  return retrier;
}

/** mulberry32: a small seeded generator, so the jitter simulation is repeatable. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The delay before retry `attempt` (1-based), as Step Functions computes it, with full jitter. */
function retryDelaySeconds(retrier: Retrier, attempt: number, random: () => number): number {
  const capped = Math.min(retrier.IntervalSeconds * retrier.BackoffRate ** (attempt - 1), retrier.MaxDelaySeconds);
  return retrier.JitterStrategy === 'FULL' ? random() * capped : capped;
}

interface PollingRun {
  /** Lambda invocations of the pass (NotYetDone attempts and progressing calls). */
  readonly invocations: number;
  /** Entries of the pass's Task and Choice states (one loop per progressing call). */
  readonly loopTransitions: number;
  /** Whether the retrier's MaxAttempts ran out before the time limit (the drain would fail early). */
  readonly exhausted: boolean;
}

/** Where the progressing calls fall: `worst` just as the backoff reached its cap (so each restarts it), `spread` evenly in time. */
type Placement = 'worst' | 'spread';

/** One branch polling until `limitSeconds`; nothing changes except `progressCalls` progressing calls placed as `placement` says. */
function simulatePolling(
  retrier: Retrier,
  limit: { seconds: number; progressCalls: number; placement: Placement },
  random: () => number,
): PollingRun {
  const rampAttempts =
    Math.ceil(Math.log(retrier.MaxDelaySeconds / retrier.IntervalSeconds) / Math.log(retrier.BackoffRate)) + 1;
  const spacing = limit.seconds / (limit.progressCalls + 1);
  let elapsed = 0;
  let invocations = 0;
  let loops = 1;
  let attempt = 0;
  let progressLeft = limit.progressCalls;
  while (elapsed < limit.seconds) {
    invocations++;
    const due =
      limit.placement === 'worst'
        ? attempt >= rampAttempts
        : elapsed >= spacing * (limit.progressCalls - progressLeft + 1);
    if (progressLeft > 0 && due) {
      progressLeft--;
      loops++;
      attempt = 0; // the Choice loops straight back: a fresh state entry, a fresh retry count
      continue;
    }
    attempt++;
    if (attempt > retrier.MaxAttempts) return { invocations, loopTransitions: 2 * loops, exhausted: true };
    elapsed += retryDelaySeconds(retrier, attempt, random);
  }
  return { invocations, loopTransitions: 2 * loops, exhausted: false };
}

describe('execution history of the longest drain the configuration allows', () => {
  // The longest the configuration allows (not just the default), so no setting can exceed the limit.
  const maxHours = MAX_EVACUATION_HOURS_LIMIT;
  const retrier = notYetDoneRetrier('PodsPass');
  const states = allStates(definitions.stateMachines.evacuate.States);

  it('the packaged definition polls with the backoff the design requires', () => {
    assert.ok(retrier.IntervalSeconds <= 2, 'a short first interval');
    assert.ok(retrier.BackoffRate <= 1.5);
    assert.ok(retrier.MaxDelaySeconds <= 30);
    assert.equal(retrier.JitterStrategy, 'FULL');
    for (const name of ['NovaPass', 'InfraPodsPass']) assert.deepEqual(notYetDoneRetrier(name), retrier);
  });

  /** The worst of 200 jitter runs of the longest default drain: stats and both event counts. */
  function longestDrain(progressCalls: number, placement: Placement): { stats: ExecutionStats; estimated: number } {
    const random = seeded(20261121);
    let worst: { stats: ExecutionStats; estimated: number } | undefined;
    for (let trial = 0; trial < 200; trial++) {
      // The worst supported configuration: the pod and Nova branches poll in parallel for the whole time,
      // each with its own progressing passes (pods: 2 per pod; Nova: 2 per server, as many servers as pods).
      const pods = simulatePolling(retrier, { seconds: maxHours * 3600, progressCalls, placement }, random);
      const nova = simulatePolling(retrier, { seconds: maxHours * 3600, progressCalls, placement }, random);
      const run = {
        invocations: pods.invocations + nova.invocations,
        loopTransitions: pods.loopTransitions + nova.loopTransitions,
        exhausted: pods.exhausted || nova.exhausted,
      };
      assert.equal(run.exhausted, false, 'MaxAttempts outlasts the maximum evacuation time');
      const stats: ExecutionStats = {
        // every state entered once (an upper bound of the straight path), plus the pass loop's iterations
        stateTransitions: states.length + run.loopTransitions,
        lambdaInvocations: states.filter(([, s]) => s.Type === 'Task').length + run.invocations,
        lambdaErrors: run.invocations - 2 * progressCalls,
        retries: run.invocations - 2 * progressCalls,
        parallelStates: states.filter(([, s]) => s.Type === 'Parallel').length,
      };
      const estimated = estimateHistoryEvents(stats);
      if (!worst || estimated > worst.estimated) worst = { stats, estimated };
    }
    assert.ok(worst);
    console.log(
      `longest allowed drain (${maxHours} h, pods and Nova polling in parallel, ${progressCalls} progressing passes each placed ${placement}, worst of 200 jitter runs): ` +
        `${worst.stats.stateTransitions} state transitions, ${worst.stats.lambdaInvocations} Lambda invocations → ` +
        `≈${worst.estimated} history events, limit ${HISTORY_LIMIT}`,
    );
    return worst;
  }

  it(`stays under ${HISTORY_LIMIT} events by the executor's estimate: ${maxHours} h of polling with no progress`, () => {
    const { estimated } = longestDrain(0, 'spread');
    assert.ok(estimated < HISTORY_LIMIT, `estimated ${estimated} history events exceed ${HISTORY_LIMIT}`);
  });

  it(`stays under ${HISTORY_LIMIT} events when every progressing pass restarts the backoff at its cap`, () => {
    const { estimated } = longestDrain(PROGRESS_STEPS_PER_ITEM * DEFAULT_MAX_PODS, 'worst');
    assert.ok(estimated < HISTORY_LIMIT, `${estimated} history events exceed ${HISTORY_LIMIT}`);
  });
});
