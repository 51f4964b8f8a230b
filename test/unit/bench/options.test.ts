/** The benchmark's command line (bench/lib/options.ts): the kubevirt section, the Retry diagnosis flag, the scale sizes. */
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

  it('takes scale sizes up to 5,000 nodes and a churn rate, refusing more, naming the flag', () => {
    const options = parseBenchOptions(['--scale-nodes', '5000,10', '--scale-churn', '20'], CASES);
    assert.deepEqual(options.scaleNodes, [10, 5000]);
    assert.equal(options.scaleChurn, 20);
    assert.equal(parseBenchOptions([], CASES).scaleChurn, undefined);
    assert.throws(() => parseBenchOptions(['--scale-nodes', '5001'], CASES), /--scale-nodes/);
    assert.throws(() => parseBenchOptions(['--scale-churn', '-1'], CASES), /--scale-churn/);
  });
});
