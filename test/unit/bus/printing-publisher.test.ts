/**
 * The bus adapter where there is no bus: its batch half (`send`, shared by every adapter through
 * send-batch.ts) prints each valid entry and refuses an invalid event alone, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EvacuationFailedEvent } from '../../../lib/bus/contracts/index.ts';
import { PrintingPublisher } from '../../../lib/bus/printing-publisher.ts';
import type { BusEvent } from '../../../lib/bus/types.ts';
import { InvalidInput } from '../../../lib/errors/index.ts';

const FAILED: EvacuationFailedEvent = {
  version: '1',
  requestId: 'req-1',
  requester: 'operator',
  target: { nodeName: 'node-1' },
  nodeName: 'node-1',
  phase: 'NodeDraining',
  error: { name: 'DeadlineExceeded', message: 'deadline passed' },
  blockers: [],
};

describe('PrintingPublisher', () => {
  it('sends a batch: each valid event printed as its PutEvents entry, an invalid one refused alone', async () => {
    const lines: string[] = [];
    const adapter = new PrintingPublisher('drainbridge', (line) => lines.push(line));
    const bad = { ...FAILED, nodeName: '' } as EvacuationFailedEvent;
    const events: BusEvent[] = [
      { detailType: 'Evacuation Failed', detail: FAILED },
      { detailType: 'Evacuation Failed', detail: bad },
      { detailType: 'Evacuation Failed', detail: { ...FAILED, requestId: 'req-2' } },
    ];

    const outcomes = await adapter.send(events);

    assert.deepEqual(
      outcomes.map((outcome) => outcome.ok),
      [true, false, true],
    );
    const refused = outcomes[1];
    assert.ok(refused && !refused.ok && refused.error instanceof InvalidInput);
    assert.deepEqual(
      lines.map((line) => JSON.parse(line).putEventsEntry.EventBusName),
      ['drainbridge', 'drainbridge'],
    );
    assert.deepEqual(
      lines.map((line) => JSON.parse(JSON.parse(line).putEventsEntry.Detail).requestId),
      ['req-1', 'req-2'],
    );
    assert.equal(adapter.fits(events), true);
  });
});
