/** `drainbridge run`: forwarder + in-process bus + embedded state machines + schedules, in one process (embedded/run). */

import { DrainbridgeRun } from '../../embedded/run/run.ts';
import { loadBusServerSettings } from '../../lib/bus/bus-key.ts';
import { loadForwarderSettings } from '../../lib/forwarder/settings.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { parseArgs } from '../args.ts';
import { type Command, UsageError } from '../command.ts';
import { configFor } from '../embedded.ts';
import { envFromFlags, SERVICE_LOGGING, untilSignal, valueFlags } from '../signals.ts';

const FLAG_ENV = {
  'cordon-evacuates': 'DRAINBRIDGE_CORDON_EVACUATES',
  'metrics-address': 'DRAINBRIDGE_METRICS_ADDRESS',
  'nmo-coexistence': 'DRAINBRIDGE_NMO_COEXISTENCE',
  identity: 'DRAINBRIDGE_FORWARDER_IDENTITY',
  'bus-address': 'DRAINBRIDGE_BUS_ADDRESS',
};
const OWN = {
  kubeconfig: true,
  'shutdown-grace': true,
  'retry-interval-ms': true,
  ...Object.fromEntries(Object.keys(FLAG_ENV).map((k) => [k, true])),
};

function numberFlag(value: string | undefined, name: string, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0)
    throw new UsageError(`--${name} must be a number ≥ 0`);
  return parsed;
}

export const runCommand: Command = {
  name: 'run',
  summary: 'the whole product in one process: forwarder, in-process bus, embedded state machines, schedules',
  usage: [
    'Usage: drainbridge run [--kubeconfig FILE] [--cordon-evacuates off|all|SELECTOR] [--metrics-address HOST:PORT]',
    '                       [--nmo-coexistence refuse|act] [--identity ID] [--shutdown-grace SECONDS]',
    '                       [--bus-address HOST:PORT]',
    '',
    'Watches the cluster like `drainbridge forwarder`, but routes the events by the packaged rules to the',
    'state machines in this process (no AWS account). Holds the Lease drainbridge-run (DRAINBRIDGE_NAMESPACE)',
    'while it works; on start it resumes unfinished evacuations and restores from their Evacuation records.',
    'Nova with DRAINBRIDGE_NOVA=true and OS_* credentials. Stops on SIGTERM/SIGINT (flushes, releases the Lease).',
    '  --retry-interval-ms  replace every Retry interval of the state machines (demos, fast simulated clocks)',
    '  --bus-address        serve the bus endpoint for node agents (`forwarder --node-agent --bus-endpoint`):',
    '                       PutEvents signed with DRAINBRIDGE_BUS_KEY; cloud notices only (lib/bus/README.md)',
  ].join('\n'),
  // A service: its log is its output, JSON on stderr unless --log-* or DRAINBRIDGE_LOG_* say otherwise.
  logging: SERVICE_LOGGING,
  flags: valueFlags(Object.keys(OWN)),
  exits: ['ok', 'failed', 'usage'],
  async run(argv) {
    const args = parseArgs(argv, OWN);
    if (args.positional.length > 0 || args.drainFlags.length > 0) {
      throw new UsageError(
        `unexpected arguments: ${[...args.positional, ...args.drainFlags.map(([n]) => `--${n}`)].join(' ')}`,
      );
    }
    const env = {
      DRAINBRIDGE_FORWARDER_LEASE: 'drainbridge-run',
      ...process.env,
      ...envFromFlags(args.own, FLAG_ENV),
    };
    const config = configFor(args.own.get('kubeconfig'), env);
    const settings = loadForwarderSettings(env);
    const busEndpoint = loadBusServerSettings(env);
    const grace = numberFlag(args.own.get('shutdown-grace'), 'shutdown-grace', 10) ?? 10;
    const retryIntervalMs = numberFlag(args.own.get('retry-interval-ms'), 'retry-interval-ms', undefined);
    const logger = createLogger('drainbridge-run');
    const run = await DrainbridgeRun.create({
      config,
      settings,
      logger,
      ...(retryIntervalMs !== undefined ? { retryIntervalMs } : {}),
      ...(busEndpoint ? { busEndpoint } : {}),
    });
    await run.start();
    const signal = await untilSignal();
    logger.info('stopping', { signal });
    await run.stop(grace * 1000);
    return 0;
  },
};
