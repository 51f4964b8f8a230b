/** Admissions in flight on the admission Lease (lib/workflow/admission-intents.ts), pure. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  INTENT_TTL_SECONDS,
  INTENTS_ANNOTATION,
  nodesInFlight,
  readIntents,
  settledIntents,
  withIntent,
} from '../../../lib/workflow/admission-intents.ts';

const T0 = new Date('2026-01-02T03:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

describe('admissions in flight', () => {
  it('a locker carries unexpired intents forward and adds its own; expired ones go', () => {
    const found = {
      a: { node: 'node-1', since: at(0).toISOString() },
      old: { node: 'node-9', since: at(-500).toISOString() },
    };
    const written = withIntent(found, 'b', 'node-2', at(10));
    assert.deepEqual(Object.keys(written).sort(), ['a', 'b']);
    assert.deepEqual(nodesInFlight(written, 'b', at(10)), ['node-1'], "the others' nodes count as held, not its own");
    assert.deepEqual(nodesInFlight(written, 'b', at(INTENT_TTL_SECONDS + 1)), [], 'until they expire');
  });

  it('an unlocker drops its own intent and those whose hold the ledgers show', () => {
    const intents = withIntent({ a: { node: 'node-1', since: at(0).toISOString() } }, 'b', 'node-2', at(1));
    const holds = (node: string) => (node === 'node-1' ? ['a'] : []);
    assert.deepEqual(settledIntents(intents, 'b', at(2), holds), {});
    assert.deepEqual(Object.keys(settledIntents(intents, 'b', at(2), () => [])), ['a']);
  });

  it('an unreadable record is RecordUnreadable, never "none in flight"', () => {
    assert.deepEqual(readIntents(undefined), {});
    assert.throws(() => readIntents({ [INTENTS_ANNOTATION]: '{"a": {"node": "n"}}' }, 'node-1'), {
      name: 'RecordUnreadable',
    });
  });
});
