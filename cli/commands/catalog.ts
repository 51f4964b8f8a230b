/**
 * Every subcommand, once: its name, summary, how to load it, whether the container image ships it and
 * whether it runs the state machines. `drainbridge --help`, "did you mean", shell completion and both entries
 * (cli/main.ts, and the image's cli/bundle-entry.ts, which keeps the entries the image ships) read this list.
 * Each command is loaded only when it runs: `drainbridge --help` and a mistyped command answer without reading
 * any command's code. A command NAME lives in cli/commands/NAME.ts (scripts/bundle.ts leaves out of the image
 * the files of the commands it does not ship; test/unit/cli/main.test.ts checks both).
 */
import type { Command } from '../command.ts';

export interface CommandEntry {
  readonly name: string;
  /** The command's own summary, repeated here so that the top-level help needs no command module. */
  readonly summary: string;
  readonly load: () => Promise<Command>;
  /** Whether the container image ships it (a command a cluster runs; not the simulator, demos or reports). */
  readonly inImage: boolean;
  /** Whether it runs the state machines: the image compiles their definitions in and hands them over first. */
  readonly needsDefinitions: boolean;
}

/** The order `drainbridge --help` lists them. */
export const COMMAND_CATALOG: readonly CommandEntry[] = [
  {
    name: 'evacuate',
    summary: 'cordon a node and move everything off it (pods, Nova servers), embedded; prints progress',
    load: async () => (await import('./evacuate.ts')).evacuateCommand,
    inImage: true,
    needsDefinitions: true,
  },
  {
    name: 'restore',
    summary: 'end maintenance on a node: release the hold; when it is the last, undo what drainbridge changed',
    load: async () => (await import('./restore.ts')).restoreCommand,
    inImage: true,
    needsDefinitions: true,
  },
  {
    name: 'abort',
    summary: 'stop a running evacuation; the node stays cordoned and held until `drainbridge restore`',
    load: async () => (await import('./abort.ts')).abortCommand,
    inImage: true,
    needsDefinitions: true,
  },
  {
    name: 'resume',
    summary: 'admit nodes again after the circuit breaker paused admission (DRAINBRIDGE_BREAKER)',
    load: async () => (await import('./resume.ts')).resumeCommand,
    inImage: true,
    needsDefinitions: false,
  },
  {
    name: 'plan',
    summary: 'show what evacuating a node would do (pods to evict, skipped, blockers); changes nothing',
    load: async () => (await import('./plan.ts')).planCommand,
    inImage: true,
    needsDefinitions: true,
  },
  {
    name: 'report',
    summary: 'the timeline of an evacuation (one bar per pod, VM, server; waits, blockers, phases) as HTML or SVG',
    load: async () => (await import('./report.ts')).reportCommand,
    inImage: false,
    needsDefinitions: false,
  },
  {
    name: 'status',
    summary: 'what drainbridge is doing: nodes in maintenance, holds, progress, blockers, the queue; changes nothing',
    load: async () => (await import('./status.ts')).statusCommand,
    inImage: true,
    needsDefinitions: false,
  },
  {
    name: 'repair',
    summary: "rewrite drainbridge's records on a node that cannot be read (shows what it writes; asks first)",
    load: async () => (await import('./repair.ts')).repairCommand,
    inImage: false,
    needsDefinitions: false,
  },
  {
    name: 'check',
    summary: 'check the cluster is ready for drainbridge (CRD, namespace, RBAC, Nova); changes nothing',
    load: async () => (await import('./check.ts')).checkCommand,
    inImage: false,
    needsDefinitions: false,
  },
  {
    name: 'forwarder',
    summary: 'relay cordons, NodeMaintenances and (--node-agent) cloud maintenance notices to the bus',
    load: async () => (await import('./forwarder.ts')).forwarderCommand,
    inImage: true,
    needsDefinitions: false,
  },
  {
    name: 'run',
    summary: 'the whole product in one process: forwarder, in-process bus, embedded state machines, schedules',
    load: async () => (await import('./run.ts')).runCommand,
    inImage: true,
    needsDefinitions: true,
  },
  {
    name: 'sim',
    summary: 'run the Kubernetes API simulator (for kubectl, tests and demos)',
    load: async () => (await import('./sim.ts')).simCommand,
    inImage: false,
    needsDefinitions: false,
  },
  {
    name: 'demo',
    summary: 'run a whole evacuation and restore on a simulated cluster, embedded (what `npm start` runs)',
    load: async () => (await import('./demo.ts')).demoCommand,
    inImage: false,
    needsDefinitions: false,
  },
  {
    name: 'completion',
    summary: 'print a shell completion script: drainbridge completion bash|zsh',
    load: () => completion(),
    inImage: false,
    needsDefinitions: false,
  },
];

/**
 * The completion command, over every command of the catalog (its own entry included). Built here, once, so that
 * completion.ts needs no import of this list (that would be a cycle).
 */
let completionLoaded: Promise<Command> | undefined;
function completion(): Promise<Command> {
  completionLoaded ??= Promise.all([import('./completion.ts'), import('../../sim/scenarios/index.ts')]).then(
    ([{ completionCommandFor }, { bundledScenarios }]) =>
      completionCommandFor(() => loadCommands(COMMAND_CATALOG), bundledScenarios),
  );
  return completionLoaded;
}

/** Every command of `catalog`, loaded (what shell completion describes). */
export function loadCommands(catalog: readonly CommandEntry[] = COMMAND_CATALOG): Promise<Command[]> {
  return Promise.all(catalog.map((entry) => entry.load()));
}

/** Entries for commands already loaded (tests pass their own). */
export function catalogOf(commands: readonly Command[]): CommandEntry[] {
  return commands.map((command) => ({
    name: command.name,
    summary: command.summary,
    load: async () => command,
    inImage: false,
    needsDefinitions: false,
  }));
}
