/**
 * The forwarder's own settings, from the environment (and the command line, which wins), validated at
 * start: a bad value fails with every problem named and nothing started.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { problemsOf } from '../events/parse.ts';
import { parseSelector } from '../kube/selectors.ts';
import type { CordonSelection } from './cordon/plan.ts';

/** Every variable the forwarder reads (besides lib/config's), its default and meaning (README renders them). */
export const FORWARDER_ENV_VARS = {
  DRAINBRIDGE_CORDON_EVACUATES: {
    default: 'off',
    help: '`off`, `all`, or a node label selector: which nodes a cordon by someone else evacuates',
  },
  DRAINBRIDGE_NODE_MAINTENANCE: { default: 'true', help: 'handle medik8s NodeMaintenance resources' },
  DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT: {
    default: 'false',
    help: 'also handle the older KubeVirt NodeMaintenance (nodemaintenance.kubevirt.io/v1beta1; its CRD from deploy/components/nodemaintenance-kubevirt)',
  },
  DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: {
    default: 'off',
    help: '`off`, or host:port where the NodeMaintenance admission webhook listens (HTTPS; deploy/components/nodemaintenance-webhook sets 0.0.0.0:9443)',
  },
  DRAINBRIDGE_NMO_COEXISTENCE: {
    default: 'refuse',
    help: '`refuse`: leave NodeMaintenances to node-maintenance-operator when it is installed; `act`: handle them anyway',
  },
  DRAINBRIDGE_FORWARDER_LEASE: {
    default: 'drainbridge-forwarder',
    help: 'the leader-election Lease (in DRAINBRIDGE_NAMESPACE)',
  },
  DRAINBRIDGE_FORWARDER_LEASE_SECONDS: {
    default: '15',
    help: 'lease duration: a dead leader is replaced within it plus a retry period (≈ 1/7 of it, at least 0.5 s: 15 → ≈ 17 s)',
  },
  DRAINBRIDGE_FORWARDER_QUEUE: { default: '10000', help: 'events kept while the bus is unreachable (one per subject)' },
  DRAINBRIDGE_METRICS_ADDRESS: {
    default: '127.0.0.1:8080',
    help: 'host:port of /healthz, /readyz, /metrics (in a pod, KUBERNETES_SERVICE_HOST set: 0.0.0.0:8080)',
  },
  DRAINBRIDGE_FORWARDER_IDENTITY: {
    default: undefined,
    help: 'leader-election identity (default: POD_NAME or hostname, plus the pid)',
  },
} as const;

/** Where the operations endpoint listens in a pod unless DRAINBRIDGE_METRICS_ADDRESS says otherwise. */
export const IN_POD_METRICS_ADDRESS = '0.0.0.0:8080';

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

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

const Address = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]*):\d{1,5}$/, 'must be host:port, e.g. 0.0.0.0:8080 or 127.0.0.1:0')
  .transform((text) => {
    const at = text.lastIndexOf(':');
    return { host: text.slice(0, at).replace(/^\[|\]$/g, '') || '0.0.0.0', port: Number(text.slice(at + 1)) };
  });

const Schema = z.object({
  DRAINBRIDGE_CORDON_EVACUATES: Selection,
  DRAINBRIDGE_NODE_MAINTENANCE: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((v) => v === 'true'),
  DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((v) => v === 'true'),
  DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: z.union([z.literal('off').transform(() => undefined), Address], {
    error: 'must be off or host:port, e.g. 0.0.0.0:9443',
  }),
  DRAINBRIDGE_NMO_COEXISTENCE: z.enum(['refuse', 'act'], { error: 'must be refuse or act' }),
  DRAINBRIDGE_FORWARDER_LEASE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Lease name')
    .max(253),
  DRAINBRIDGE_FORWARDER_LEASE_SECONDS: wholeNumber(3, 300),
  DRAINBRIDGE_FORWARDER_QUEUE: wholeNumber(10, 1_000_000),
  DRAINBRIDGE_METRICS_ADDRESS: Address,
  DRAINBRIDGE_FORWARDER_IDENTITY: z.string().min(1).max(128).optional(),
});

export interface ForwarderSettings {
  readonly cordon: CordonSelection;
  readonly nodeMaintenance: boolean;
  /** Also the older KubeVirt group's NodeMaintenances. */
  readonly nodeMaintenanceKubevirt: boolean;
  readonly coexistence: 'refuse' | 'act';
  /** Where the NodeMaintenance admission webhook listens (undefined: not served). */
  readonly webhookAddress?: { readonly host: string; readonly port: number } | undefined;
  readonly leaseName: string;
  readonly leaseDurationMs: number;
  readonly queueCapacity: number;
  readonly metricsAddress: { readonly host: string; readonly port: number };
  readonly identity: string;
}

/** Reads the settings from `env` (command-line values already merged in by the caller). */
export function loadForwarderSettings(env: Readonly<Record<string, string | undefined>>): ForwarderSettings {
  const input: Record<string, string | undefined> = {};
  for (const [name, spec] of Object.entries(FORWARDER_ENV_VARS)) input[name] = env[name] ?? spec.default;
  // A workstation's process answers on loopback only; in a pod the kubelet's probes and Prometheus reach it.
  if (env.DRAINBRIDGE_METRICS_ADDRESS === undefined && env.KUBERNETES_SERVICE_HOST) {
    input.DRAINBRIDGE_METRICS_ADDRESS = IN_POD_METRICS_ADDRESS;
  }
  const parsed = Schema.safeParse(input);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error));
  const v = parsed.data;
  const leaseDurationMs = v.DRAINBRIDGE_FORWARDER_LEASE_SECONDS * 1000;
  return {
    cordon: v.DRAINBRIDGE_CORDON_EVACUATES,
    nodeMaintenance: v.DRAINBRIDGE_NODE_MAINTENANCE,
    nodeMaintenanceKubevirt: v.DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT,
    coexistence: v.DRAINBRIDGE_NMO_COEXISTENCE,
    webhookAddress: v.DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK,
    leaseName: v.DRAINBRIDGE_FORWARDER_LEASE,
    leaseDurationMs,
    queueCapacity: v.DRAINBRIDGE_FORWARDER_QUEUE,
    metricsAddress: v.DRAINBRIDGE_METRICS_ADDRESS,
    identity: v.DRAINBRIDGE_FORWARDER_IDENTITY ?? `${env.POD_NAME ?? hostname()}-${process.pid}`,
  };
}
