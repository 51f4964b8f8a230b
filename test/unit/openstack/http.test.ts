/** Pure helpers of the OpenStack HTTP layer and microversion negotiation. */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import {
  faultMessage,
  fromResponse,
  isRetryableHttp,
  OpenStackHttpError,
  safeUrl,
} from '../../../lib/clients/openstack/http.ts';
import { chooseMicroversion, compareMicroversions } from '../../../lib/clients/openstack/nova.ts';
import { EvacuationFailed } from '../../../lib/errors/index.ts';
import { clearSecrets, registerSecret } from '../../../lib/log/redact.ts';

afterEach(() => clearSecrets());

test('fault messages of Nova, Keystone and Placement bodies', () => {
  assert.equal(
    faultMessage({
      conflictingRequest: {
        code: 409,
        message: "Cannot 'os-migrateLive' instance x while it is in task_state migrating",
      },
    }),
    "Cannot 'os-migrateLive' instance x while it is in task_state migrating",
  );
  assert.equal(
    faultMessage({ error: { code: 401, message: 'The request you have made requires authentication.' } }),
    'The request you have made requires authentication.',
  );
  assert.equal(faultMessage({ errors: [{ status: 409, detail: 'generation conflict' }] }), 'generation conflict');
  assert.equal(faultMessage(' plain text '), 'plain text');
  assert.equal(faultMessage(null), undefined);
});

test('URLs lose user info and secret-looking query values', () => {
  assert.equal(
    safeUrl('https://user:pw@k.example/v3?token=abc&limit=5'),
    'https://k.example/v3?token=REDACTED&limit=5',
  );
});

test('registered secrets are cut out of the fault', () => {
  registerSecret('hunter2-secret');
  const error = fromResponse('POST', 'http://k/v3/auth/tokens', 400, {
    badRequest: { message: 'bad password hunter2-secret' },
  });
  assert.equal(error.message, 'POST http://k/v3/auth/tokens: HTTP 400: bad password [REDACTED]');
  assert.equal(error.fault, 'bad password [REDACTED]');
});

test('which failures are retryable', () => {
  const table: [number | undefined, boolean][] = [
    [undefined, true],
    [500, true],
    [503, true],
    [501, false],
    [429, true],
    [408, true],
    [409, false],
    [404, false],
    [401, false],
  ];
  for (const [status, retryable] of table) {
    const error = new OpenStackHttpError({
      method: 'GET',
      url: 'u',
      ...(status === undefined ? { code: 'ECONNRESET' } : { status }),
    });
    assert.equal(isRetryableHttp(error), retryable, `status ${status}`);
  }
  assert.equal(isRetryableHttp(new Error('x')), false);
});

test('microversions compare numerically and are capped at what the client knows', () => {
  assert.ok(compareMicroversions('2.9', '2.53') < 0);
  assert.ok(compareMicroversions('2.93', '2.88') > 0);
  assert.equal(chooseMicroversion({ min: '2.1', max: '2.93' }), '2.88');
  assert.equal(chooseMicroversion({ min: '2.1', max: '2.60' }), '2.60');
  assert.throws(() => chooseMicroversion({ min: '2.1', max: '2.38' }), EvacuationFailed);
});
