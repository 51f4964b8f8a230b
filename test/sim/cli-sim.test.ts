/** `drainbridge sim` argument parsing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../cli/command.ts';
import { parseSimArgs } from '../../cli/commands/sim.ts';

describe('drainbridge sim arguments', () => {
  it('parses every flag, in both --flag value and --flag=value forms', () => {
    assert.deepEqual(
      parseSimArgs(['--scenario', 'small', '--port=6443', '--kubeconfig-out', '/tmp/k', '--speed', '10']),
      {
        scenario: 'small',
        port: 6443,
        kubeconfigOut: '/tmp/k',
        speed: 10,
        tls: true,
      },
    );
    assert.deepEqual(parseSimArgs(['--no-tls']), { port: 0, tls: false });
  });

  it('refuses bad values naming the flag', () => {
    assert.throws(
      () => parseSimArgs(['--speed', '0']),
      (e: unknown) => e instanceof UsageError && /--speed/.test(e.message),
    );
    assert.throws(
      () => parseSimArgs(['--port', '70000']),
      (e: unknown) => e instanceof UsageError && /--port/.test(e.message),
    );
    assert.throws(
      () => parseSimArgs(['--scenario']),
      (e: unknown) => e instanceof UsageError && /--scenario needs a value/.test(e.message),
    );
    assert.throws(
      () => parseSimArgs(['--bogus']),
      (e: unknown) => e instanceof UsageError && /unknown flag --bogus/.test(e.message),
    );
  });
});
