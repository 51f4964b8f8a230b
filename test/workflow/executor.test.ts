/**
 * The embedded executor validates each packaged definition once, not per execution: validation takes
 * hundreds of ms, which under a simulator running 200× real time is minutes of simulated time between
 * `start` and the first task (enough to pass a request's deadline before admission).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedExecutor, type LocalHandler, type MachineDefinition, taskFunctions } from '../../embedded/executor.ts';
import { loadDefinitions } from '../../embedded/runtime.ts';
import { InvalidInput } from '../../lib/errors/index.ts';

/** Every function refuses its input: each execution ends at once in the Rejected state. */
function refusingHandlers(definitions: Record<string, MachineDefinition>): Record<string, LocalHandler> {
  const handlers: Record<string, LocalHandler> = {};
  for (const definition of Object.values(definitions)) {
    for (const key of taskFunctions(definition).values()) {
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
});
