/** `drainbridge forwarder`: the in-cluster forwarder, publishing to EventBridge (lib/forwarder). */

import { createForwarder, loadForwarderSettings } from '../../lib/forwarder/index.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { parseArgs } from '../args.ts';
import { type Command, UsageError } from '../command.ts';
import { configFor } from '../embedded.ts';
import { envFromFlags, SERVICE_LOGGING, untilSignal, valueFlags } from '../signals.ts';

const FLAG_ENV = {
  'cordon-evacuates': 'DRAINBRIDGE_CORDON_EVACUATES',
  'metrics-address': 'DRAINBRIDGE_METRICS_ADDRESS',
  'nmo-coexistence': 'DRAINBRIDGE_NMO_COEXISTENCE',
  'event-bus': 'DRAINBRIDGE_EVENT_BUS',
  identity: 'DRAINBRIDGE_FORWARDER_IDENTITY',
};
const OWN = {
  kubeconfig: true,
  'shutdown-grace': true,
  ...Object.fromEntries(Object.keys(FLAG_ENV).map((k) => [k, true])),
};

export const forwarderCommand: Command = {
  name: 'forwarder',
  summary: 'relay cordons and NodeMaintenances to the EventBridge bus (in-cluster, leader-elected)',
  usage: [
    'Usage: drainbridge forwarder [--kubeconfig FILE] [--cordon-evacuates off|all|SELECTOR] [--event-bus NAME]',
    '                             [--metrics-address HOST:PORT] [--nmo-coexistence refuse|act] [--identity ID]',
    '                             [--shutdown-grace SECONDS]',
    '',
    'Watches nodes and NodeMaintenances and puts Node Cordoned / Node Uncordoned / Maintenance Requested /',
    'Maintenance Ended on the bus (PutEvents; AWS credentials from the SDK chain: IRSA, Pod Identity, env).',
    'Replicas elect a leader on a Lease in DRAINBRIDGE_NAMESPACE; only the leader publishes.',
    '  --cordon-evacuates  which nodes a cordon by someone else evacuates (default off)',
    '  --metrics-address   /healthz, /readyz, /metrics (default 0.0.0.0:8080)',
    '  --shutdown-grace    seconds to flush queued events on SIGTERM (default 10)',
    'Environment: DRAINBRIDGE_* (lib/forwarder/README.md), DRAINBRIDGE_KUBE_ACCESS=in-cluster in a pod.',
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
    const env = { ...process.env, ...envFromFlags(args.own, FLAG_ENV) };
    const config = configFor(args.own.get('kubeconfig'), env);
    const settings = loadForwarderSettings(env);
    const grace = Number(args.own.get('shutdown-grace') ?? '10');
    if (!Number.isFinite(grace) || grace < 0) throw new UsageError('--shutdown-grace must be a number of seconds ≥ 0');
    const logger = createLogger('drainbridge-forwarder');
    const forwarder = await createForwarder(config, settings, logger);
    await forwarder.start();
    const signal = await untilSignal();
    logger.info('stopping', { signal });
    await forwarder.stop(grace * 1000);
    return 0;
  },
};
