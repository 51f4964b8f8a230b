/** How the soak measures the line (soak/waits.ts): time behind a full limit, and waits beside a free slot. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SoakLog } from '../../soak/log.ts';
import { fullByOthersMs, longestFreeSlotWaitMs, waitLines } from '../../soak/waits.ts';

const T0 = 1_000_000;

/** Limit 2: full with node-1 and node-2 for 100 s, one slot free for 300 s, then node-3 joins node-2. */
const LOG = {
  maxHeldNodes: 2,
  endedAt: T0 + 600_000,
  held: [
    { at: T0, held: ['node-1', 'node-2'], cordonedByDrainbridge: [] },
    { at: T0 + 100_000, held: ['node-2'], cordonedByDrainbridge: [] },
    { at: T0 + 400_000, held: ['node-2', 'node-3'], cordonedByDrainbridge: [] },
  ],
  requests: [
    { requestId: 'late', node: 'node-3', firstSeenAt: T0, outcome: 'succeeded', endedAt: T0 + 450_000 },
    { requestId: 'prompt', node: 'node-4', firstSeenAt: T0 + 50_000, outcome: 'withdrawn', endedAt: T0 + 120_000 },
  ],
} as unknown as SoakLog;

describe('soak waits', () => {
  it('counts only the time every slot was held by other nodes, not by the request’s own', () => {
    assert.equal(fullByOthersMs(LOG, 'node-3', T0, T0 + 450_000), 100_000);
    assert.equal(fullByOthersMs(LOG, 'node-4', T0 + 50_000, T0 + 120_000), 50_000);
    // node-2's own hold is not a slot it waits for.
    assert.equal(fullByOthersMs(LOG, 'node-2', T0, T0 + 600_000), 0);
  });

  it('finds the longest stretch a request waited beside a free slot', () => {
    const [late, prompt] = LOG.requests;
    assert.deepEqual(longestFreeSlotWaitMs(LOG, late as SoakLog['requests'][number]), {
      ms: 300_000,
      at: T0 + 100_000,
    });
    assert.deepEqual(longestFreeSlotWaitMs(LOG, prompt as SoakLog['requests'][number]), {
      ms: 20_000,
      at: T0 + 100_000,
    });
  });

  it('prints the line: time full, the longest wait behind it and beside a free slot', () => {
    assert.deepEqual(waitLines(LOG), [
      'the line: all 2 slots held 300 s of 600 s sampled',
      '  longest time behind a full limit: 100 s (late)',
      `  longest wait with a slot free: 300 s (late, from ${new Date(T0 + 100_000).toISOString()})`,
    ]);
  });
});
