/** The benchmark's command line (bench/lib/options.ts): the kubevirt section and the Retry diagnosis flag. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BenchUsageError, parseBenchOptions } from '../../../bench/lib/options.ts';

const CASES = ['busy-node', 'pdb-heavy'];

describe('parseBenchOptions', () => {
  it('runs the kubevirt section after drain by default, the queue last, and each alone when asked', () => {
    assert.deepEqual(parseBenchOptions([], CASES).sections, [
      'drain',
      'kubevirt',
      'reaction',
      'footprint',
      'scale',
      'queue',
    ]);
    assert.deepEqual(parseBenchOptions(['--sections', 'queue'], CASES).sections, ['queue']);
    assert.deepEqual(parseBenchOptions(['--sections', 'kubevirt'], CASES).sections, ['kubevirt']);
  });

  it('keeps the definitions’ Retry waits unless --retry-interval-ms asks otherwise', () => {
    assert.equal(parseBenchOptions([], CASES).retryIntervalMs, undefined);
    assert.equal(parseBenchOptions(['--retry-interval-ms', '250'], CASES).retryIntervalMs, 250);
  });

  it('refuses a bad --retry-interval-ms, naming the flag', () => {
    assert.throws(() => parseBenchOptions(['--retry-interval-ms', '-1'], CASES), BenchUsageError);
    assert.throws(() => parseBenchOptions(['--retry-interval-ms', 'soon'], CASES), /--retry-interval-ms/);
  });
});
