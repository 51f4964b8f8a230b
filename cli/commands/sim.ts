/**
 * `drainbridge sim --scenario NAME|FILE [--port N] [--kubeconfig-out FILE] [--speed X] [--no-tls]`:
 * runs the Kubernetes API simulator until SIGINT/SIGTERM.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../../sim/index.ts';
import { type Command, UsageError } from '../command.ts';

export interface SimArgs {
  readonly scenario?: string;
  readonly port: number;
  readonly kubeconfigOut?: string;
  readonly speed?: number;
  readonly tls: boolean;
}

const VALUE_FLAGS = new Set(['scenario', 'port', 'kubeconfig-out', 'speed']);

function numberFlag(name: string, raw: string, check: (n: number) => boolean, what: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !check(value)) throw new UsageError(`--${name}: ${what}, got "${raw}"`);
  return value;
}

function collectFlags(argv: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const body = arg.slice(2);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    if (name === 'no-tls') {
      flags.set(name, 'true');
      continue;
    }
    if (!VALUE_FLAGS.has(name)) throw new UsageError(`unknown flag --${name}`);
    const value = eq < 0 ? argv[++i] : body.slice(eq + 1);
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  return flags;
}

/** Parses the command line (pure). */
export function parseSimArgs(argv: readonly string[]): SimArgs {
  const flags = collectFlags(argv);
  const port = flags.has('port')
    ? numberFlag(
        'port',
        flags.get('port') ?? '',
        (n) => Number.isInteger(n) && n >= 0 && n <= 65535,
        'must be a port number 0-65535',
      )
    : 0;
  const speedRaw = flags.get('speed');
  const speed =
    speedRaw === undefined
      ? undefined
      : numberFlag('speed', speedRaw, (n) => Number.isFinite(n) && n > 0, 'must be a positive number');
  const args: { -readonly [K in keyof SimArgs]: SimArgs[K] } = { port, tls: !flags.has('no-tls') };
  const scenario = flags.get('scenario');
  if (scenario) args.scenario = scenario;
  const out = flags.get('kubeconfig-out');
  if (out) args.kubeconfigOut = out;
  if (speed !== undefined) args.speed = speed;
  return args;
}

function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    const onSignal = (signal: string): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

export const simCommand: Command = {
  name: 'sim',
  summary: 'Run the Kubernetes API simulator (for kubectl, tests and demos)',
  usage: [
    'Usage: drainbridge sim [--scenario NAME|FILE] [--port N] [--kubeconfig-out FILE] [--speed X] [--no-tls]',
    '',
    'Serves a simulated Kubernetes API on 127.0.0.1 (HTTPS, self-signed) until SIGINT/SIGTERM.',
    '  --scenario NAME|FILE   a bundled scenario (small, busy-node) or a scenario YAML file',
    '  --port N               port to listen on (default: a free one)',
    '  --kubeconfig-out FILE  write the admin kubeconfig there (default: a file in the temp directory)',
    "  --speed X              simulated seconds per real second (default: the scenario's, else 1)",
    '  --no-tls               plain HTTP (kubectl will not send its token over it)',
  ].join('\n'),
  async run(argv) {
    const args = parseSimArgs(argv);
    const options: Parameters<typeof startSimulator>[0] = { port: args.port, tls: args.tls };
    if (args.scenario) options.scenario = args.scenario;
    if (args.speed !== undefined) options.speed = args.speed;
    const sim = await startSimulator(options);
    // The kubeconfig holds the admin token: it goes to a 0600 file, never to the terminal.
    const path = args.kubeconfigOut ?? join(tmpdir(), `drainbridge-sim-${new URL(sim.url).port}.kubeconfig`);
    writeFileSync(path, sim.kubeconfig(), { mode: 0o600 });
    console.log(`drainbridge sim: serving ${sim.url} (speed ${sim.clock.speed})`);
    console.log(`drainbridge sim: admin kubeconfig written to ${path}`);
    console.log(`drainbridge sim: try  kubectl --kubeconfig ${path} get nodes`);
    const signal = await waitForSignal();
    console.log(`drainbridge sim: ${signal}, stopping`);
    await sim.stop();
    return 0;
  },
};
