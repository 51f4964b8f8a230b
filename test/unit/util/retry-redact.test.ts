import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createLogger } from '../../../lib/log/logger.ts';
import { clearSecrets, REDACTED, redact, registerSecret } from '../../../lib/log/redact.ts';
import { configureLogging } from '../../../lib/log/sink.ts';
import { backoffDelay, withRetry } from '../../../lib/util/retry.ts';

describe('withRetry', () => {
  it('retries retryable errors with growing full-jitter delays, then succeeds', async () => {
    const delays: number[] = [];
    let calls = 0;
    const result = await withRetry(
      async () => {
        calls++;
        if (calls < 3) throw new Error('ECONNRESET');
        return 'ok';
      },
      {
        attempts: 5,
        baseDelayMs: 100,
        maxDelayMs: 1000,
        isRetryable: () => true,
        random: () => 0.999,
        sleep: async (ms) => void delays.push(ms),
      },
    );
    assert.equal(result, 'ok');
    assert.equal(calls, 3);
    assert.deepEqual(delays, [99, 199]);
  });

  it('rethrows a non-retryable error at once and gives up after the last attempt', async () => {
    let calls = 0;
    const fatal = new Error('400');
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw fatal;
        },
        { attempts: 5, baseDelayMs: 1, maxDelayMs: 1, isRetryable: () => false, sleep: async () => {} },
      ),
      fatal,
    );
    assert.equal(calls, 1);
    calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw new Error('503');
        },
        { attempts: 3, baseDelayMs: 1, maxDelayMs: 1, isRetryable: () => true, sleep: async () => {} },
      ),
      /503/,
    );
    assert.equal(calls, 3);
  });

  it('never waits longer than the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 0.9999999, noNaN: true }), (attempt, r) => {
        const d = backoffDelay(attempt, { baseDelayMs: 200, maxDelayMs: 3000, random: () => r });
        return d >= 0 && d < 3000;
      }),
    );
  });
});

describe('redaction', () => {
  it('replaces secret keys and registered values anywhere in a structure', () => {
    clearSecrets();
    registerSecret('s3cr3t-password');
    const out = redact({
      auth: { identity: { password: { user: { name: 'admin', password: 's3cr3t-password' } } } },
      headers: { 'X-Auth-Token': 'gAAAAtoken' },
      message: 'login failed for s3cr3t-password',
      list: ['s3cr3t-password'],
    });
    const text = JSON.stringify(out);
    assert.ok(!text.includes('s3cr3t-password'));
    assert.ok(!text.includes('gAAAAtoken'));
    assert.equal((out as { message: string }).message, `login failed for ${REDACTED}`);
  });

  it('keeps credentials out of logged errors, including an HTTP error carrying its request body', () => {
    clearSecrets();
    registerSecret('hunter2-keystone');
    const lines: string[] = [];
    const originals = [process.stdout.write, process.stderr.write];
    const httpError = Object.assign(new Error('Request failed with status code 401'), {
      config: { data: '{"auth":{"password":"hunter2-keystone"}}', headers: { Authorization: 'Bearer abc-token-xyz' } },
    });
    const capture = ((chunk: string) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    process.stdout.write = capture;
    process.stderr.write = capture;
    try {
      // Outside Lambda log lines go to the sink, off by default: let them through to stderr, captured here.
      configureLogging({ level: 'debug', format: 'json' });
      const logger = createLogger('test', 'DEBUG');
      logger.error('keystone refused', { error: httpError, body: '{"password":"hunter2-keystone"}' });
      logger.info('debug', { request: httpError.config });
    } finally {
      configureLogging({ level: 'off', format: 'text' });
      [process.stdout.write, process.stderr.write] = originals as [
        typeof process.stdout.write,
        typeof process.stderr.write,
      ];
    }
    const text = lines.join('');
    assert.match(text, /keystone refused/);
    assert.match(text, /"message":"debug"/);
    assert.ok(!text.includes('hunter2-keystone'), text);
    assert.ok(!text.includes('abc-token-xyz'), text);
  });
});
