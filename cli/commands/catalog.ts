/**
 * Every subcommand by name and summary, in the order `drainbridge --help` lists them, each loaded only
 * when it runs: `drainbridge --help` and a mistyped command answer without reading any command's code (the
 * CLI's start is measured in bench/). test/unit/cli/main.test.ts keeps this list equal to COMMANDS.
 */
import type { Command } from '../command.ts';

export interface CommandEntry {
  readonly name: string;
  /** The command's own summary, repeated here so that the top-level help needs no command module. */
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

export const COMMAND_CATALOG: readonly CommandEntry[] = [
  {
    name: 'evacuate',
    summary: 'cordon a node and move everything off it (pods, Nova servers), embedded; prints progress',
    load: async () => (await import('./evacuate.ts')).evacuateCommand,
  },
  {
    name: 'restore',
    summary: 'end maintenance on a node: release the hold; when it is the last, undo what drainbridge changed',
    load: async () => (await import('./restore.ts')).restoreCommand,
  },
  {
    name: 'abort',
    summary: 'stop a running evacuation; the node stays cordoned and held until `drainbridge restore`',
    load: async () => (await import('./abort.ts')).abortCommand,
  },
  {
    name: 'plan',
    summary: 'show what evacuating a node would do (pods to evict, skipped, blockers); changes nothing',
    load: async () => (await import('./plan.ts')).planCommand,
  },
  {
    name: 'report',
    summary: 'the timeline of an evacuation (one bar per pod, VM, server; waits, blockers, phases) as HTML or SVG',
    load: async () => (await import('./report.ts')).reportCommand,
  },
  {
    name: 'status',
    summary: 'what drainbridge is doing: nodes in maintenance, holds, progress, blockers, the queue; changes nothing',
    load: async () => (await import('./status.ts')).statusCommand,
  },
  {
    name: 'repair',
    summary: "rewrite drainbridge's records on a node that cannot be read (shows what it writes; asks first)",
    load: async () => (await import('./repair.ts')).repairCommand,
  },
  {
    name: 'check',
    summary: 'check the cluster is ready for drainbridge (CRD, namespace, RBAC, Nova); changes nothing',
    load: async () => (await import('./check.ts')).checkCommand,
  },
  {
    name: 'forwarder',
    summary: 'relay cordons, NodeMaintenances and (--node-agent) cloud maintenance notices to the bus',
    load: async () => (await import('./forwarder.ts')).forwarderCommand,
  },
  {
    name: 'run',
    summary: 'the whole product in one process: forwarder, in-process bus, embedded state machines, schedules',
    load: async () => (await import('./run.ts')).runCommand,
  },
  {
    name: 'sim',
    summary: 'run the Kubernetes API simulator (for kubectl, tests and demos)',
    load: async () => (await import('./sim.ts')).simCommand,
  },
  {
    name: 'demo',
    summary: 'run a whole evacuation and restore on a simulated cluster, embedded (what `npm start` runs)',
    load: async () => (await import('./demo.ts')).demoCommand,
  },
  {
    name: 'completion',
    summary: 'print a shell completion script: drainbridge completion bash|zsh',
    load: async () => {
      const { COMMANDS } = await import('./index.ts');
      return COMMANDS.find((command) => command.name === 'completion') as Command;
    },
  },
];

/** Entries for commands already loaded (tests pass their own). */
export function catalogOf(commands: readonly Command[]): CommandEntry[] {
  return commands.map((command) => ({ name: command.name, summary: command.summary, load: async () => command }));
}
