/**
 * The forwarder's own settings, from the environment (and the command line, which wins), validated at
 * start: a bad value fails with every problem named and nothing started.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { problemsOf } from '../../bus/contracts/parse.ts';
import { parseSelector } from '../../clients/kube/selectors.ts';
import { ConfigError } from '../../errors/index.ts';
import { hostPort, trueFalse, wholeNumber } from '../../settings/parsers.ts';
import {
  envSchemaOf,
  type FlagCommand,
  type SettingReader,
  setting,
  textsOf,
  type ValuesOf,
  valuesOf,
} from '../../settings/setting.ts';
import type { CordonSelection } from '../cordon/decide.ts';

/** Where the operations endpoint listens in a pod unless DRAINBRIDGE_METRICS_ADDRESS says otherwise. */
export const IN_POD_METRICS_ADDRESS = '0.0.0.0:8080';

const Selection = z.string().transform((text, ctx): CordonSelection => {
  const value = text.trim();
  if (value === 'off' || value === '') return { enabled: false };
  if (value === 'all') return { enabled: true, selector: [] };
  try {
    return { enabled: true, selector: parseSelector(value) };
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `must be off, all or a label selector (${(error as Error).message})` });
    return z.NEVER;
  }
});

/** The forwarder's settings are read by `drainbridge forwarder` (both modes) and `drainbridge run`. */
const FORWARDER: readonly SettingReader[] = ['forwarder', 'run'];
const BOTH: readonly FlagCommand[] = ['forwarder', 'run'];

/** Every setting the forwarder reads besides lib/config's, declared once (docs/configuration.md renders them). */
export const FORWARDER_SETTINGS = {
  cordon: setting({
    env: 'DRAINBRIDGE_CORDON_EVACUATES',
    parse: Selection,
    default: 'off',
    help: '`off`, `all`, or a node label selector: which nodes a cordon by someone else evacuates',
    readBy: FORWARDER,
    flag: { name: 'cordon-evacuates', value: 'off|all|SELECTOR', commands: BOTH },
  }),
  nodeMaintenance: setting({
    env: 'DRAINBRIDGE_NODE_MAINTENANCE',
    parse: trueFalse,
    default: 'true',
    help: 'handle medik8s NodeMaintenance resources',
    readBy: FORWARDER,
  }),
  /** Also the older KubeVirt group's NodeMaintenances. */
  nodeMaintenanceKubevirt: setting({
    env: 'DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT',
    parse: trueFalse,
    default: 'false',
    help: 'also handle the older KubeVirt NodeMaintenance (nodemaintenance.kubevirt.io/v1beta1; its CRD from deploy/components/nodemaintenance-kubevirt)',
    readBy: FORWARDER,
  }),
  /** Where the NodeMaintenance admission webhook listens (undefined: not served). */
  webhookAddress: setting({
    env: 'DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK',
    parse: z.union([z.literal('off').transform(() => undefined), hostPort('0.0.0.0:9443')], {
      error: 'must be off or host:port, e.g. 0.0.0.0:9443',
    }),
    default: 'off',
    help: '`off`, or host:port where the NodeMaintenance admission webhook listens (HTTPS; deploy/components/nodemaintenance-webhook sets 0.0.0.0:9443)',
    readBy: FORWARDER,
  }),
  coexistence: setting({
    env: 'DRAINBRIDGE_NMO_COEXISTENCE',
    parse: z.enum(['refuse', 'act'], { error: 'must be refuse or act' }),
    default: 'refuse',
    help: '`refuse`: leave NodeMaintenances to node-maintenance-operator when it is installed; `act`: handle them anyway',
    readBy: FORWARDER,
    flag: { name: 'nmo-coexistence', value: 'refuse|act', commands: BOTH },
  }),
  leaseName: setting({
    env: 'DRAINBRIDGE_FORWARDER_LEASE',
    parse: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Lease name')
      .max(253),
    default: 'drainbridge-forwarder',
    help: 'the leader-election Lease (in DRAINBRIDGE_NAMESPACE)',
    readBy: FORWARDER,
  }),
  leaseSeconds: setting({
    env: 'DRAINBRIDGE_FORWARDER_LEASE_SECONDS',
    parse: wholeNumber(3, 300),
    default: '15',
    help: 'lease duration: a dead leader is replaced within it plus a retry period (≈ 1/7 of it, at least 0.5 s: 15 → ≈ 17 s)',
    readBy: FORWARDER,
  }),
  queueCapacity: setting({
    env: 'DRAINBRIDGE_FORWARDER_QUEUE',
    parse: wholeNumber(10, 1_000_000),
    default: '10000',
    help: 'events kept while the bus is unreachable (one per subject)',
    readBy: FORWARDER,
  }),
  metricsAddress: setting({
    env: 'DRAINBRIDGE_METRICS_ADDRESS',
    parse: hostPort('0.0.0.0:8080'),
    default: '127.0.0.1:8080',
    help: 'host:port of /healthz, /readyz, /metrics (in a pod, KUBERNETES_SERVICE_HOST set: 0.0.0.0:8080)',
    readBy: FORWARDER,
    flag: { name: 'metrics-address', value: 'HOST:PORT', commands: BOTH },
  }),
  identity: setting({
    env: 'DRAINBRIDGE_FORWARDER_IDENTITY',
    parse: z.string().min(1).max(128).optional(),
    default: undefined,
    help: 'leader-election identity (default: POD_NAME or hostname, plus the pid)',
    readBy: FORWARDER,
    flag: { name: 'identity', value: 'ID', commands: BOTH },
  }),
};

const Schema = envSchemaOf(FORWARDER_SETTINGS);

type Declared = ValuesOf<typeof FORWARDER_SETTINGS>;

/** The forwarder's settings: the declared ones, the lease in milliseconds and the identity resolved. */
export type ForwarderSettings = Omit<Declared, 'leaseSeconds' | 'identity'> & {
  readonly leaseDurationMs: number;
  readonly identity: string;
};

/** Reads the settings from `env` (command-line values already merged in by the caller). */
export function loadForwarderSettings(env: Readonly<Record<string, string | undefined>>): ForwarderSettings {
  const input = textsOf(FORWARDER_SETTINGS, env, { emptyIsUnset: false });
  // A workstation's process answers on loopback only; in a pod the kubelet's probes and Prometheus reach it.
  if (env.DRAINBRIDGE_METRICS_ADDRESS === undefined && env.KUBERNETES_SERVICE_HOST) {
    input.DRAINBRIDGE_METRICS_ADDRESS = IN_POD_METRICS_ADDRESS;
  }
  const parsed = Schema.safeParse(input);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error));
  const { leaseSeconds, identity, ...rest } = valuesOf(FORWARDER_SETTINGS, parsed.data);
  return {
    ...rest,
    leaseDurationMs: leaseSeconds * 1000,
    identity: identity ?? `${env.POD_NAME ?? hostname()}-${process.pid}`,
  };
}
