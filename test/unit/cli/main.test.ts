import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArgs } from '../../../cli/args.ts';
import { type Command, UsageError } from '../../../cli/command.ts';
import { main } from '../../../cli/main.ts';

function capture(): { out: string[]; err: string[]; restore: () => void } {
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...args: unknown[]) => void out.push(args.join(' '));
  console.error = (...args: unknown[]) => void err.push(args.join(' '));
  return { out, err, restore: () => Object.assign(console, { log, error }) };
}

const echo: Command = {
  name: 'echo',
  summary: 'prints its arguments',
  usage: 'Usage: drainbridge echo ARGS',
  run: async (argv) => {
    if (argv.includes('--bad')) throw new UsageError('--bad is not allowed');
    if (argv.includes('--boom')) throw new Error('kaput');
    console.log(argv.join(' '));
    return 0;
  },
};

describe('drainbridge main', () => {
  it('lists the commands with --help and exits 0; with no command exits 2', async () => {
    const io = capture();
    try {
      assert.equal(await main(['--help'], [echo]), 0);
      assert.equal(await main([], [echo]), 2);
    } finally {
      io.restore();
    }
    assert.match(io.out[0] ?? '', /echo\s+prints its arguments/);
  });

  it('maps an unknown command and a usage error to exit 2 with the usage, other errors to 1', async () => {
    const io = capture();
    try {
      assert.equal(await main(['nope'], [echo]), 2);
      assert.equal(await main(['echo', '--bad'], [echo]), 2);
      assert.equal(await main(['echo', '--boom'], [echo]), 1);
      assert.equal(await main(['echo', 'a', 'b'], [echo]), 0);
    } finally {
      io.restore();
    }
    assert.match(io.err[0] ?? '', /unknown command "nope"/);
    assert.match(io.err[1] ?? '', /drainbridge echo: --bad is not allowed\n\nUsage: drainbridge echo ARGS/);
    assert.equal(io.err[2], 'drainbridge echo: kaput');
    assert.deepEqual(io.out, ['a b']);
  });
});

describe('parseArgs', () => {
  it('separates positionals, own flags and kubectl drain flags', () => {
    const args = parseArgs(
      ['node-1', '--reason', 'kernel', '--force', '--grace-period=30', '--timeout', '5m', '--dry-run'],
      {
        reason: true,
        'dry-run': false,
      },
    );
    assert.deepEqual(args.positional, ['node-1']);
    assert.deepEqual(
      [...args.own],
      [
        ['reason', 'kernel'],
        ['dry-run', ''],
      ],
    );
    assert.deepEqual(args.drainFlags, [
      ['force', undefined],
      ['grace-period', '30'],
      ['timeout', '5m'],
    ]);
  });

  it('refuses a flag that needs a value at the end', () => {
    assert.throws(() => parseArgs(['node-1', '--reason'], { reason: true }), /--reason needs a value/);
  });
});
