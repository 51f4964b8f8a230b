import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type Command, UsageError } from '../../../cli/command.ts';
import { COMMAND_CATALOG, loadCommands } from '../../../cli/commands/catalog.ts';
import { EXIT } from '../../../cli/exit-codes.ts';
import { main } from '../../../cli/main.ts';
import { currentLogSettings } from '../../../lib/log/sink.ts';
import { testContext } from './context.ts';

const echo: Command = {
  name: 'echo',
  summary: 'prints its arguments',
  usage: 'Usage: drainbridge echo ARGS',
  exits: ['ok', 'usage'],
  run: async (argv, context) => {
    if (argv.includes('--bad')) throw new UsageError('--bad is not allowed');
    if (argv.includes('--boom')) throw new Error('kaput\n    at somewhere (file.ts:1:1)');
    context?.out(argv.join(' '));
    return 0;
  },
};

describe('drainbridge main', () => {
  it('lists the commands, the logging flags and the exit-status table with --help (exit 0); no command is exit 2', async () => {
    const io = testContext();
    assert.equal(await main(['--help'], [echo], io), 0);
    assert.equal(await main([], [echo], io), 2);
    const help = io.stdout[0] ?? '';
    assert.match(help, /echo\s+prints its arguments/);
    assert.match(help, /--log-level LEVEL/);
    for (const [name, code] of Object.entries(EXIT)) assert.match(help, new RegExp(`^\\s+${code}  `, 'm'), name);
  });

  it("prints a command's usage with the exit statuses it uses, for --help and help CMD", async () => {
    const io = testContext();
    assert.equal(await main(['echo', '--help'], [echo], io), 0);
    assert.equal(await main(['help', 'echo'], [echo], io), 0);
    assert.equal(io.stdout[0], io.stdout[1]);
    assert.match(
      io.stdout[0] ?? '',
      /Usage: drainbridge echo ARGS\n\nExit statuses:\n\s+0 {2}done[^\n]*\n\s+2 {2}bad arguments/,
    );
  });

  it('prints the package version for --version and version (exit 0)', async () => {
    const io = testContext();
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    assert.equal(await main(['--version'], [echo], io), 0);
    assert.equal(await main(['version'], [echo], io), 0);
    assert.deepEqual(io.stdout, [`drainbridge ${version}`, `drainbridge ${version}`]);
  });

  it('suggests the command meant, and maps usage errors to 2 and others to 1 without a stack trace', async () => {
    const io = testContext();
    assert.equal(await main(['ecoh'], [echo], io), 2);
    assert.equal(await main(['echo', '--bad'], [echo], io), 2);
    assert.equal(await main(['echo', '--boom'], [echo], io), 1);
    assert.equal(await main(['echo', 'a', 'b'], [echo], io), 0);
    assert.equal(
      io.stderr[0],
      `drainbridge: unknown command "ecoh" (did you mean "echo"?)\nRun 'drainbridge --help' for the commands.`,
    );
    assert.equal(io.stderr[1], 'drainbridge echo: --bad is not allowed');
    assert.equal(io.stderr[2], "Run 'drainbridge echo --help' for usage.");
    assert.equal(io.stderr[3], 'drainbridge echo: kaput at somewhere (file.ts:1:1)');
    assert.deepEqual(io.stdout, ['a b']);
  });

  it('takes the logging flags off any command line, flags over environment, and refuses bad ones', async () => {
    const io = testContext({ DRAINBRIDGE_LOG_LEVEL: 'error' });
    assert.equal(await main(['echo', 'x', '--log-level', 'warn', '--log-format=json'], [echo], io), 0);
    assert.deepEqual(io.stdout, ['x']);
    assert.deepEqual(currentLogSettings(), { level: 'warn', format: 'json' });
    assert.equal(await main(['echo', '--log-level=loud'], [echo], io), 2);
    assert.match(io.stderr.join('\n'), /--log-level: must be one of debug, info, warn, error, off, not "loud"/);
    const fromEnv = testContext({ DRAINBRIDGE_LOG_FORMAT: 'yaml' });
    assert.equal(await main(['echo'], [echo], fromEnv), 2);
    assert.match(fromEnv.stderr[0] ?? '', /DRAINBRIDGE_LOG_FORMAT: must be one of text, json, not "yaml"/);
    assert.equal(await main(['echo', '--', '--log-level', 'x'], [echo], io), 0, 'after -- it is an argument');
    assert.equal(io.stdout.at(-1), '-- --log-level x');
  });

  it('--help lists exactly the catalog: each command, in order, with its summary', async () => {
    const io = testContext();
    assert.equal(await main(['--help'], undefined, io), 0);
    const help = (io.stdout[0] ?? '').split('\n');
    const listed = help.slice(help.indexOf('Commands:') + 1, help.indexOf('', help.indexOf('Commands:')));
    assert.deepEqual(
      listed.map((line) => /^ {2}(\S+) +(.+)$/.exec(line)?.slice(1)),
      COMMAND_CATALOG.map((entry) => [entry.name, entry.summary]),
    );
  });

  it('each catalog entry loads its command, from cli/commands/NAME.ts, with the same name and summary', async () => {
    const commands = await loadCommands();
    assert.deepEqual(
      commands.map((command) => [command.name, command.summary]),
      COMMAND_CATALOG.map((entry) => [entry.name, entry.summary]),
    );
    for (const entry of COMMAND_CATALOG) {
      // scripts/bundle.ts finds a command's module by this name, to leave out those the image does not ship.
      assert.ok(existsSync(new URL(`../../../cli/commands/${entry.name}.ts`, import.meta.url)), entry.name);
      assert.equal(await entry.load(), await entry.load(), `${entry.name}: loaded once`);
    }
  });

  it('every command declares its flags, operands and exit statuses, and its help lists them', async () => {
    for (const command of await loadCommands()) {
      assert.ok(command.flags, `${command.name} declares its flags`);
      assert.ok(command.exits?.includes('ok') && command.exits.includes('usage'), `${command.name} exits`);
      for (const flag of command.flags ?? []) {
        assert.match(command.usage, new RegExp(`--${flag.name}\\b`), `${command.name} --help mentions --${flag.name}`);
      }
    }
  });
});
