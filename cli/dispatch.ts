/**
 * The dispatch every entry shares (cli/main.ts over the whole catalog, cli/bundle-entry.ts over what the image
 * ships): help, version, "did you mean", the logging flags every command accepts, and failures turned into one
 * plain message and an exit status from the table (cli/exit-codes.ts). It imports no command: each is loaded
 * from its catalog entry only when it runs.
 */
import { configureLogging, type LogSettings, resolveLogSettings } from '../lib/log/sink.ts';
import { type Command, type CommandContext, UsageError } from './command.ts';
import { presentError } from './errors.ts';
import { EXIT, type ExitName, exitTable } from './exit-codes.ts';
import { flagHelp } from './flags.ts';
import { LOG_FLAGS } from './log-flags.ts';
import { didYouMean } from './suggest.ts';

/** What `drainbridge --help` lists of a command. */
export interface CommandSummary {
  readonly name: string;
  readonly summary: string;
}

/** A command the dispatcher can run: its summary, and its module loaded on demand. */
export interface LoadableCommand extends CommandSummary {
  readonly load: () => Promise<Command>;
}

export function helpText(commands: readonly CommandSummary[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'drainbridge — node maintenance without losing work',
    '',
    'Usage: drainbridge <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Flags for every command (logs never mix with the output on stdout):',
    flagHelp(LOG_FLAGS),
    '',
    'Exit statuses (every command):',
    exitTable(),
    '',
    "Run `drainbridge <command> --help` for a command's options; `drainbridge --version` (or `version`) for the version.",
  ].join('\n');
}

/** Whether the command line asks for the version: `drainbridge --version` or `drainbridge version`. */
export function asksVersion(name: string | undefined): boolean {
  return name === '--version' || name === 'version';
}

/** `drainbridge 0.1.0`: the package's version (package.json, compiled into the image's bundle). */
export async function versionText(): Promise<string> {
  const manifest = await import('../package.json', { with: { type: 'json' } });
  return `drainbridge ${manifest.default.version}`;
}

/** A command's --help: its usage, then the exit statuses it uses. */
export function commandHelp(command: Command): string {
  const exits: readonly ExitName[] = command.exits ?? ['ok', 'failed', 'usage'];
  return `${command.usage}\n\nExit statuses:\n${exitTable(exits)}`;
}

interface Split {
  readonly rest: string[];
  readonly given: { level?: string; format?: string; file?: string };
}

/** Takes the logging flags off the command line (up to `--`). */
function splitLogFlags(argv: readonly string[]): Split {
  const rest: string[] = [];
  const given: { level?: string; format?: string; file?: string } = {};
  const keys = { 'log-level': 'level', 'log-format': 'format', 'log-file': 'file' } as const;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const match = /^--(log-level|log-format|log-file)(?:=(.*))?$/.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    const name = match[1] as keyof typeof keys;
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    given[keys[name]] = value;
  }
  return { rest, given };
}

/** Logging for this run: flags over environment over the command's default. */
function loggingFor(split: Split, env: CommandContext['env'], command: Command | undefined): LogSettings {
  const fromEnv = resolveLogSettings(
    {
      ...(env.DRAINBRIDGE_LOG_LEVEL ? { level: env.DRAINBRIDGE_LOG_LEVEL } : {}),
      ...(env.DRAINBRIDGE_LOG_FORMAT ? { format: env.DRAINBRIDGE_LOG_FORMAT } : {}),
      ...(env.DRAINBRIDGE_LOG_FILE ? { file: env.DRAINBRIDGE_LOG_FILE } : {}),
    },
    { level: 'DRAINBRIDGE_LOG_LEVEL', format: 'DRAINBRIDGE_LOG_FORMAT', file: 'DRAINBRIDGE_LOG_FILE' },
    command?.logging,
  );
  const fromFlags = resolveLogSettings(
    split.given,
    { level: '--log-level', format: '--log-format', file: '--log-file' },
    fromEnv.settings,
  );
  const problems = [...fromEnv.problems, ...fromFlags.problems];
  if (problems.length > 0) throw new UsageError(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  return fromFlags.settings;
}

function applyLogging(settings: LogSettings): void {
  try {
    configureLogging(settings);
  } catch (error) {
    throw new UsageError(`--log-file: cannot open ${settings.file}: ${(error as Error).message}`);
  }
}

export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

export async function runCommand(command: Command, argv: readonly string[], context: CommandContext): Promise<number> {
  try {
    const split = splitLogFlags(argv);
    applyLogging(loggingFor(split, context.env, command));
    return await command.run(split.rest, context);
  } catch (error) {
    const presented = presentError(error);
    context.err(`drainbridge ${command.name}: ${presented.message}`);
    if (presented.exit === EXIT.usage && error instanceof UsageError) {
      context.err(`Run 'drainbridge ${command.name} --help' for usage.`);
    }
    return presented.exit;
  }
}

/** Commands of the catalog this entry does not serve (the image's), and what to say when one is typed. */
export interface ServedElsewhere {
  readonly names: readonly string[];
  /** Why `name` is not here and where to run it. */
  readonly message: (name: string) => string;
}

/** Why the first word is not a command here: a flag before any command, one served elsewhere, or no command. */
function notACommand(name: string, commands: readonly CommandSummary[], elsewhere?: ServedElsewhere): string {
  if (name.startsWith('-')) return `a command comes first, not the flag ${name}`;
  if (elsewhere?.names.includes(name)) return elsewhere.message(name);
  const hint = didYouMean(
    name,
    commands.map((c) => c.name),
    (n) => `"${n}"`,
  );
  return `unknown command "${name}"${hint}`;
}

/** Runs `drainbridge argv` over `commands`: loads only the command that runs (or whose --help is asked for). */
export async function dispatch(
  argv: readonly string[],
  commands: readonly LoadableCommand[],
  context: CommandContext,
  elsewhere?: ServedElsewhere,
): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? commands.find((c) => c.name === rest[0]) : undefined;
    context.out(topic ? commandHelp(await topic.load()) : helpText(commands));
    return name ? EXIT.ok : EXIT.usage;
  }
  if (asksVersion(name)) {
    context.out(await versionText());
    return EXIT.ok;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    context.err(`drainbridge: ${notACommand(name, commands, elsewhere)}\nRun 'drainbridge --help' for the commands.`);
    return EXIT.usage;
  }
  const command = await entry.load();
  if (wantsHelp(rest)) {
    context.out(commandHelp(command));
    return EXIT.ok;
  }
  return runCommand(command, rest, context);
}
