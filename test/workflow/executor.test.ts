/**
 * The embedded executor validates each packaged definition once, not per execution: validation takes
 * hundreds of ms, which under a simulator running 200× real time is minutes of simulated time between
 * `start` and the first task (enough to pass a request's deadline before admission).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  callbackFunctions,
  EmbeddedExecutor,
  type LocalHandler,
  type MachineDefinition,
  taskFunctions,
} from '../../embedded/executor.ts';
import { loadDefinitions } from '../../embedded/runtime.ts';
import { InvalidInput } from '../../lib/errors/index.ts';

/** A Task that starts `machine` (continue-as-new as evacuate.asl.yml does it), named by `nameExpression`. */
const startExecution = (machine: string, nameExpression: string, resultPath: string, next?: string): never =>
  ({
    Type: 'Task',
    Resource: 'arn:aws:states:::states:startExecution',
    Parameters: {
      StateMachineArn: `arn:aws:states:local:000000000000:stateMachine:${machine}`,
      'Name.$': nameExpression,
      'Input.$': 'States.JsonMerge($$.Execution.Input, $.next, false)',
    },
    ResultPath: resultPath,
    ...(next ? { Next: next } : { End: true }),
  }) as never;

/**
 * A machine that starts itself once more (or, `twice`, twice under the same name): `stop` ends the second.
 */
function continuing(nameExpression: string, machine = 'evacuate', twice = false): MachineDefinition {
  const states: MachineDefinition['States'] = {
    Again: {
      Type: 'Choice',
      Choices: [{ Variable: '$.stop', IsPresent: true, Next: 'Done' }],
      Default: 'Start',
    } as never,
    Start: startExecution(machine, nameExpression, '$.continued', twice ? 'StartAgain' : undefined),
    Done: { Type: 'Succeed' },
  };
  if (twice) states.StartAgain = startExecution(machine, nameExpression, '$.again');
  return { StartAt: 'Again', States: states };
}

/** Every function refuses its input: each execution ends at once in the Rejected state. */
function refusingHandlers(definitions: Record<string, MachineDefinition>): Record<string, LocalHandler> {
  const handlers: Record<string, LocalHandler> = {};
  for (const definition of Object.values(definitions)) {
    for (const key of [...taskFunctions(definition).values(), ...callbackFunctions(definition).values()]) {
      handlers[key] = async () => {
        throw new InvalidInput('invalid input', [{ path: 'detail', message: 'refused by the test' }]);
      };
    }
  }
  return handlers;
}

describe('EmbeddedExecutor', () => {
  it('starts executions without re-validating the definition each time', async () => {
    const definitions = loadDefinitions().stateMachines as Record<string, MachineDefinition>;
    const executor = new EmbeddedExecutor(definitions, refusingHandlers(definitions));
    const durations: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      const execution = executor.start('evacuate', { 'detail-type': 'Maintenance Requested', detail: {} });
      durations.push(performance.now() - started);
      await assert.rejects(execution.result, (error: Error) => {
        assert.equal((error.cause as Error | undefined)?.name, 'InvalidInput', 'the execution ran to Rejected');
        return true;
      });
    }
    console.log(`executor.start took ${durations.map((ms) => ms.toFixed(1)).join(', ')} ms`);
    assert.ok(Math.max(...durations) < 50, `start() took ${Math.max(...durations).toFixed(0)} ms at most`);
  });

  it('runs states:startExecution here: a machine that starts itself again (once per name), history counted from its log', async () => {
    // A two-generation chain: the first execution starts the second (its input merged with `next`), named after its own id.
    const definition = continuing("States.Hash($$.Execution.Id, 'SHA-256')", 'loop', true);
    const started: unknown[] = [];
    const executor = new EmbeddedExecutor(
      { loop: definition },
      {},
      { onStarted: (_execution, input) => started.push(input) },
    );
    const first = executor.start('loop', { next: { stop: true }, keep: 'x' });
    const output = (await first.result) as { continued: { ExecutionArn: string }; again: { ExecutionArn: string } };
    assert.equal(
      output.again.ExecutionArn,
      output.continued.ExecutionArn,
      'the second start with the same name is the same execution',
    );
    assert.deepEqual(started, [{ next: { stop: true }, keep: 'x', stop: true }]);
    assert.equal(first.stats.historyEvents, 2 + 2 + 2 * (2 + 3), 'start and end, the Choice, two Tasks');
  });
  it("names each continuation with its own execution id's exact SHA-256, however long the ids (drainbridge run's are)", async () => {
    // drainbridge run names its executions run.<identity>.<uuid>: ids of 117 characters that differ only in their
    // last 36, which the interpreter's own States.Hash digested alike (aws-local-stepfunctions 3.0.0 reads a long
    // message's blocks at the wrong offsets), so the second continuation found the first's name and never started.
    const started: string[] = [];
    const executor = new EmbeddedExecutor(
      { evacuate: continuing("States.Hash($$.Execution.Id, 'SHA-256')") },
      {},
      { onStarted: (execution) => started.push(execution.id) },
    );
    const names = [
      'run.bench-scale.3cde3039-d91d-4a5b-9c1e-3f0c6e1a0001',
      'run.bench-scale.f8c8adf2-9956-4a5b-9c1e-3f0c6e1a0002',
    ];
    const firsts = names.map((name) => executor.start('evacuate', { next: { stop: true } }, name));
    const outputs = (await Promise.all(firsts.map((first) => first.result))) as {
      continued: { ExecutionArn: string };
    }[];
    const expected = firsts.map(
      (first) =>
        `arn:aws:states:local:000000000000:execution:drainbridge-evacuate:${createHash('sha256').update(first.id).digest('hex')}`,
    );
    assert.deepEqual(started, expected, 'both continuations started');
    assert.deepEqual(
      outputs.map((output) => output.continued.ExecutionArn),
      expected,
      "each continuation is named SHA-256 of its predecessor's id, as Step Functions computes States.Hash",
    );
  });

  it('refuses a definition that hashes anything but the execution id (the interpreter would hash it wrongly)', () => {
    assert.throws(
      () => new EmbeddedExecutor({ evacuate: continuing("States.Hash($$.Execution.Input.name, 'SHA-256')") }, {}),
      /state machine evacuate: Name\.\$ hashes with States\.Hash\(\$\$\.Execution\.Input\.name, 'SHA-256'\)/,
    );
  });
});
