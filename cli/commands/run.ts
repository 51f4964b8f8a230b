/** `drainbridge run`: forwarder + in-process bus + embedded state machines + schedules, in one process (embedded/run). */

import { DrainbridgeRun } from '../../embedded/run/run.ts';
import { loadBusServerSettings } from '../../lib/bus/bus-key.ts';
import { readServerTls } from '../../lib/bus/bus-tls.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { loadWebhookSettings } from '../../lib/notify/index.ts';
import { resolveMaybeRef } from '../../lib/secrets/secret-refs.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { KUBECONFIG_FLAG } from '../cluster-flags.ts';
import type { Command } from '../command.ts';
import { DRAIN_FLAGS, drainOptionsSetBy, SERVICE_DRAIN_FLAGS_HELP } from '../drain-flags.ts';
import { configFor } from '../embedded.ts';
import { expectPositionals, type FlagSpec, flagValue, integerFlag, parseCommandLine } from '../flags.ts';
import { preflightService } from '../service-preflight.ts';
import { envFromSettingFlags, settingFlags, settingFlagsHelp } from '../setting-flags.ts';
import { SERVICE_LOGGING, SHUTDOWN_GRACE_FLAG, shutdownGraceSeconds, untilSignal } from '../signals.ts';

const FLAGS: readonly FlagSpec[] = [
  KUBECONFIG_FLAG,
  ...settingFlags('run'),
  SHUTDOWN_GRACE_FLAG,
  {
    name: 'retry-interval-ms',
    kind: 'value',
    value: 'MS',
    help: 'replace every Retry interval of the state machines (demos, fast simulated clocks)',
  },
  ...DRAIN_FLAGS,
];

export const runCommand: Command = {
  name: 'run',
  summary: 'the whole product in one process: forwarder, in-process bus, embedded state machines, schedules',
  usage: [
    'Usage: drainbridge run [--kubeconfig FILE] [--cordon-evacuates off|all|SELECTOR] [--metrics-address HOST:PORT]',
    '                       [--nmo-coexistence refuse|act] [--identity ID] [--shutdown-grace SECONDS]',
    '                       [--bus-address HOST:PORT] [kubectl drain flags]',
    '',
    'Watches the cluster like `drainbridge forwarder`, but routes the events by the packaged rules to the',
    'state machines in this process (no AWS account). Holds the Lease drainbridge-run (DRAINBRIDGE_NAMESPACE)',
    'while it works; on start it resumes unfinished evacuations and restores from their Evacuation records.',
    'Nova with DRAINBRIDGE_NOVA=true and OS_* credentials. Stops on SIGTERM/SIGINT (flushes, releases the Lease).',
    '  --retry-interval-ms  replace every Retry interval of the state machines (demos, fast simulated clocks)',
    settingFlagsHelp('run'),
    SERVICE_DRAIN_FLAGS_HELP,
  ].join('\n'),
  // A service: its log is its output, JSON on stderr unless --log-* or DRAINBRIDGE_LOG_* say otherwise.
  logging: SERVICE_LOGGING,
  flags: FLAGS,
  exits: ['ok', 'failed', 'usage', 'notReady'],
  async run(argv) {
    const parsed = parseCommandLine(argv, FLAGS);
    expectPositionals(parsed, []);
    const env = {
      DRAINBRIDGE_FORWARDER_LEASE: 'drainbridge-run',
      ...process.env,
      ...envFromSettingFlags(parsed, 'run'),
    };
    const fromEnv = configFor(flagValue(parsed, 'kubeconfig'), env);
    // The drain flags win over DRAINBRIDGE_DRAIN_*; a request's own `drain` over both.
    const config = { ...fromEnv, drainDefaults: { ...fromEnv.drainDefaults, ...drainOptionsSetBy(parsed) } };
    const settings = loadForwarderSettings(env);
    const busEndpoint = loadBusServerSettings(env);
    // The certificate files are read before anything starts: a bad file stops run here, naming its variable.
    const busTls = busEndpoint ? readServerTls(busEndpoint.tls) : undefined;
    // A bad webhook setting stops run here, naming its variable; the URL is a secret (resolved, registered).
    const webhookSettings = loadWebhookSettings(env);
    const webhook = webhookSettings && { ...webhookSettings, url: await resolveMaybeRef(webhookSettings.url) };
    const grace = shutdownGraceSeconds(parsed);
    const retryText = flagValue(parsed, 'retry-interval-ms');
    const retryIntervalMs =
      retryText === undefined ? undefined : integerFlag('retry-interval-ms', retryText, { min: 0, max: 3_600_000 });
    const logger = createLogger('drainbridge-run');
    // Before leader election: a denied call refuses the start (exit 4) or leaves its optional source out.
    const decision = await preflightService('run', config, settings, logger);
    const run = await DrainbridgeRun.create({
      config,
      settings: { ...settings, nodeMaintenance: decision.nodeMaintenance },
      notReady: decision.notReady,
      logger,
      ...(retryIntervalMs !== undefined ? { retryIntervalMs } : {}),
      ...(busEndpoint ? { busEndpoint } : {}),
      ...(busTls ? { busTls } : {}),
      ...(webhook ? { webhook } : {}),
    });
    await run.start();
    const signal = await untilSignal();
    logger.info('stopping', { signal });
    await run.stop(grace * 1000);
    return 0;
  },
};
