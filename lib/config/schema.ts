/**
 * drainbridge's configuration: one validated object, read from the environment (on AWS the
 * environment may hold SSM / Secrets Manager references instead of secrets; see lib/secrets/secret-refs.ts).
 * Every variable, its default and its meaning is listed in ENV_VARS, which docs/configuration.md renders
 * (scripts/gen-config-doc.ts).
 */
import { z } from 'zod';
import type { DrainOptions } from '../domain/request.ts';
import { parseSelector } from '../kube/selectors.ts';
import { novaHostRuleTextSchema } from '../nova/host-mapping.ts';
import type { WindowDefinition } from '../windows/definition.ts';

const bool = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');
const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
const selector = z.string().superRefine((value, ctx) => {
  try {
    parseSelector(value);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `is not a valid label selector (${(error as Error).message})` });
  }
});

/** `SELECTOR=MAX`: the last `=` separates the limit (selectors contain `=` themselves). */
const slotLimit = z.string().transform((text, ctx) => {
  const at = text.lastIndexOf('=');
  const selectorText = text.slice(0, at).trim();
  const max = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isInteger(max) || max < 1) {
    ctx.addIssue({ code: 'custom', message: `"${text}" must be SELECTOR=MAX with MAX a whole number ≥ 1` });
    return z.NEVER;
  }
  try {
    parseSelector(selectorText);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `"${selectorText}" is not a valid label selector (${(error as Error).message})`,
    });
    return z.NEVER;
  }
  return { selector: selectorText, max };
});

/** Where drainbridge's Kubernetes credentials come from. */
export const KUBE_ACCESS_SOURCES = ['kubeconfig', 'in-cluster', 'secret', 'token', 'eks'] as const;
export type KubeAccessSource = (typeof KUBE_ACCESS_SOURCES)[number];

export type KubeAccess =
  /** A kubeconfig file (KUBECONFIG or ~/.kube/config), optionally a context in it. Embedded mode's default. */
  | { readonly source: 'kubeconfig'; readonly path?: string; readonly context?: string }
  /** The pod's ServiceAccount (the forwarder, or drainbridge embedded in the cluster). */
  | { readonly source: 'in-cluster' }
  /** A whole kubeconfig (server + CA + token) held in Secrets Manager / SSM: Lambda's way in. */
  | { readonly source: 'secret'; readonly kubeconfigRef: string; readonly context?: string }
  /** Server URL + CA + a bearer token (the token usually a secret reference). */
  | { readonly source: 'token'; readonly server: string; readonly caData?: string; readonly token: string }
  /** EKS: a token presigned with the function's own AWS credentials (no exec plugin); see eks.ts. */
  | {
      readonly source: 'eks';
      readonly clusterName: string;
      readonly region: string;
      readonly server: string;
      readonly caData: string;
    };

/**
 * The longest maximum evacuation time the configuration accepts (30 days): a bound against typos, not a
 * history workaround — an execution that nears Step Functions' 25,000-event history continues as a new
 * execution of the same request (workflow/evacuate.asl.yml), so an evacuation may run as long as its
 * VMs need. A maintenance announced days ahead waits for its `notBefore` before this time counts.
 */
export const MAX_EVACUATION_HOURS_LIMIT = 720;

export const SHUTOFF_POLICIES = ['block', 'cold-migrate'] as const;
export const COMPATIBILITY_TAINTS = ['medik8s.io/drain', 'kubevirt.io/drain'] as const;

export interface Config {
  /** `aws`: Lambda functions on AWS; `embedded`: the in-process bus and executor. */
  readonly mode: 'aws' | 'embedded';
  readonly kube: KubeAccess;
  /**
   * The drain options the operator set for every request (`drainbridge run`'s drain flags over the
   * DRAINBRIDGE_DRAIN_* variables that are set). An option left out follows the request's origin
   * (lib/domain/drain-defaults.ts); a request's own `drain` wins over these.
   */
  readonly drainDefaults: Partial<DrainOptions>;
  /** At most this many nodes held by drainbridge at once, cluster-wide. */
  readonly maxHeldNodes: number;
  /** Optional further limits: at most `max` held nodes among those matching `selector`. */
  readonly slotLimits: readonly { readonly selector: string; readonly max: number }[];
  /** Pods (e.g. nova-compute, libvirt, network agents) evicted only after the VM branches finish. Empty: none. */
  readonly infraPodSelector: string;
  /** How long a released request's tombstone is kept, so a late duplicate does not cordon again. */
  readonly tombstoneTtlHours: number;
  /** How long an Evacuation record is kept after its request was restored; then it is deleted (lib/progress/expiry.ts). */
  readonly recordTtlHours: number;
  /** Extra taints set while held, for tools that look for them. None by default. */
  readonly compatibilityTaints: readonly (typeof COMPATIBILITY_TAINTS)[number][];
  readonly nova: {
    readonly enabled: boolean;
    /** How a node maps to its Nova host; see lib/nova/host-mapping.ts. Default: the node name. */
    readonly hostRule: string;
    /** Which nodes are Nova hosts (empty: every node); a node naming its host by annotation/label always is. */
    readonly nodeSelector: string;
    /** Live migrations in flight per source host (Nova's own default max_concurrent_live_migrations is 1). */
    readonly maxConcurrentMigrations: number;
    /** Abort a live migration still running after this many seconds. */
    readonly migrationTimeoutSeconds: number;
    /** Attempts per server before its failure becomes a blocker. */
    readonly maxMigrationAttempts: number;
    /** SHUTOFF servers: `block` (default, never touched) or `cold-migrate` (opt-in). */
    readonly shutoffPolicy: (typeof SHUTOFF_POLICIES)[number];
  };
  /** The EventBridge bus outcome events go to (AWS mode). */
  readonly eventBusName: string;
  /** Namespace of drainbridge's own objects in the cluster (the admission Lease). */
  readonly namespace: string;
  /**
   * An evacuation gives up (DeadlineExceeded, safe state kept) this many hours after it started, or at
   * the request's deadline if sooner — counted across every execution that continued it.
   */
  readonly maxEvacuationHours: number;
  /** The KubeVirt branch (lib/kubevirt); it is active wherever KubeVirt serves VirtualMachineInstances. */
  readonly kubevirt: {
    /** Migrations in flight from the node (KubeVirt's parallelOutboundMigrationsPerNode, if lower, wins). */
    readonly maxMigrationsPerNode: number;
    /** Migrations in flight in the cluster, everyone's counted (KubeVirt's parallelMigrationsPerCluster, if lower, wins). */
    readonly maxMigrationsPerCluster: number;
    /** Migrations per VMI before its failure is a blocker. */
    readonly maxAttempts: number;
    /** Seconds before the second attempt, doubling, at most 600. */
    readonly retryBackoffSeconds: number;
    /** Opt-in: restart VMIs that cannot live-migrate, where KubeVirt allows it and their VirtualMachine starts them again. */
    readonly restartUnmigratable: boolean;
  };
  /**
   * Starting in time (a request with notBefore starts at notBefore − estimate − margin;
   * lib/workflow/start-time.ts): the margin, and the estimate's defaults where nothing was observed.
   */
  readonly startTiming: StartTimingConfig;
  /** Maintenance windows the embedded runner schedules (lib/windows/); on AWS, the `maintenanceWindows` param. */
  readonly windows: readonly WindowDefinition[];
}

export interface StartTimingConfig {
  /** Seconds kept in hand between the estimated end of the evacuation and notBefore. */
  readonly marginSeconds: number;
  /** Seconds a replacement pod takes to become Ready (between two waves of evictions under one PDB). */
  readonly podReadySeconds: number;
  /** Seconds one VM (Nova server, KubeVirt VMI) takes to leave, until this cluster has recorded its own. */
  readonly migrationSeconds: number;
}

/** Each environment variable: its default (undefined = optional) and meaning, for validation and docs/configuration.md. */
export const ENV_VARS = {
  DRAINBRIDGE_MODE: { default: 'embedded', help: '`aws` in Lambda (set by serverless.yml), `embedded` elsewhere' },
  DRAINBRIDGE_KUBE_ACCESS: {
    default: 'kubeconfig',
    help: `one of ${KUBE_ACCESS_SOURCES.join(', ')}: \`kubeconfig\` (KUBECONFIG, DRAINBRIDGE_KUBE_CONTEXT); \`in-cluster\` (the pod's ServiceAccount); \`secret\` (a whole kubeconfig in Secrets Manager/SSM: Lambda's way); \`token\` (server, CA, token); \`eks\` (a token presigned with STS from the Lambda role, refreshed every 10 min, no exec plugin: docs/aws.md)`,
  },
  KUBECONFIG: { default: undefined, help: 'kubeconfig file for `kubeconfig` access (default ~/.kube/config)' },
  DRAINBRIDGE_KUBE_CONTEXT: { default: undefined, help: 'kubeconfig context to use (default: the current one)' },
  DRAINBRIDGE_KUBECONFIG_REF: {
    default: undefined,
    help: '`secret` access: ssm:… / secretsmanager:… holding a kubeconfig',
  },
  DRAINBRIDGE_KUBE_SERVER: { default: undefined, help: '`token` / `eks` access: API server URL (https://…)' },
  DRAINBRIDGE_KUBE_CA: {
    default: undefined,
    help: '`token` access: CA bundle, base64 PEM (optional); `eks`: required (certificateAuthority.data)',
  },
  DRAINBRIDGE_KUBE_TOKEN: { default: undefined, help: '`token` access: bearer token or a secret reference to it' },
  DRAINBRIDGE_EKS_CLUSTER: { default: undefined, help: '`eks` access: the EKS cluster name (signed into each token)' },
  DRAINBRIDGE_EKS_REGION: { default: undefined, help: "`eks` access: the cluster's region (default: AWS_REGION)" },
  // Unset: each request's origin decides (docs/drain-defaults.md); set: every request takes it, unless the
  // request itself says otherwise. `drainbridge run`'s drain flags win over these.
  DRAINBRIDGE_DRAIN_FORCE: { default: undefined, help: 'kubectl drain --force (unset: per origin)' },
  DRAINBRIDGE_DRAIN_IGNORE_DAEMONSETS: {
    default: undefined,
    help: 'kubectl drain --ignore-daemonsets (unset: per origin, true for every origin)',
  },
  DRAINBRIDGE_DRAIN_DELETE_EMPTYDIR_DATA: {
    default: undefined,
    help: 'kubectl drain --delete-emptydir-data (unset: per origin)',
  },
  DRAINBRIDGE_DRAIN_GRACE_PERIOD: {
    default: undefined,
    help: "kubectl drain --grace-period (unset: -1, each pod's own)",
  },
  DRAINBRIDGE_DRAIN_TIMEOUT: {
    default: undefined,
    help: 'kubectl drain --timeout in seconds (unset: 0, no limit but the request deadline)',
  },
  DRAINBRIDGE_DRAIN_POD_SELECTOR: { default: undefined, help: 'kubectl drain --pod-selector (unset: every pod)' },
  DRAINBRIDGE_DRAIN_DISABLE_EVICTION: {
    default: undefined,
    help: 'kubectl drain --disable-eviction (deletes; bypasses PDBs; unset: false)',
  },
  DRAINBRIDGE_DRAIN_SKIP_WAIT_FOR_DELETE_TIMEOUT: {
    default: undefined,
    help: 'kubectl drain --skip-wait-for-delete-timeout in seconds (unset: 0)',
  },
  DRAINBRIDGE_DRAIN_CHUNK_SIZE: { default: undefined, help: 'kubectl drain --chunk-size (unset: 500)' },
  DRAINBRIDGE_MAX_HELD_NODES: {
    default: '1',
    help: 'nodes drainbridge may hold (cordon/drain) at once; more requests wait, oldest first',
  },
  DRAINBRIDGE_SLOT_LIMITS: {
    default: '',
    help: 'extra limits by node label selector, `;`-separated SELECTOR=MAX, e.g. `topology.kubernetes.io/zone=zone-a=1` (at most one node of zone-a at a time)',
  },
  DRAINBRIDGE_INFRA_POD_SELECTOR: {
    default: '',
    help: 'pods (nova-compute, libvirt, agents not run as DaemonSets) evicted only after the VM branches finished',
  },
  DRAINBRIDGE_TOMBSTONE_TTL_HOURS: {
    default: '24',
    help: 'how long a released request is remembered, so a late duplicate does not cordon again',
  },
  DRAINBRIDGE_RECORD_TTL_HOURS: {
    default: '24',
    help: 'how long an Evacuation record is kept after its request was restored; then the next Restore or admission deletes it (1–2160; docs/how-it-works.md)',
  },
  DRAINBRIDGE_COMPAT_TAINTS: {
    default: '',
    help: `also set these taints while held, comma-separated, from ${COMPATIBILITY_TAINTS.join(', ')} (none by default: a custom taint would keep DaemonSet pods such as CNI agents from coming back; a NodeMaintenance's request sets medik8s.io/drain regardless, as node-maintenance-operator does — docs/nodemaintenance.md)`,
  },
  DRAINBRIDGE_NOVA: {
    default: 'false',
    help: 'evacuate Nova servers (credentials: OS_* / OS_CLOUD; docs/nova.md)',
  },
  DRAINBRIDGE_NOVA_HOST_RULE: { default: 'node-name', help: 'node → Nova host mapping (see lib/nova/host-mapping.ts)' },
  DRAINBRIDGE_NOVA_NODE_SELECTOR: {
    default: '',
    help: 'label selector of the nodes that are Nova hosts (empty: every node), e.g. openstack-compute-node=enabled; a node naming its host with the drainbridge.io/nova-host annotation or label always is, and a Nova host without a nova-compute service fails the evacuation',
  },
  DRAINBRIDGE_NOVA_MAX_CONCURRENT_MIGRATIONS: {
    default: '1',
    help: "live migrations in flight per source host (1, Nova's own default)",
  },
  DRAINBRIDGE_NOVA_MIGRATION_TIMEOUT: {
    default: '1800',
    help: 'seconds before a running migration is aborted; a server still migrating at twice this is a blocker',
  },
  DRAINBRIDGE_NOVA_MAX_MIGRATION_ATTEMPTS: { default: '3', help: 'attempts per server' },
  DRAINBRIDGE_NOVA_SHUTOFF_POLICY: { default: 'block', help: '`block` or `cold-migrate` for SHUTOFF servers' },
  DRAINBRIDGE_EVENT_BUS: { default: 'drainbridge', help: 'the EventBridge bus for outcome events (AWS)' },
  DRAINBRIDGE_NAMESPACE: {
    default: 'drainbridge',
    help: "namespace for drainbridge's Lease (admission mutex and queue); `drainbridge check` says when it is missing",
  },
  DRAINBRIDGE_MAX_EVACUATION_HOURS: {
    default: '24',
    help: `an evacuation fails (safe state kept) this long after it started, or at the request's deadline if sooner (1–${MAX_EVACUATION_HOURS_LIMIT}; counted across continued executions; a maintenance announced days ahead waits for notBefore first). No history workaround: an execution nearing Step Functions' 25,000 events continues as new`,
  },
  DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS_PER_NODE: {
    default: '2',
    help: "KubeVirt live migrations in flight from the node (KubeVirt's parallelOutboundMigrationsPerNode, if lower, wins)",
  },
  DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS: {
    default: '5',
    help: "KubeVirt live migrations in flight in the cluster, everyone's counted (KubeVirt's parallelMigrationsPerCluster, if lower, wins)",
  },
  DRAINBRIDGE_KUBEVIRT_MAX_MIGRATION_ATTEMPTS: {
    default: '3',
    help: 'migrations per VMI before its failure is a `MigrationFailed` blocker',
  },
  DRAINBRIDGE_KUBEVIRT_RETRY_BACKOFF: {
    default: '30',
    help: 'seconds before a failed VMI migration is tried again (doubling, at most 600)',
  },
  DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE: {
    default: 'false',
    help: 'opt-in (also --kubevirt-restart-unmigratable): restart VMIs that cannot live-migrate (None, or LiveMigrateIfPossible not migratable) on another node by evicting their launcher pod, only when their VirtualMachine runs them always; off, they are blockers and never shut down',
  },
  DRAINBRIDGE_MAINTENANCE_WINDOWS: {
    default: '',
    help: 'maintenance windows `drainbridge run` schedules: a JSON list of {name, schedule, timezone, durationMinutes, nodeSelector, maxNodes, endsOn} (docs/windows.md); on AWS the maintenanceWindows param',
  },
  DRAINBRIDGE_START_MARGIN_SECONDS: {
    default: '300',
    help: 'a request with notBefore starts its evacuation this long before notBefore, on top of the estimated evacuation time (docs/notices.md, "Starting in time")',
  },
  DRAINBRIDGE_POD_READY_SECONDS: {
    default: '30',
    help: 'estimate: seconds a replacement pod takes to become Ready (per wave of evictions a PodDisruptionBudget allows)',
  },
  DRAINBRIDGE_MIGRATION_SECONDS: {
    default: '300',
    help: 'estimate: seconds per VM (Nova server, KubeVirt VMI) until evacuations on this cluster have recorded their own',
  },
} as const satisfies Record<string, { default: string | undefined; help: string }>;

/** Variables whose values are secrets (never echoed back in errors). */
export const SECRET_ENV_VARS: ReadonlySet<string> = new Set(['DRAINBRIDGE_KUBE_TOKEN', 'DRAINBRIDGE_KUBECONFIG_REF']);

export const EnvSchema = z.object({
  DRAINBRIDGE_MODE: z.enum(['aws', 'embedded'], { error: 'must be aws or embedded' }),
  DRAINBRIDGE_KUBE_ACCESS: z.enum(KUBE_ACCESS_SOURCES, { error: `must be one of ${KUBE_ACCESS_SOURCES.join(', ')}` }),
  KUBECONFIG: z.string().optional(),
  DRAINBRIDGE_KUBE_CONTEXT: z.string().optional(),
  DRAINBRIDGE_KUBECONFIG_REF: z.string().optional(),
  DRAINBRIDGE_KUBE_SERVER: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  DRAINBRIDGE_KUBE_CA: z.base64({ error: 'must be base64 (a PEM bundle, base64-encoded)' }).optional(),
  DRAINBRIDGE_KUBE_TOKEN: z.string().optional(),
  DRAINBRIDGE_EKS_CLUSTER: z
    .string()
    .regex(/^[0-9A-Za-z][A-Za-z0-9_-]*$/, 'must be an EKS cluster name (letters, digits, - and _)')
    .max(100)
    .optional(),
  DRAINBRIDGE_EKS_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as eu-west-1')
    .optional(),
  DRAINBRIDGE_DRAIN_FORCE: bool.optional(),
  DRAINBRIDGE_DRAIN_IGNORE_DAEMONSETS: bool.optional(),
  DRAINBRIDGE_DRAIN_DELETE_EMPTYDIR_DATA: bool.optional(),
  DRAINBRIDGE_DRAIN_GRACE_PERIOD: int(-1, 86_400).optional(),
  DRAINBRIDGE_DRAIN_TIMEOUT: int(0, 7 * 86_400).optional(),
  DRAINBRIDGE_DRAIN_POD_SELECTOR: selector.optional(),
  DRAINBRIDGE_DRAIN_DISABLE_EVICTION: bool.optional(),
  DRAINBRIDGE_DRAIN_SKIP_WAIT_FOR_DELETE_TIMEOUT: int(0, 86_400).optional(),
  DRAINBRIDGE_DRAIN_CHUNK_SIZE: int(1, 10_000).optional(),
  DRAINBRIDGE_MAX_HELD_NODES: int(1, 10_000),
  DRAINBRIDGE_SLOT_LIMITS: z
    .string()
    .transform((text) =>
      text
        .split(';')
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(slotLimit)),
  DRAINBRIDGE_INFRA_POD_SELECTOR: selector,
  DRAINBRIDGE_TOMBSTONE_TTL_HOURS: int(24, 24 * 90),
  DRAINBRIDGE_RECORD_TTL_HOURS: int(1, 24 * 90),
  DRAINBRIDGE_COMPAT_TAINTS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(COMPATIBILITY_TAINTS, { error: `each must be one of ${COMPATIBILITY_TAINTS.join(', ')}` }))),
  DRAINBRIDGE_NOVA: bool,
  DRAINBRIDGE_NOVA_HOST_RULE: z
    .string()
    .min(1, 'must not be empty')
    .superRefine((text, ctx) => {
      const parsed = novaHostRuleTextSchema.safeParse(text);
      if (!parsed.success)
        ctx.addIssue({ code: 'custom', message: parsed.error.issues.map((i) => i.message).join('; ') });
    }),
  DRAINBRIDGE_NOVA_NODE_SELECTOR: selector,
  DRAINBRIDGE_NOVA_MAX_CONCURRENT_MIGRATIONS: int(1, 100),
  DRAINBRIDGE_NOVA_MIGRATION_TIMEOUT: int(30, 86_400),
  DRAINBRIDGE_NOVA_MAX_MIGRATION_ATTEMPTS: int(1, 20),
  DRAINBRIDGE_NOVA_SHUTOFF_POLICY: z.enum(SHUTOFF_POLICIES, { error: 'must be block or cold-migrate' }),
  DRAINBRIDGE_EVENT_BUS: z.string().min(1).max(256),
  DRAINBRIDGE_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a valid namespace name')
    .max(63),
  DRAINBRIDGE_MAX_EVACUATION_HOURS: int(1, MAX_EVACUATION_HOURS_LIMIT),
  DRAINBRIDGE_MAINTENANCE_WINDOWS: z.string(),
  DRAINBRIDGE_START_MARGIN_SECONDS: int(0, 7 * 86_400),
  DRAINBRIDGE_POD_READY_SECONDS: int(0, 86_400),
  DRAINBRIDGE_MIGRATION_SECONDS: int(1, 86_400),
  DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS_PER_NODE: int(1, 100),
  DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS: int(1, 1000),
  DRAINBRIDGE_KUBEVIRT_MAX_MIGRATION_ATTEMPTS: int(1, 20),
  DRAINBRIDGE_KUBEVIRT_RETRY_BACKOFF: int(1, 600),
  DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE: bool,
});
export type Env = z.infer<typeof EnvSchema>;
