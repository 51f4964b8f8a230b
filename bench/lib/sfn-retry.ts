/**
 * Drives a reconcile pass the way the packaged Evacuate state machine does: a pass that progressed is
 * run again at once (the Choice state loops back to a fresh Task entry), a pass that did not throws
 * NotYetDone and Step Functions Retry waits IntervalSeconds × BackoffRate^(n−1), capped at
 * MaxDelaySeconds, with full jitter. The policy is read from state-machines/definitions.json, not copied.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PassResult, ReconcilePass } from '../../lib/model/pass.ts';
import type { ResolvedRequest } from '../../lib/model/request.ts';

/** One Step Functions Retry rule. */
export interface RetryRule {
  readonly IntervalSeconds: number;
  readonly BackoffRate: number;
  readonly MaxDelaySeconds?: number;
  readonly MaxAttempts: number;
  readonly JitterStrategy?: 'FULL' | 'NONE';
}

interface StateJson {
  Type: string;
  Retry?: (RetryRule & { ErrorEquals: string[] })[];
  Branches?: { States: Record<string, StateJson> }[];
}

function findState(states: Record<string, StateJson>, name: string): StateJson | undefined {
  if (states[name]) return states[name];
  for (const state of Object.values(states)) {
    for (const branch of state.Branches ?? []) {
      const found = findState(branch.States, name);
      if (found) return found;
    }
  }
  return undefined;
}

/** The NotYetDone Retry rule of `stateName` in the packaged Evacuate machine. */
export function notYetDoneRetry(stateName: string): RetryRule {
  const definitions = JSON.parse(
    readFileSync(new URL('../../state-machines/definitions.json', import.meta.url), 'utf8'),
  ) as {
    stateMachines: Record<string, { States: Record<string, StateJson> }>;
  };
  const states = definitions.stateMachines.evacuate?.States ?? {};
  const rule = findState(states, stateName)?.Retry?.find((r) => r.ErrorEquals.includes('NotYetDone'));
  if (!rule) throw new Error(`state-machines/definitions.json: state ${stateName} has no NotYetDone Retry rule`);
  return rule;
}

/** The wait before retry number `attempt` (1-based), in ms; `random` in [0, 1) for the jitter. */
export function retryDelayMs(rule: RetryRule, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(
    rule.IntervalSeconds * rule.BackoffRate ** (attempt - 1),
    rule.MaxDelaySeconds ?? Number.POSITIVE_INFINITY,
  );
  return (rule.JitterStrategy === 'FULL' ? random() : 1) * ceiling * 1000;
}

/** What driving the pass to its end took. */
export interface DriveResult {
  readonly result: PassResult;
  /** Pass invocations (Lambda invocations of the pass task). */
  readonly passes: number;
  /** Invocations that ended NotYetDone (no progress, retried with backoff). */
  readonly notYetDone: number;
}

/**
 * Runs `pass` until done; throws when the pass throws or `deadline` (ms epoch) passes. When the rule's
 * attempts run out the machine catches NotYetDone, counts the round and enters the pass again: the
 * backoff starts over (lib/workflow/history-budget.ts).
 */
export async function driveLikeStepFunctions(
  pass: ReconcilePass,
  request: ResolvedRequest,
  settings: { rule: RetryRule; deadline: number },
): Promise<DriveResult> {
  const startedAt = new Date().toISOString();
  let attempt = 0;
  let notYetDone = 0;
  for (let passes = 1; ; passes++) {
    const result = await pass.run({ request, now: new Date(), startedAt });
    if (result.done) return { result, passes, notYetDone };
    if (Date.now() > settings.deadline) throw new Error(`not done when the time limit was reached (${passes} passes)`);
    if (result.progressed) {
      attempt = 0;
      continue;
    }
    notYetDone++;
    attempt++;
    if (attempt > settings.rule.MaxAttempts) {
      attempt = 0;
      continue;
    }
    await sleep(retryDelayMs(settings.rule, attempt));
  }
}
