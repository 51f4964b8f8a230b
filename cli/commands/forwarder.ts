/**
 * `drainbridge forwarder`: the in-cluster forwarder, publishing to EventBridge (lib/sources/forwarder); with
 * `--node-agent`, the node agent of a DaemonSet (lib/sources/node-agent/node-agent.ts). Only what the chosen mode
 * runs is loaded: this process has a memory budget (80 MiB resident, bench/README.md), so nothing here
 * imports the embedded runtime or @kubernetes/client-node.
 */
import type { BusClientSettings } from '../../lib/bus/bus-key.ts';
import type { BusAdapter } from '../../lib/bus/types.ts';
import { loadConfig } from '../../lib/config/load.ts';
import type { Config } from '../../lib/config/schema.ts';
import { createLogger, type Logger } from '../../lib/log/logger.ts';
import { NOTICE_PROVIDERS } from '../../lib/model/notice.ts';
import type { DrainOptions } from '../../lib/model/request.ts';
import { type ForwarderSettings, loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { KUBECONFIG_FLAG } from '../cluster-flags.ts';
import { type Command, UsageError } from '../command.ts';
import { DRAIN_FLAGS, drainOptionsSetBy, SERVICE_DRAIN_FLAGS_HELP } from '../drain-flags.ts';
import {
  expectPositionals,
  type FlagSpec,
  flagValue,
  isOn,
  type ParsedCommandLine,
  parseCommandLine,
} from '../flags.ts';
import { preflightService } from '../service-preflight.ts';
import { envFromSettingFlags, settingFlags, settingFlagsHelp } from '../setting-flags.ts';
import { SERVICE_LOGGING, SHUTDOWN_GRACE_FLAG, shutdownGraceSeconds, untilSignal } from '../signals.ts';

const FLAGS: readonly FlagSpec[] = [
  KUBECONFIG_FLAG,
  ...settingFlags('forwarder'),
  SHUTDOWN_GRACE_FLAG,
  { name: 'node-agent', kind: 'switch', help: "run this node's agent (a DaemonSet) instead" },
  ...DRAIN_FLAGS,
];

type Env = Readonly<Record<string, string | undefined>>;

/** Flags of one mode only. */
const CLUSTER_ONLY = ['cordon-evacuates', 'nmo-coexistence', 'identity'];
const AGENT_ONLY = ['node', 'provider', 'bus-endpoint'];

function checkMode(parsed: ParsedCommandLine, agentMode: boolean): void {
  const misplaced = (agentMode ? CLUSTER_ONLY : AGENT_ONLY).filter((flag) => flagValue(parsed, flag) !== undefined);
  if (misplaced.length > 0) {
    throw new UsageError(
      `${misplaced.map((f) => `--${f}`).join(', ')} ${agentMode ? 'is not for --node-agent' : 'needs --node-agent'}`,
    );
  }
}

/** Something that runs until told to stop. */
interface Running {
  stop(graceMs: number): Promise<void>;
}

/** The cluster forwarder: cordons and NodeMaintenances, leader-elected. */
async function startClusterForwarder(
  env: Env,
  kubeconfig: string | undefined,
  settings: ForwarderSettings & { readonly drain: Partial<DrainOptions> },
  logger: Logger,
): Promise<Running> {
  const { createForwarder } = await import('../../lib/sources/forwarder/index.ts');
  const config = configOf(env, kubeconfig);
  // Before leader election: a denied call refuses the start (exit 4) or leaves its optional source out.
  const decision = await preflightService('forwarder', config, settings, logger);
  const forwarder = await createForwarder(config, { ...settings, nodeMaintenance: decision.nodeMaintenance }, logger, {
    drain: settings.drain,
    notReady: decision.notReady,
  });
  await forwarder.start();
  const waker = await wakeWaitingRequests(config, () => forwarder.isLeader, logger);
  return {
    stop: async (graceMs) => {
      await waker.stop();
      await forwarder.stop(graceMs);
    },
  };
}

/**
 * Wakes Step Functions executions waiting in line (issue 23): a watch of the admission Lease (as
 * `drainbridge run` holds one) whose leader sends each parked task token back with SendTaskSuccess as a
 * slot frees. A wake-up lost (no rights, an outage, a replica change) costs the wait's fallback only.
 */
async function wakeWaitingRequests(
  config: Config,
  leading: () => boolean,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  const [{ SlotWaker }, { connectKube }, { stepFunctionsDelivery }] = await Promise.all([
    import('../../lib/admission/waker.ts'),
    import('../../lib/sources/forwarder/kube.ts'),
    import('../../lib/sources/forwarder/task-tokens.ts'),
  ]);
  const client = await connectKube(config);
  const waker = new SlotWaker({
    client,
    namespace: config.namespace,
    logger,
    deliver: stepFunctionsDelivery(),
    leading,
  });
  waker.start();
  return {
    stop: async () => {
      await waker.stop();
      client.close();
    },
  };
}

/** The node agent of this node (DRAINBRIDGE_NODE_NAME, DRAINBRIDGE_AGENT_PROVIDER, …), no leader election. */
async function startNodeAgent(
  env: Env,
  kubeconfig: string | undefined,
  settings: ForwarderSettings & { readonly drain: Partial<DrainOptions> },
  logger: Logger,
): Promise<Running> {
  const [{ loadAgentConfig }, { policyWithDrain }, { NodeAgentProcess }, { connectKube }, { loadBusClientSettings }] =
    await Promise.all([
      import('../../lib/sources/clouds/config.ts'),
      import('../../lib/sources/clouds/policy.ts'),
      import('../../lib/sources/node-agent/node-agent.ts'),
      import('../../lib/sources/forwarder/index.ts'),
      import('../../lib/bus/bus-key.ts'),
    ]);
  const loaded = loadAgentConfig(env);
  // Before anything is contacted: a plain-HTTP endpoint without DRAINBRIDGE_BUS_PLAINTEXT=allow is refused here.
  const bus = loadBusClientSettings(env);
  // The drain flags travel in each Maintenance Requested (the evacuation runs elsewhere).
  const agentConfig = { ...loaded, policy: policyWithDrain(loaded.policy, settings.drain) };
  const config = configOf(env, kubeconfig);
  await preflightService('node-agent', config, { nodeMaintenance: false }, logger);
  const agent = new NodeAgentProcess({
    client: await connectKube(config),
    config: agentConfig,
    sink: bus ? await busEndpointBus(bus, config.eventBusName) : await awsBus(config),
    logger,
    queueCapacity: settings.queueCapacity,
    metricsAddress: settings.metricsAddress,
  });
  await agent.start();
  return agent;
}

/** PutEvents to drainbridge's EventBridge bus (AWS credentials from the SDK's chain). */
async function awsBus(config: { eventBusName: string }): Promise<BusAdapter> {
  const { eventBridgePublisher } = await import('../../lib/sources/forwarder/index.ts');
  return eventBridgePublisher(config);
}

/** PutEvents to `drainbridge run`'s bus endpoint, signed with the shared bus key (lib/bus/bus-endpoint.ts). */
async function busEndpointBus(settings: BusClientSettings, busName: string): Promise<BusAdapter> {
  const { createBusEndpointPublisher } = await import('../../lib/bus/bus-endpoint-client.ts');
  return createBusEndpointPublisher(settings, busName);
}

/** Configuration from the environment; `--kubeconfig` wins over KUBECONFIG. */
function configOf(env: Env, kubeconfig: string | undefined) {
  return loadConfig({
    ...env,
    ...(kubeconfig ? { KUBECONFIG: kubeconfig, DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig' } : {}),
  });
}

export const forwarderCommand: Command = {
  name: 'forwarder',
  summary: 'relay cordons, NodeMaintenances and (--node-agent) cloud maintenance notices to the bus',
  usage: [
    'Usage: drainbridge forwarder [--kubeconfig FILE] [--cordon-evacuates off|all|SELECTOR] [--event-bus NAME]',
    '                             [--metrics-address HOST:PORT] [--nmo-coexistence refuse|act] [--identity ID]',
    '                             [--shutdown-grace SECONDS] [kubectl drain flags]',
    `       drainbridge forwarder --node-agent [--node NAME] [--provider ${NOTICE_PROVIDERS.join('|')}] [--kubeconfig FILE]`,
    '                             [--event-bus NAME] [--bus-endpoint URL] [--metrics-address HOST:PORT]',
    '                             [--shutdown-grace SECONDS] [kubectl drain flags]',
    '',
    'Watches nodes and NodeMaintenances and puts Node Cordoned / Node Uncordoned / Maintenance Requested /',
    'Maintenance Ended on the bus (PutEvents; AWS credentials from the SDK chain: IRSA, Pod Identity, env).',
    'Replicas elect a leader on a Lease in DRAINBRIDGE_NAMESPACE; only the leader publishes.',
    '  --shutdown-grace    seconds to flush queued events on SIGTERM (default 10)',
    "  --node-agent        instead: this node's agent (a DaemonSet): reads the node's instance metadata service",
    '                      and publishes its maintenance notices as Maintenance Requested / Ended; every node',
    '                      publishes its own (no leader election; lib/sources/clouds/README.md).',
    settingFlagsHelp('forwarder'),
    SERVICE_DRAIN_FLAGS_HELP,
    '  The forwarder and the node agent put these options on the events they publish (Node Cordoned,',
    "  Maintenance Requested), where they win over the evacuating process's DRAINBRIDGE_DRAIN_*.",
    'Environment: DRAINBRIDGE_* (lib/sources/README.md), DRAINBRIDGE_KUBE_ACCESS=in-cluster in a pod.',
  ].join('\n'),
  // A service: its log is its output, JSON on stderr unless --log-* or DRAINBRIDGE_LOG_* say otherwise.
  logging: SERVICE_LOGGING,
  flags: FLAGS,
  exits: ['ok', 'failed', 'usage', 'notReady'],
  async run(argv) {
    const parsed = parseCommandLine(argv, FLAGS);
    expectPositionals(parsed, []);
    const agentMode = isOn(parsed, 'node-agent');
    checkMode(parsed, agentMode);
    const env = { ...process.env, ...envFromSettingFlags(parsed, 'forwarder') };
    const grace = shutdownGraceSeconds(parsed);
    const settings = { ...loadForwarderSettings(env), drain: drainOptionsSetBy(parsed) };
    const kubeconfig = flagValue(parsed, 'kubeconfig');
    const logger = createLogger(agentMode ? 'drainbridge-node-agent' : 'drainbridge-forwarder');
    const running = agentMode
      ? await startNodeAgent(env, kubeconfig, settings, logger)
      : await startClusterForwarder(env, kubeconfig, settings, logger);
    const signal = await untilSignal();
    logger.info('stopping', { signal });
    await running.stop(grace * 1000);
    return 0;
  },
};
