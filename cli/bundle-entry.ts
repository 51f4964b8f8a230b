/**
 * The entry of the bundle the container image runs (scripts/bundle.ts, Dockerfile): the commands a
 * cluster runs, each loaded only when it runs. esbuild splits the bundle at these dynamic imports, so
 * `drainbridge forwarder` reads, compiles and keeps in memory only the forwarder's code — not the
 * embedded state machines, client-node or the other commands (its budget is 80 MiB resident;
 * bench/README.md). `sim` and `demo` (the simulator, its scenarios) are not in the image at all.
 *
 * It shares cli/dispatch.ts with cli/main.ts (same help, logging, exit codes and errors); it does not
 * import main.ts, which imports every command up front.
 */
import { type Command, processContext } from './command.ts';
import { asksVersion, commandHelp, helpText, runCommand, versionText, wantsHelp } from './dispatch.ts';
import { EXIT } from './exit-codes.ts';
import { didYouMean } from './suggest.ts';

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
  {
    name: 'status',
    summary: 'what drainbridge is doing: nodes in maintenance, holds, progress, blockers, the queue; changes nothing',
    load: async () => (await import('./commands/status.ts')).statusCommand,
  },
];

async function dispatch(argv: readonly string[], commands = IMAGE_COMMANDS): Promise<number> {
  const context = processContext();
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
    const hint = didYouMean(
      name,
      commands.map((c) => c.name),
      (n) => `"${n}"`,
    );
    context.err(`drainbridge: unknown command "${name}"${hint}\nRun 'drainbridge --help' for the commands.`);
    return EXIT.usage;
  }
  const command = await entry.load();
  if (wantsHelp(rest)) {
    context.out(commandHelp(command));
    return EXIT.ok;
  }
  // The same dispatch as cli/main.ts: the logging flags and defaults, errors in words, the exit table.
  return runCommand(command, rest, context);
}

process.exitCode = await dispatch(process.argv.slice(2));
