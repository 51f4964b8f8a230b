/** The closing words of a run: read state, never assumed; the exit status from the table. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { explainEvacuationEnd } from '../../../cli/commands/evacuate-outcome.ts';
import { pickHold } from '../../../cli/commands/restore.ts';
import { EXIT } from '../../../cli/exit-codes.ts';
import { nodeState } from '../../../cli/node-state.ts';

function node(unschedulable: boolean, ledger?: object, phase?: string): V1Node {
  const annotations: Record<string, string> = {};
  if (ledger) annotations['drainbridge.io/ledger'] = JSON.stringify(ledger);
  if (phase) annotations['drainbridge.io/phase'] = phase;
  return { metadata: { name: 'node-2', annotations }, spec: { unschedulable } };
}

const HOLD = { requester: 'alice@ops', origin: 'manual', since: '2026-11-21T10:00:00.000Z' };
const held = node(true, { holds: { r1: HOLD }, released: {} }, 'NodeDraining');
const untouched = node(false);
const KNOWN = (n: V1Node) => ({ state: nodeState(n, 'r1'), restore: 'drainbridge restore node-2 --request-id r1' });

describe('nodeState', () => {
  it('says what the node is, from its spec and ledger', () => {
    assert.equal(
      nodeState(held, 'r1').sentence,
      'node node-2 is cordoned and held by request r1 (since 2026-11-21T10:00:00.000Z); phase NodeDraining',
    );
    assert.equal(nodeState(untouched, 'r1').sentence, 'node node-2 is not cordoned and not held by drainbridge');
    assert.equal(nodeState(node(true), 'r1').sentence, 'node node-2 is cordoned, but not by drainbridge (no hold)');
    assert.equal(nodeState(held, 'r9').sentence.includes('held by request r1'), true);
  });
});

describe('explainEvacuationEnd', () => {
  it('a deadline that passed before the node was touched says it is untouched (exit 1)', () => {
    const error = Object.assign(new Error('see the Evacuation Failed event'), { name: 'EvacuationFailed' });
    const recorded = new Map([
      [
        'Evacuation Failed',
        { error: { name: 'DeadlineExceeded', message: 'evacuation of node node-2 passed the deadline' } },
      ],
    ]);
    const end = explainEvacuationEnd({ kind: 'failed', error }, recorded, KNOWN(untouched));
    assert.equal(end.exit, EXIT.failed);
    assert.deepEqual(end.lines, [
      'drainbridge evacuate: the evacuation failed: DeadlineExceeded: evacuation of node node-2 passed the deadline',
      'Node node-2 is not cordoned and not held by drainbridge.',
    ]);
    const onHeld = explainEvacuationEnd({ kind: 'failed', error }, recorded, KNOWN(held));
    assert.match(onHeld.lines.at(-1) ?? '', /^To end the maintenance: drainbridge restore node-2 --request-id r1$/);
  });

  it('a duplicate of an evacuated request is done (0); of a failed or released one, refused (5)', () => {
    const skip = (cause: string) => ({
      kind: 'succeeded' as const,
      output: { error: { Error: 'SkipEvent', Cause: cause } },
    });
    const drained = explainEvacuationEnd(
      skip('request r1 already ended on node node-2 (NodeDrained); duplicate dropped'),
      new Map(),
      KNOWN(held),
    );
    assert.equal(drained.exit, EXIT.ok);
    const failed = explainEvacuationEnd(
      skip('request r1 already ended on node node-2 (Failed); duplicate dropped'),
      new Map(),
      KNOWN(held),
    );
    assert.equal(failed.exit, EXIT.refused);
    assert.match(failed.lines[0] ?? '', /refused: request r1 already ended on node node-2 \(Failed\)/);
    const lambdaCause = JSON.stringify({
      errorMessage: 'request r1 was already released from node node-2; not cordoning again',
    });
    assert.match(
      explainEvacuationEnd(skip(lambdaCause), new Map(), KNOWN(untouched)).lines[0] ?? '',
      /already released/,
    );
  });

  it('a node that does not exist is a bad argument (2)', () => {
    const error = Object.assign(new Error('node "node-9" not found'), { name: 'TargetNotFound' });
    assert.equal(explainEvacuationEnd({ kind: 'failed', error }, new Map(), KNOWN(untouched)).exit, EXIT.usage);
  });
});

describe('pickHold (restore, abort)', () => {
  it('nothing to restore is done, an unknown request refused, several holds a usage error', () => {
    assert.deepEqual(pickHold(held, undefined), { requestId: 'r1' });
    assert.match((pickHold(untouched, undefined) as { done: string }).done, /no drainbridge hold; nothing to restore/);
    const released = node(false, { holds: {}, released: { r1: '2026-11-21T12:00:00Z' } });
    assert.match((pickHold(released, 'r1') as { done: string }).done, /already restored/);
    assert.match(
      (pickHold(held, 'r9') as { refused: string }).refused,
      /request r9 does not hold node node-2 \(its holds: r1\)/,
    );
    const two = node(true, { holds: { r1: HOLD, r2: HOLD }, released: {} });
    assert.throws(() => pickHold(two, undefined), /has 2 holds; name one with --request-id/);
  });
});
