/**
 * Issue 12, item 6: one registry of error names (lib/errors/registry.ts), and the packaged state machines
 * (state-machines/definitions.json, extracted from what serverless.yml deploys) checked against it: every name
 * a Retry or Catch matches is drainbridge's or AWS's; each Task retries exactly the registry's transient
 * names (ResolveTarget all but ClusterUnreachable); polling, waiting, cancel and skip are handled where
 * the registry says and nowhere else; and every error class in lib/ is in the registry (today's
 * ERROR_NAMES was unused and missed SkipEvent).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_REGISTRY, type ErrorHandling, isExpectedError } from '../../../lib/errors/index.ts';
import { isWaitingStep } from '../../../lib/errors/registry.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

interface Retrier {
  ErrorEquals: string[];
}
interface Catcher {
  ErrorEquals: string[];
  Next: string;
}
interface State {
  Type: string;
  Resource?: string;
  Retry?: Retrier[];
  Catch?: Catcher[];
  Error?: string;
  Branches?: { States: Record<string, State> }[];
}
type Machine = { States: Record<string, State> };

const definitions = JSON.parse(readFileSync(join(ROOT, 'state-machines/definitions.json'), 'utf8')) as {
  stateMachines: Record<string, Machine>;
};

/** Every state of a machine, Parallel branches included, with the machine's top-level states for `Next`. */
function statesOf(machine: Machine): [string, State, Record<string, State>][] {
  const out: [string, State, Record<string, State>][] = [];
  const walk = (states: Record<string, State>) => {
    for (const [name, state] of Object.entries(states)) {
      out.push([name, state, machine.States]);
      for (const branch of state.Branches ?? []) walk(branch.States);
    }
  };
  walk(machine.States);
  return out;
}

const ALL = Object.entries(definitions.stateMachines).flatMap(([machine, definition]) =>
  statesOf(definition).map(([name, state, top]) => ({ machine, name, state, top })),
);
const isAws = (name: string) => ['States.', 'Lambda.', 'StepFunctions.'].some((prefix) => name.startsWith(prefix));
const handled = (handling: ErrorHandling) =>
  Object.entries(ERROR_REGISTRY)
    .filter(([, spec]) => spec.handling === handling)
    .map(([name]) => name)
    .sort();
const functionOf = (state: State) => state.Resource?.split(':').at(-1) ?? '';
// Lambda tasks: a service integration (ContinueAsNew's states:startExecution) throws AWS's own names only.
const tasks = ALL.filter(({ state }) => state.Type === 'Task' && !String(state.Resource ?? '').includes(':states:::'));

describe('issue 12 item 6: one registry of error names, checked against the packaged state machines', () => {
  it("every name a Retry, Catch or Fail state uses is in the registry (or is AWS's own)", () => {
    const unknown = new Set<string>();
    for (const { state } of ALL) {
      const names = [
        ...(state.Retry ?? []).flatMap((r) => r.ErrorEquals),
        ...(state.Catch ?? []).flatMap((c) => c.ErrorEquals),
        ...(state.Type === 'Fail' && state.Error ? [state.Error] : []),
      ];
      for (const name of names) if (!isAws(name) && !Object.hasOwn(ERROR_REGISTRY, name)) unknown.add(name);
    }
    assert.deepEqual([...unknown], []);
  });

  it("each Task retries exactly the registry's transient names; ResolveTarget all but the after-start ones", () => {
    const transient = handled('transient');
    const afterStart = handled('transient-after-start');
    for (const { machine, name, state } of tasks) {
      const retrier = (state.Retry ?? []).find((r) => r.ErrorEquals.includes('TransientError'));
      assert.ok(retrier, `${machine}.${name} has no transient retrier`);
      const ours = retrier.ErrorEquals.filter((n) => !isAws(n)).sort();
      const expected = name === 'ResolveTarget' ? transient : [...transient, ...afterStart].sort();
      assert.deepEqual(ours, expected, `${machine}.${name}`);
    }
  });

  it('polling, waiting, cancel and skip are handled where the registry says, and nowhere else', () => {
    for (const { machine, name, state, top } of tasks) {
      const retried = (state.Retry ?? []).flatMap((r) => r.ErrorEquals);
      const where = `${machine}.${name}`;
      for (const poll of handled('poll')) assert.equal(retried.includes(poll), functionOf(state) === 'pass', where);
      // A waiting request is woken or sleeps (WaitForSlot, WaitInLine), not retried: Admit catches its waits.
      // Behind another execution of the same request no wake-up comes, nor for a lock held a moment: Admit
      // retries those two, then catches them.
      const caught = (state.Catch ?? []).flatMap((c) => c.ErrorEquals);
      for (const wait of handled('wait')) {
        const retriedHere =
          functionOf(state) === 'admit' && (wait === 'RequestRunningElsewhere' || wait === 'AdmissionBusy');
        assert.equal(retried.includes(wait), retriedHere, `${where} retries ${wait}`);
        assert.equal(caught.includes(wait), functionOf(state) === 'admit', where);
      }
      // A token WaitInLine could not park: caught there into WaitForSlot, never retried, nowhere else.
      for (const rewait of handled('rewait')) {
        assert.ok(!retried.includes(rewait), `${where} retries ${rewait}`);
        const into = (state.Catch ?? []).find((c) => c.ErrorEquals.includes(rewait))?.Next;
        assert.equal(into, name === 'WaitInLine' ? 'WaitForSlot' : undefined, `${where} catches ${rewait}`);
      }
      for (const never of [...handled('fail'), ...handled('cancel'), ...handled('skip'), ...handled('none')]) {
        assert.ok(!retried.includes(never), `${where} retries ${never}`);
      }
      for (const catcher of state.Catch ?? []) {
        const target = top[catcher.Next];
        for (const caught of catcher.ErrorEquals) {
          const handling = (ERROR_REGISTRY as Record<string, { handling: ErrorHandling }>)[caught]?.handling;
          if (handling === 'cancel') assert.equal(target?.Type === 'Fail' && target.Error, caught, where);
          if (handling === 'skip') assert.equal(target?.Type, 'Succeed', where);
        }
      }
    }
  });

  it('every handling the registry promises exists in the machines', () => {
    const used = new Set(
      ALL.flatMap(({ state }) => [
        ...(state.Retry ?? []).flatMap((r) => r.ErrorEquals),
        ...(state.Catch ?? []).flatMap((c) => c.ErrorEquals),
      ]),
    );
    for (const handling of [
      'transient',
      'transient-after-start',
      'poll',
      'wait',
      'rewait',
      'cancel',
      'skip',
    ] as const) {
      for (const name of handled(handling)) assert.ok(used.has(name), `${name} (${handling}) is in no Retry or Catch`);
    }
  });

  it('every error class in lib/ is in the registry, and every registry name is thrown by one', () => {
    const thrown = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) {
          for (const match of readFileSync(path, 'utf8').matchAll(/this\.name = '([A-Za-z]+)'/g))
            thrown.add(match[1] ?? '');
        }
      }
    };
    walk(join(ROOT, 'lib'));
    const registry = Object.keys(ERROR_REGISTRY).sort();
    assert.deepEqual(
      [...thrown].filter((name) => !registry.includes(name)).sort(),
      [],
      'classes missing from the registry',
    );
    assert.deepEqual(
      registry.filter((name) => !thrown.has(name)),
      [],
      'registry names no class has',
    );
  });

  it("expected (no metric, INFO) are exactly: polling, waiting, duplicates, a Restore's cancel, an operator's abort", () => {
    const expected = Object.keys(ERROR_REGISTRY).filter(isExpectedError).sort();
    assert.deepEqual(expected, [
      'AdmissionBusy',
      'EvacuationAborted',
      'EvacuationCancelled',
      'NotYetDone',
      'RequestRunningElsewhere',
      'SkipEvent',
      'SlotUnavailable',
      'TokenNotParked',
      'WaitingInLine',
    ]);
  });

  it("a waiting step is no failure to warn about in run's log: polling, waiting for a slot, a token not parked", () => {
    for (const name of ['NotYetDone', 'SlotUnavailable', 'WaitingInLine', 'AdmissionBusy', 'TokenNotParked'])
      assert.equal(isWaitingStep(name), true, name);
    for (const name of ['TransientError', 'ConflictError', 'EvacuationFailed', 'SkipEvent', 'NoSuchError', undefined])
      assert.equal(isWaitingStep(name), false, String(name));
  });
});
