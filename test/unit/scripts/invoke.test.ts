/** `npm run invoke`: samples are moved to start now, keeping their spacing, so they never go stale. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { datesFromNow, sampleName } from '../../../scripts/invoke.ts';

const NOW = new Date('2031-05-06T07:08:09.000Z');

describe('npm run invoke', () => {
  it('moves every date by the same amount so the start is now; the deadline stays 4 h ahead', () => {
    const sample = JSON.parse(readFileSync(new URL('../../../events/admit.json', import.meta.url), 'utf8'));
    const moved = datesFromNow(sample, NOW) as { startedAt: string; request: { deadline: string } };
    assert.equal(moved.startedAt, '2031-05-06T07:08:09.000Z');
    assert.equal(moved.request.deadline, '2031-05-06T11:08:09Z', 'same spacing, same format');
  });

  it('finds a sample for each function name (kebab case)', () => {
    const samples = new Set(readdirSync(new URL('../../../events/', import.meta.url)));
    for (const fn of [
      'resolveTarget',
      'admit',
      'prepareBranches',
      'finishEvacuation',
      'failEvacuation',
      'releaseHold',
      'restoreBranches',
      'finishRestore',
    ]) {
      assert.ok(samples.has(`${sampleName(fn)}.json`), fn);
    }
  });
});
