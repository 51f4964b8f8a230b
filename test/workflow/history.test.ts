/**
 * No Evacuate execution can exceed Step Functions' 25,000-event history, however long the evacuation:
 * a static check of the packaged definition (state-machines/definitions.json). Every polling Task's retries are
 * bounded and caught; every caught round is counted in `$.history.events` with at least what it can have
 * written; the counts at which the loops leave (to continue as new) leave room for what is not counted.
 * The event accounting is the executor's (2 per state, 3 per Lambda attempt, 2 per Parallel state); the
 * 30-simulated-hour run in kubevirt-long.test.ts checks the same against the interpreter's event log.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { HISTORY_LIMIT } from '../../lib/workflow/history-budget.ts';

interface Retrier {
  readonly ErrorEquals: readonly string[];
  readonly MaxAttempts?: number;
}
interface Choice {
  readonly Variable?: string;
  readonly NumericGreaterThanEquals?: number;
  readonly Next: string;
}
interface State {
  readonly Type: string;
  readonly Resource?: string;
  readonly Next?: string;
  readonly Default?: string;
  readonly Retry?: readonly Retrier[];
  readonly Catch?: readonly { ErrorEquals: readonly string[]; Next: string }[];
  readonly Choices?: readonly Choice[];
  readonly Parameters?: Record<string, unknown>;
  readonly ResultSelector?: Record<string, unknown>;
  readonly Branches?: readonly { StartAt: string; States: Record<string, State> }[];
}

const definitions = JSON.parse(
  readFileSync(new URL('../../state-machines/definitions.json', import.meta.url), 'utf8'),
) as {
  stateMachines: { evacuate: { States: Record<string, State> } };
};
const STATES = definitions.stateMachines.evacuate.States;
const POLLING_ERRORS = ['NotYetDone', 'SlotUnavailable', 'WaitingInLine', 'RequestRunningElsewhere'];
const STATE = 2;
const LAMBDA = 3;
/** A service integration attempt (startExecution): TaskScheduled, TaskStarted, TaskSubmitted/Succeeded/Failed… */
const SERVICE_CALL = 5;

function allStates(states: Record<string, State>): [string, State][] {
  return Object.entries(states).flatMap(([name, state]) => [
    [name, state] as [string, State],
    ...(state.Branches ?? []).flatMap((branch) => allStates(branch.States)),
  ]);
}
const EVERY = new Map(allStates(STATES));

function state(name: string): State {
  const found = EVERY.get(name);
  assert.ok(found, `state ${name} exists`);
  return found;
}

/** The most a Task writes in one entry: entered + exited, and every attempt its retriers allow. */
function taskEvents(task: State): number {
  const attempts = 1 + (task.Retry ?? []).reduce((sum, retrier) => sum + (retrier.MaxAttempts ?? 3), 0);
  const perAttempt = task.Resource?.startsWith('arn:aws:states:::') ? SERVICE_CALL : LAMBDA;
  return STATE + attempts * perAttempt;
}

/** The constant a Pass state adds to `$.history.events` (States.MathAdd($.history.events, N)). */
function increment(pass: State): number {
  const text = String(pass.Parameters?.['events.$'] ?? '');
  const match = /^States\.MathAdd\(\$\.history\.events, (\d+)\)$/.exec(text);
  assert.ok(match, `${JSON.stringify(pass.Parameters)} adds a constant to the history count`);
  return Number(match[1]);
}

/** A count a Choice leaves the loop at (`$.history.events >= N`). */
function leavesAt(choice: State): number {
  const rule = choice.Choices?.find((c) => c.Variable === '$.history.events');
  assert.ok(rule?.NumericGreaterThanEquals, 'the Choice checks the history count');
  return rule.NumericGreaterThanEquals;
}

interface Loop {
  readonly task: string;
  /** The most one round writes (the Task with all retries, the caught-error Pass, the count, the Choice). */
  readonly worstRound: number;
  readonly counted: number;
  readonly leavesAt: number;
}

/**
 * Follows a polling Task's catch of its polling error (each such catcher: the Admit loop has two waits)
 * through the states of the round — a callback Task or a Wait that sleeps, the Pass states — to the
 * Choice that closes the loop; the worst of its rounds.
 */
function loopOf(taskName: string): Loop {
  const task = state(taskName);
  const catchers = (task.Catch ?? []).filter((c) => c.ErrorEquals.some((e) => POLLING_ERRORS.includes(e)));
  assert.ok(
    catchers.length > 0,
    `${taskName}: its polling error is caught once its retries run out (no endless Retry)`,
  );
  const rounds = catchers.map((catcher) => roundFrom(taskName, catcher.Next));
  const counted = new Set(rounds.map((round) => round.counted));
  assert.equal(counted.size, 1, `${taskName}: every wait of the round goes to the same count`);
  return rounds.reduce((worst, round) => (round.worstRound > worst.worstRound ? round : worst));
}

/**
 * The round from `first` to the Choice that closes it, the worst of its paths: a wait Task's catch may
 * lead to another wait of the round (WaitInLine → WaitForSlot when its token could not be parked).
 */
function roundFrom(taskName: string, first: string): Loop {
  const rest = pathFrom(taskName, first, new Set());
  return { task: taskName, worstRound: taskEvents(state(taskName)) + rest.written + STATE, ...rest };
}

function pathFrom(
  taskName: string,
  name: string,
  seen: ReadonlySet<string>,
): { written: number; counted: number; leavesAt: number } {
  const current = state(name);
  if (current.Type === 'Choice') return { written: 0, counted: 0, leavesAt: leavesAt(current) };
  assert.ok(['Pass', 'Task', 'Wait'].includes(current.Type), `${taskName}: the round ends in a Choice`);
  assert.ok(!seen.has(name), `${taskName}: the round through ${name} does not loop`);
  const here = current.Type === 'Task' ? taskEvents(current) : STATE;
  const counted = current.Parameters?.['events.$'] ? increment(current) : 0;
  // Within the round: the Next, and a catch that goes on to another wait rather than to the count.
  const onward = [current.Next ?? '', ...(current.Catch ?? []).map((c) => c.Next)].filter(
    (next) => next !== taskName && next !== '',
  );
  const paths = [...new Set(onward)].map((next) => pathFrom(taskName, next, new Set([...seen, name])));
  const worst = paths.reduce((a, b) => (b.written > a.written ? b : a));
  const counts = new Set(paths.map((p) => p.counted));
  assert.equal(counts.size, 1, `${taskName}: every path from ${name} goes to the same count`);
  return { written: here + worst.written, counted: counted + worst.counted, leavesAt: worst.leavesAt };
}

const pollingTasks = [...EVERY].filter(
  ([, s]) =>
    s.Type === 'Task' &&
    [...(s.Retry ?? []), ...(s.Catch ?? [])].some((r) => r.ErrorEquals.some((e) => POLLING_ERRORS.includes(e))),
);

describe('execution history of the Evacuate machine, however long the evacuation', () => {
  const loops = pollingTasks.map(([name]) => loopOf(name));

  it('every polling Task retries a bounded number of times, then its loop counts the round', () => {
    assert.ok(loops.length >= 5, `Admit and every branch pass poll (${loops.map((l) => l.task).join(', ')})`);
    for (const loop of loops) {
      assert.ok(
        loop.counted >= loop.worstRound,
        `${loop.task}: counts ${loop.counted} per round, can write ${loop.worstRound}`,
      );
    }
    for (const [name, s] of EVERY) {
      for (const retrier of s.Retry ?? [])
        assert.ok((retrier.MaxAttempts ?? 3) <= 100, `${name} retries at most 100 times`);
    }
  });

  it('the Parallel state sums every branch count, and any branch leaving makes the execution continue', () => {
    const evacuate = state('Evacuate');
    const branches = evacuate.Branches?.length ?? 0;
    const selector = evacuate.ResultSelector ?? {};
    for (let i = 0; i < branches; i++) {
      assert.match(String(selector['events.$']), new RegExp(`\\$\\[${i}\\]\\.events`));
      assert.match(String(selector['continue.$']), new RegExp(`\\$\\[${i}\\]\\.continue`));
    }
    assert.equal(state('AfterEvacuate').Choices?.[0]?.Next, 'PrepareContinuation');
    assert.equal(state('ContinueAsNew').Resource, 'arn:aws:states:::states:startExecution');
  });

  it(`no path through one execution writes ${HISTORY_LIMIT} events`, () => {
    const start = Number((state('ResolveTarget').ResultSelector?.history as { events?: number } | undefined)?.events);
    const prefix = 1 + taskEvents(state('ResolveTarget')) + STATE * 2; // ExecutionStarted, HasNotBefore, WaitForNotBefore
    assert.ok(start >= prefix, `the count starts at ${start} ≥ ${prefix}`);
    const byTask = new Map(loops.map((loop) => [loop.task, loop]));
    const admit = byTask.get('Admit') as Loop;
    // Not counted: Admit's successful call, PrepareBranches and the check before the Parallel state.
    const toParallel = taskEvents(state('Admit')) + taskEvents(state('PrepareBranches')) + STATE;
    const entryLimit = leavesAt(state('BeforeEvacuate'));
    const branchLoops = (state('Evacuate').Branches ?? []).map((b) => byTask.get(b.StartAt) as Loop);
    // Each branch: its loop leaves at most one round past its share; then its end Pass state.
    const parallel = branchLoops.reduce((sum, loop) => sum + loop.leavesAt + loop.counted + STATE, 0);
    const parallelOverhead = 2 * STATE + 2 * STATE; // the Parallel state (entered, exited, started, succeeded), the tally, the check
    const infra = byTask.get('InfraPodsPass') as Loop;
    const tail = Math.max(
      STATE + taskEvents(state('ContinueAsNew')) + STATE + 1, // PrepareContinuation, ContinueAsNew, Continued, end
      taskEvents(state('FinishEvacuation')) + 1,
      taskEvents(state('RecordFailure')) + STATE + 1,
    );
    const paths = {
      'waiting for a slot, then continuing': admit.leavesAt + admit.counted + toParallel + tail,
      'through the Parallel state, then continuing': entryLimit + toParallel + parallel + parallelOverhead + tail,
      'through the Parallel state and the infra-pod loop':
        Math.max(infra.leavesAt, entryLimit + parallel) + infra.counted + toParallel + parallelOverhead + tail,
    };
    console.log(`worst case per execution: ${JSON.stringify(paths)} (limit ${HISTORY_LIMIT})`);
    for (const [path, events] of Object.entries(paths)) {
      assert.ok(events < HISTORY_LIMIT, `${path}: up to ${events} events`);
    }
  });
});
