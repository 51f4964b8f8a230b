/**
 * `drainbridge sim --scenario NAME|FILE [--port N] [--kubeconfig-out FILE] [--speed X] [--no-tls]`:
 * runs the Kubernetes API simulator until SIGINT/SIGTERM.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInput } from '../../lib/errors/index.ts';
import { startSimulator } from '../../sim/index.ts';
import { bundledScenarios, loadScenario } from '../../sim/scenarios/index.ts';
import { type Command, type CommandContext, processContext, UsageError } from '../command.ts';
import { EXIT } from '../exit-codes.ts';
import {
  expectPositionals,
  type FlagSpec,
  flagHelp,
  flagValue,
  integerFlag,
  isOn,
  numberFlag,
  parseCommandLine,
} from '../flags.ts';

export interface SimArgs {
  readonly scenario?: string;
  readonly port: number;
  readonly kubeconfigOut?: string;
  readonly speed?: number;
  readonly tls: boolean;
}

/** The flags; the scenario names are read from sim/scenarios/ so help and completion list every one. */
function simFlags(): readonly FlagSpec[] {
  return [
    {
      name: 'scenario',
      kind: 'value',
      value: 'NAME|FILE',
      help: `a bundled scenario (${bundledScenarios().join(', ')}) or a scenario YAML file`,
    },
    { name: 'port', kind: 'value', value: 'N', help: 'port to listen on (default: a free one)' },
    {
      name: 'kubeconfig-out',
      kind: 'value',
      value: 'FILE',
      help: 'write the admin kubeconfig there (default: a file in the temp directory)',
    },
    {
      name: 'speed',
      kind: 'value',
      value: 'X',
      help: "simulated seconds per real second (default: the scenario's, else 1)",
    },
    { name: 'no-tls', kind: 'switch', help: 'plain HTTP (kubectl will not send its token over it)' },
  ];
}

/** Checks the scenario exists and parses, naming --scenario in any problem. */
function checkScenario(nameOrFile: string): void {
  try {
    loadScenario(nameOrFile);
  } catch (error) {
    if (!(error instanceof InvalidInput)) throw error;
    const problems = error.problems.map((p) => (p.path === 'scenario' ? p.message : `${p.path}: ${p.message}`));
    throw new UsageError(`--scenario: ${problems.join('; ')}`);
  }
}

/** Parses the command line (pure but for reading the scenario). */
export function parseSimArgs(argv: readonly string[]): SimArgs {
  const parsed = parseCommandLine(argv, simFlags());
  expectPositionals(parsed, []);
  const port = flagValue(parsed, 'port');
  const speed = flagValue(parsed, 'speed');
  const scenario = flagValue(parsed, 'scenario');
  const out = flagValue(parsed, 'kubeconfig-out');
  if (scenario) checkScenario(scenario);
  return {
    port: port === undefined ? 0 : integerFlag('port', port, { min: 0, max: 65535 }),
    tls: !isOn(parsed, 'no-tls'),
    ...(scenario ? { scenario } : {}),
    ...(out ? { kubeconfigOut: out } : {}),
    ...(speed === undefined ? {} : { speed: numberFlag('speed', speed, { above: 0, max: 10_000 }) }),
  };
}

function waitForSignal(context: CommandContext): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const release = context.onInterrupt((signal) => {
      release();
      resolve(signal);
    });
  });
}

export const simCommand: Command = {
  name: 'sim',
  summary: 'run the Kubernetes API simulator (for kubectl, tests and demos)',
  get usage() {
    return [
      'Usage: drainbridge sim [--scenario NAME|FILE] [--port N] [--kubeconfig-out FILE] [--speed X] [--no-tls]',
      '',
      'Serves a simulated Kubernetes API on 127.0.0.1 (HTTPS, self-signed) until SIGINT/SIGTERM.',
      flagHelp(simFlags()),
    ].join('\n');
  },
  get flags() {
    return simFlags();
  },
  exits: ['ok', 'usage'],
  async run(argv, context: CommandContext = processContext()) {
    const args = parseSimArgs(argv);
    const options: Parameters<typeof startSimulator>[0] = { port: args.port, tls: args.tls };
    if (args.scenario) options.scenario = args.scenario;
    if (args.speed !== undefined) options.speed = args.speed;
    const signal = waitForSignal(context);
    const sim = await startSimulator(options);
    // The kubeconfig holds the admin token: it goes to a 0600 file, never to the terminal.
    const path = args.kubeconfigOut ?? join(tmpdir(), `drainbridge-sim-${new URL(sim.url).port}.kubeconfig`);
    writeFileSync(path, sim.kubeconfig(), { mode: 0o600 });
    context.out(`drainbridge sim: serving ${sim.url} (speed ${sim.clock.speed})`);
    context.out(`drainbridge sim: admin kubeconfig written to ${path}`);
    context.out(`drainbridge sim: try  kubectl --kubeconfig ${path} get nodes`);
    const received = await signal;
    context.out(`drainbridge sim: ${received}, stopping`);
    await sim.stop();
    // The admin token's file in the temporary directory goes with the server; one the user named stays.
    if (!args.kubeconfigOut) rmSync(path, { force: true });
    // Stopping is what a signal asks of a server: not a failure.
    return EXIT.ok;
  },
};
