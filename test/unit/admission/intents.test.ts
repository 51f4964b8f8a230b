/** Admissions in flight on the admission Lease (lib/admission/intents.ts, pure) and their codec (records.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  INTENT_TTL_SECONDS,
  nodesInFlight,
  nodesInFlightFor,
  settledIntents,
  withIntent,
} from '../../../lib/admission/intents.ts';
import { INTENTS_ANNOTATION, readIntents } from '../../../lib/admission/records.ts';

const T0 = new Date('2026-01-02T03:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

describe('admissions in flight', () => {
  it('a locker carries unexpired intents forward and adds its own; expired ones go', () => {
    const found = {
      a: { node: 'node-1', since: at(0).toISOString() },
      old: { node: 'node-9', since: at(-500).toISOString() },
    };
    const written = withIntent(found, 'b', { node: 'node-2', requester: 'alice' }, at(10));
    assert.deepEqual(Object.keys(written).sort(), ['a', 'b']);
    assert.deepEqual(nodesInFlight(written, 'b', at(10)), ['node-1'], "the others' nodes count as held, not its own");
    assert.deepEqual(nodesInFlight(written, 'b', at(INTENT_TTL_SECONDS + 1)), [], 'until they expire');
  });

  it("a window's own limit counts its requests' intents, and those that do not say who asked", () => {
    const window = 'maintenance-window/weekly';
    const found = {
      a: { node: 'node-1', since: at(0).toISOString(), requester: window },
      other: { node: 'node-3', since: at(0).toISOString(), requester: 'aws.health' },
      older: { node: 'node-4', since: at(0).toISOString() },
    };
    const written = withIntent(found, 'b', { node: 'node-2', requester: window }, at(10));
    assert.equal(written.b?.requester, window, 'the locker writes who asked');
    assert.deepEqual(nodesInFlightFor(written, 'b', at(10), window), ['node-1', 'node-4']);
    assert.deepEqual(nodesInFlightFor(written, 'b', at(INTENT_TTL_SECONDS + 1), window), [], 'until they expire');
  });

  it('an unlocker drops its own intent and those whose hold the ledgers show', () => {
    const intents = withIntent(
      { a: { node: 'node-1', since: at(0).toISOString() } },
      'b',
      { node: 'node-2', requester: 'alice' },
      at(1),
    );
    const holds = (node: string) => (node === 'node-1' ? ['a'] : []);
    assert.deepEqual(settledIntents(intents, 'b', at(2), holds), {});
    assert.deepEqual(Object.keys(settledIntents(intents, 'b', at(2), () => [])), ['a']);
  });

  it('an unreadable record is RecordUnreadable, never "none in flight"', () => {
    assert.deepEqual(readIntents(undefined), {});
    assert.throws(
      () => readIntents({ metadata: { annotations: { [INTENTS_ANNOTATION]: '{"a": {"node": "n"}}' } } }, 'node-1'),
      {
        name: 'RecordUnreadable',
      },
    );
  });
});
