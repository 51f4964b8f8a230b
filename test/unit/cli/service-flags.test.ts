/**
 * `drainbridge run` and `drainbridge forwarder` parse their command line like every other command
 * (cli/flags.ts): "did you mean", decimal-only numbers, a clear error naming the flag — all before they
 * connect to anything (a refusal here is exit 2 with nothing started).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forwarderCommand } from '../../../cli/commands/forwarder.ts';
import { runCommand } from '../../../cli/commands/run.ts';
import { main } from '../../../cli/main.ts';
import { testContext } from './context.ts';

async function refusal(argv: string[]): Promise<string> {
  const io = testContext();
  const code = await main(argv, [runCommand, forwarderCommand], io);
  assert.equal(code, 2, `${argv.join(' ')}: exit ${code}\n${io.stderr.join('\n')}`);
  assert.deepEqual(io.stdout, []);
  return io.stderr.join('\n');
}

describe('run and forwarder flags', () => {
  for (const command of ['run', 'forwarder']) {
    it(`${command}: a mistyped flag gets a suggestion`, async () => {
      assert.match(
        await refusal([command, '--shutdown-grcae', '5']),
        /unknown flag --shutdown-grcae \(did you mean --shutdown-grace\?\)/,
      );
      assert.match(
        await refusal([command, '--metrics-adress=127.0.0.1:0']),
        /unknown flag --metrics-adress \(did you mean --metrics-address\?\)/,
      );
    });

    it(`${command}: --shutdown-grace takes a decimal number of seconds, nothing else`, async () => {
      assert.match(await refusal([command, '--shutdown-grace=0x10']), /--shutdown-grace: must be a number, not "0x10"/);
      assert.match(
        await refusal([command, '--shutdown-grace', '1e3']),
        /--shutdown-grace: must be a number, not "1e3"/,
      );
      assert.match(await refusal([command, '--shutdown-grace=']), /--shutdown-grace: the value is empty/);
      assert.match(await refusal([command, '--shutdown-grace=-1']), /--shutdown-grace: must be between 0 and 3600/);
      assert.match(await refusal([command, '--shutdown-grace']), /--shutdown-grace needs a value \(SECONDS\)/);
    });

    it(`${command}: takes no arguments`, async () => {
      assert.match(await refusal([command, 'node-1']), /unexpected argument "node-1"/);
    });

    it(`${command}: takes kubectl drain's flags, a bad value refused naming the flag before anything starts`, async () => {
      assert.match(await refusal([command, '--grace-period=abc']), /--grace-period: must be an integer, not "abc"/);
      assert.match(await refusal([command, '--timeout', '5x']), /--timeout: must be a duration such as 90s or 5m/);
      assert.match(await refusal([command, '--pod-selector', 'app in (web']), /--pod-selector/);
      assert.match(await refusal([command, '--force=yes']), /--force: must be true or false, not "yes"/);
      assert.match(
        await refusal([command, '--ignore-deamonsets']),
        /unknown flag --ignore-deamonsets \(did you mean --ignore-daemonsets\?\)/,
      );
    });
  }

  it('run: --retry-interval-ms is a whole number of milliseconds', async () => {
    assert.match(
      await refusal(['run', '--retry-interval-ms', '1.5']),
      /--retry-interval-ms: must be a whole number, not "1.5"/,
    );
  });

  it('forwarder: --node-agent is a switch, and the flags of one mode are refused in the other', async () => {
    assert.match(await refusal(['forwarder', '--node', 'node-1']), /--node needs --node-agent/);
    assert.match(await refusal(['forwarder', '--node-agent', '--identity', 'x']), /--identity is not for --node-agent/);
    assert.match(
      await refusal(['forwarder', '--node-agent=maybe']),
      /--node-agent: must be true or false, not "maybe"/,
    );
    assert.match(await refusal(['forwarder', '--node-agnet']), /did you mean --node-agent\?/);
  });
});
