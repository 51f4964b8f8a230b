/**
 * The entry of the bundle the container image runs (scripts/bundle.ts, Dockerfile): the commands a
 * cluster runs, each loaded only when it runs. esbuild splits the bundle at these dynamic imports, so
 * `drainbridge forwarder` reads, compiles and keeps in memory only the forwarder's code — not the
 * embedded state machines, client-node or the other commands (its budget is 80 MiB resident;
 * bench/README.md). `sim` and `demo` (the simulator, its scenarios) are not in the image at all.
 *
 * It dispatches by itself, as cli/main.ts does (same help, exit codes and errors), because main.ts
 * imports every command up front.
 */
import type { Command } from './command.ts';
import { UsageError } from './command.ts';

interface LazyCommand {
  readonly name: string;
  /** The command's own summary (test/deploy/image.test.ts keeps them equal). */
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

/** The state-machine definitions compiled in, for the commands that run them (the image reads no file). */
async function withPackagedDefinitions<T>(command: Promise<T>): Promise<T> {
  const [{ usePackagedDefinitions }, definitions] = await Promise.all([
    import('../embedded/runtime.ts'),
    import('../workflow/definitions.json', { with: { type: 'json' } }),
  ]);
  usePackagedDefinitions(definitions.default as unknown as Parameters<typeof usePackagedDefinitions>[0]);
  return command;
}

const IMAGE_COMMANDS: readonly LazyCommand[] = [
  {
    name: 'forwarder',
    summary: 'relay cordons, NodeMaintenances and (--node-agent) cloud maintenance notices to the bus',
    load: async () => (await import('./commands/forwarder.ts')).forwarderCommand,
  },
  {
    name: 'run',
    summary: 'the whole product in one process: forwarder, in-process bus, embedded state machines, schedules',
    load: () => withPackagedDefinitions(import('./commands/run.ts').then((m) => m.runCommand)),
  },
  {
    name: 'evacuate',
    summary: 'cordon a node and move everything off it (pods, Nova servers), embedded; prints progress',
    load: () => withPackagedDefinitions(import('./commands/evacuate.ts').then((m) => m.evacuateCommand)),
  },
  {
    name: 'restore',
    summary: 'end maintenance on a node: release the hold; when it is the last, undo what drainbridge changed',
    load: () => withPackagedDefinitions(import('./commands/restore.ts').then((m) => m.restoreCommand)),
  },
  {
    name: 'abort',
    summary: 'stop a running evacuation; the node stays cordoned and held until `drainbridge restore`',
    load: () => withPackagedDefinitions(import('./commands/abort.ts').then((m) => m.abortCommand)),
  },
  {
    name: 'plan',
    summary: 'show what evacuating a node would do (pods to evict, skipped, blockers); changes nothing',
    load: () => withPackagedDefinitions(import('./commands/plan.ts').then((m) => m.planCommand)),
  },
];

function helpText(commands: readonly LazyCommand[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'drainbridge — node maintenance without losing work',
    '',
    'Usage: drainbridge <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `drainbridge <command> --help` for a command's options.",
  ].join('\n');
}

async function runCommand(entry: LazyCommand, rest: readonly string[]): Promise<number> {
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.usage);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`drainbridge ${entry.name}: ${error.message}\n\n${command.usage}`);
      return 2;
    }
    console.error(`drainbridge ${entry.name}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

async function dispatch(argv: readonly string[], commands = IMAGE_COMMANDS): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(helpText(commands));
    return name ? 0 : 2;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    console.error(`drainbridge: unknown command "${name}"\n\n${helpText(commands)}`);
    return 2;
  }
  return runCommand(entry, rest);
}

process.exitCode = await dispatch(process.argv.slice(2));
