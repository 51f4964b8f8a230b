/**
 * A pods pass waits for a limit (`--timeout`, skip-wait, the deadline) that comes due within its wait, and
 * asks to be called again at once for one due within the next; a pass that returns earlier is retried
 * after a NotYetDone backoff. That backoff must never outlast the pass's wait, or a retry could carry the
 * drain past a limit by tens of seconds (as it did: --timeout=10s ended after 61 s).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { POD_PASS_WAIT_MS } from '../../../lib/branches/pods/definition.ts';

interface State {
  Type: string;
  Parameters?: { branch?: string };
  Retry?: { ErrorEquals: string[]; MaxDelaySeconds?: number; IntervalSeconds?: number }[];
  Branches?: { States: Record<string, State> }[];
}

const definitions = JSON.parse(
  readFileSync(new URL('../../../state-machines/definitions.json', import.meta.url), 'utf8'),
) as { stateMachines: { evacuate: { States: Record<string, State> } } };

function tasks(states: Record<string, State>): State[] {
  return Object.values(states).flatMap((state) => [
    state,
    ...(state.Branches ?? []).flatMap((branch) => tasks(branch.States)),
  ]);
}

describe('the pods passes retry within their own wait', () => {
  const podPasses = tasks(definitions.stateMachines.evacuate.States).filter(
    (state) => state.Type === 'Task' && ['pods', 'infra-pods'].includes(state.Parameters?.branch ?? ''),
  );

  it('finds both pods passes in the packaged Evacuate machine', () => {
    assert.equal(podPasses.length, 2);
  });

  it("NotYetDone's longest backoff is no longer than a pass's wait", () => {
    for (const pass of podPasses) {
      const retry = pass.Retry?.find((rule) => rule.ErrorEquals.includes('NotYetDone'));
      assert.ok(retry?.MaxDelaySeconds !== undefined, 'NotYetDone has a bounded backoff');
      assert.ok(
        retry.MaxDelaySeconds * 1000 <= POD_PASS_WAIT_MS,
        `MaxDelaySeconds ${retry.MaxDelaySeconds} s <= the pass's wait ${POD_PASS_WAIT_MS} ms`,
      );
    }
  });
});
