/**
 * drainbridge's configuration: one validated object, read from the environment (on AWS the
 * environment may hold SSM / Secrets Manager references instead of secrets; see lib/secrets/secret-refs.ts).
 * Each setting is declared once in WORKFLOW_SETTINGS (lib/settings/setting.ts): its variable, parser,
 * default, help and readers; the validation, the typed Config and docs/configuration.md derive from it.
 */
import { z } from 'zod';
import { selector, selectorText } from '../clients/kube/selector-settings.ts';
import { parseSelector } from '../clients/kube/selectors.ts';
import { type NovaHostRule, novaHostRuleTextSchema } from '../model/nova-host.ts';
import type { DrainOptions } from '../model/request.ts';
import { bool, commaList, integer } from '../settings/parsers.ts';
import { type SettingReader, setting, settingsOf, type ValuesOf } from '../settings/setting.ts';
import type { WindowDefinition } from '../sources/windows/definition.ts';
import { breakerText } from './breaker.ts';
import { gatesText } from './gates.ts';
import { minSchedulableText, spreadLimitsText } from './spread-limits.ts';

/** `SELECTOR=MAX`: the last `=` separates the limit (selectors contain `=` themselves). */
const slotLimit = z.string().transform((text, ctx) => {
  const at = text.lastIndexOf('=');
  const selectorPart = text.slice(0, at).trim();
  const max = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isInteger(max) || max < 1) {
    ctx.addIssue({ code: 'custom', message: `"${text}" must be SELECTOR=MAX with MAX a whole number ≥ 1` });
    return z.NEVER;
  }
  try {
    parseSelector(selectorPart);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `"${selectorPart}" is not a valid label selector (${(error as Error).message})`,
    });
    return z.NEVER;
  }
  return { selector: selectorPart, max };
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
 * execution of the same request (state-machines/evacuate.asl.yml), so an evacuation may run as long as its
 * VMs need. A maintenance announced days ahead waits for its `notBefore` before this time counts.
 */
export const MAX_EVACUATION_HOURS_LIMIT = 720;

export const SHUTOFF_POLICIES = ['block', 'cold-migrate'] as const;
export const COMPATIBILITY_TAINTS = ['medik8s.io/drain', 'kubevirt.io/drain'] as const;

/** DRAINBRIDGE_NOVA_HOST_RULE's text → its rules, parsed once here (lib/model/nova-host.ts's one-line form). */
const novaHostRules = z
  .string()
  .min(1, 'must not be empty')
  .transform((text, ctx): NovaHostRule[] => {
    const parsed = novaHostRuleTextSchema.safeParse(text);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message: parsed.error.issues.map((i) => i.message).join('; ') });
    return z.NEVER;
  });

/** lib/config's settings are read by every process (each loads the whole configuration at start). */
const EVERY_PROCESS: readonly SettingReader[] = ['functions', 'cli', 'run', 'forwarder', 'node-agent'];

/**
 * Every setting of the workflow's configuration, declared once, grouped as the typed object (Config) is.
 * docs/configuration.md renders this list (scripts/gen-config-doc.ts).
 */
export const WORKFLOW_SETTINGS = {
  mode: setting({
    env: 'DRAINBRIDGE_MODE',
    parse: z.enum(['aws', 'embedded'], { error: 'must be aws or embedded' }),
    default: 'embedded',
    help: '`aws` in Lambda (set by serverless.yml), `embedded` elsewhere',
    readBy: EVERY_PROCESS,
  }),
  kubeAccess: {
    source: setting({
      env: 'DRAINBRIDGE_KUBE_ACCESS',
      parse: z.enum(KUBE_ACCESS_SOURCES, { error: `must be one of ${KUBE_ACCESS_SOURCES.join(', ')}` }),
      default: 'kubeconfig',
      help: `one of ${KUBE_ACCESS_SOURCES.join(', ')}: \`kubeconfig\` (KUBECONFIG, DRAINBRIDGE_KUBE_CONTEXT); \`in-cluster\` (the pod's ServiceAccount); \`secret\` (a whole kubeconfig in Secrets Manager/SSM: Lambda's way); \`token\` (server, CA, token); \`eks\` (a token presigned with STS from the Lambda role, refreshed every 10 min, no exec plugin: docs/aws.md)`,
      readBy: EVERY_PROCESS,
    }),
    kubeconfig: setting({
      env: 'KUBECONFIG',
      parse: z.string().optional(),
      default: undefined,
      help: 'kubeconfig file for `kubeconfig` access (default ~/.kube/config)',
      readBy: EVERY_PROCESS,
    }),
    context: setting({
      env: 'DRAINBRIDGE_KUBE_CONTEXT',
      parse: z.string().optional(),
      default: undefined,
      help: 'kubeconfig context to use (default: the current one)',
      readBy: EVERY_PROCESS,
    }),
    kubeconfigRef: setting({
      env: 'DRAINBRIDGE_KUBECONFIG_REF',
      secret: true,
      parse: z.string().optional(),
      default: undefined,
      help: '`secret` access: ssm:… / secretsmanager:… holding a kubeconfig',
      readBy: EVERY_PROCESS,
    }),
    server: setting({
      env: 'DRAINBRIDGE_KUBE_SERVER',
      parse: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
      default: undefined,
      help: '`token` / `eks` access: API server URL (https://…)',
      readBy: EVERY_PROCESS,
    }),
    caData: setting({
      env: 'DRAINBRIDGE_KUBE_CA',
      parse: z.base64({ error: 'must be base64 (a PEM bundle, base64-encoded)' }).optional(),
      default: undefined,
      help: '`token` access: CA bundle, base64 PEM (optional); `eks`: required (certificateAuthority.data)',
      readBy: EVERY_PROCESS,
    }),
    token: setting({
      env: 'DRAINBRIDGE_KUBE_TOKEN',
      secret: true,
      parse: z.string().optional(),
      default: undefined,
      help: '`token` access: bearer token or a secret reference to it',
      readBy: EVERY_PROCESS,
    }),
    eksCluster: setting({
      env: 'DRAINBRIDGE_EKS_CLUSTER',
      parse: z
        .string()
        .regex(/^[0-9A-Za-z][A-Za-z0-9_-]*$/, 'must be an EKS cluster name (letters, digits, - and _)')
        .max(100)
        .optional(),
      default: undefined,
      help: '`eks` access: the EKS cluster name (signed into each token)',
      readBy: EVERY_PROCESS,
    }),
    eksRegion: setting({
      env: 'DRAINBRIDGE_EKS_REGION',
      parse: z
        .string()
        .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as eu-west-1')
        .optional(),
      default: undefined,
      help: "`eks` access: the cluster's region (default: AWS_REGION)",
      readBy: EVERY_PROCESS,
    }),
  },
  // Unset: each request's origin decides (docs/drain-defaults.md); set: every request takes it, unless the
  // request itself says otherwise. `drainbridge run`'s drain flags win over these. Named as DrainOptions' fields.
  drain: {
    force: setting({
      env: 'DRAINBRIDGE_DRAIN_FORCE',
      parse: bool.optional(),
      default: undefined,
      help: 'kubectl drain --force (unset: per origin)',
      readBy: EVERY_PROCESS,
    }),
    ignoreDaemonSets: setting({
      env: 'DRAINBRIDGE_DRAIN_IGNORE_DAEMONSETS',
      parse: bool.optional(),
      default: undefined,
      help: 'kubectl drain --ignore-daemonsets (unset: per origin, true for every origin)',
      readBy: EVERY_PROCESS,
    }),
    deleteEmptyDirData: setting({
      env: 'DRAINBRIDGE_DRAIN_DELETE_EMPTYDIR_DATA',
      parse: bool.optional(),
      default: undefined,
      help: 'kubectl drain --delete-emptydir-data (unset: per origin)',
      readBy: EVERY_PROCESS,
    }),
    gracePeriodSeconds: setting({
      env: 'DRAINBRIDGE_DRAIN_GRACE_PERIOD',
      parse: integer(-1, 86_400).optional(),
      default: undefined,
      help: "kubectl drain --grace-period (unset: -1, each pod's own)",
      readBy: EVERY_PROCESS,
    }),
    timeoutSeconds: setting({
      env: 'DRAINBRIDGE_DRAIN_TIMEOUT',
      parse: integer(0, 7 * 86_400).optional(),
      default: undefined,
      help: 'kubectl drain --timeout in seconds (unset: 0, no limit but the request deadline)',
      readBy: EVERY_PROCESS,
    }),
    podSelector: setting({
      env: 'DRAINBRIDGE_DRAIN_POD_SELECTOR',
      parse: selectorText.optional(),
      default: undefined,
      help: 'kubectl drain --pod-selector (unset: every pod)',
      readBy: EVERY_PROCESS,
    }),
    disableEviction: setting({
      env: 'DRAINBRIDGE_DRAIN_DISABLE_EVICTION',
      parse: bool.optional(),
      default: undefined,
      help: 'kubectl drain --disable-eviction (deletes; bypasses PDBs; unset: false)',
      readBy: EVERY_PROCESS,
    }),
    skipWaitForDeleteTimeoutSeconds: setting({
      env: 'DRAINBRIDGE_DRAIN_SKIP_WAIT_FOR_DELETE_TIMEOUT',
      parse: integer(0, 86_400).optional(),
      default: undefined,
      help: 'kubectl drain --skip-wait-for-delete-timeout in seconds (unset: 0)',
      readBy: EVERY_PROCESS,
    }),
    chunkSize: setting({
      env: 'DRAINBRIDGE_DRAIN_CHUNK_SIZE',
      parse: integer(1, 10_000).optional(),
      default: undefined,
      help: 'kubectl drain --chunk-size (unset: 500)',
      readBy: EVERY_PROCESS,
    }),
  },
  maxHeldNodes: setting({
    env: 'DRAINBRIDGE_MAX_HELD_NODES',
    parse: integer(1, 10_000),
    default: '1',
    help: 'nodes drainbridge may hold (cordon/drain) at once; more requests wait, oldest first',
    readBy: EVERY_PROCESS,
  }),
  slotLimits: setting({
    env: 'DRAINBRIDGE_SLOT_LIMITS',
    parse: z
      .string()
      .transform((text) =>
        text
          .split(';')
          .map((part) => part.trim())
          .filter(Boolean),
      )
      .pipe(z.array(slotLimit)),
    default: '',
    help: 'extra limits by node label selector, `;`-separated SELECTOR=MAX, e.g. `topology.kubernetes.io/zone=zone-a=1` (at most one node of zone-a at a time)',
    readBy: EVERY_PROCESS,
  }),
  spreadLimits: setting({
    env: 'DRAINBRIDGE_SPREAD_LIMITS',
    parse: spreadLimitsText,
    default: '',
    help: 'limits per value of a node label key, `;`-separated LABEL_KEY=MAX, e.g. `topology.kubernetes.io/zone=1` (at most one node per zone at a time, for every zone); nodes without the key are not limited by it',
    readBy: EVERY_PROCESS,
  }),
  minSchedulable: setting({
    env: 'DRAINBRIDGE_MIN_SCHEDULABLE',
    parse: minSchedulableText,
    default: '',
    help: 'pools that keep schedulable (not cordoned, Ready) nodes, `;`-separated SELECTOR=MIN, e.g. `node-role.kubernetes.io/worker=2` (a request waits rather than leave fewer than 2 workers schedulable)',
    readBy: EVERY_PROCESS,
  }),
  breaker: setting({
    env: 'DRAINBRIDGE_BREAKER',
    parse: breakerText,
    default: 'off',
    help: 'the circuit breaker, FAILURES/WINDOW, e.g. `3/1h`: after 3 evacuations failed (or reached their deadline) within an hour admission pauses until `drainbridge resume`; running evacuations go on, waiting requests keep their place. `off` (the default) never pauses',
    readBy: EVERY_PROCESS,
  }),
  gates: setting({
    env: 'DRAINBRIDGE_GATES',
    parse: gatesText,
    default: '',
    help: 'health gates asked before a node is admitted, a YAML/JSON list, e.g. `[{kind: prometheus-alerts, url: "http://prometheus:9090"}]`; kinds prometheus-alerts, alertmanager, promql, not-ready-nodes, pdbs-at-zero, failure-domain, http; a closed gate, or one not answering in its timeout, keeps the request in line (docs/safety.md)',
    readBy: EVERY_PROCESS,
  }),
  infraPodSelector: setting({
    env: 'DRAINBRIDGE_INFRA_POD_SELECTOR',
    parse: selectorText,
    default: '',
    help: 'pods (nova-compute, libvirt, agents not run as DaemonSets) evicted only after the VM branches finished',
    readBy: EVERY_PROCESS,
  }),
  tombstoneTtlHours: setting({
    env: 'DRAINBRIDGE_TOMBSTONE_TTL_HOURS',
    parse: integer(24, 24 * 90),
    default: '24',
    help: 'how long a released request is remembered, so a late duplicate does not cordon again',
    readBy: EVERY_PROCESS,
  }),
  recordTtlHours: setting({
    env: 'DRAINBRIDGE_RECORD_TTL_HOURS',
    parse: integer(1, 24 * 90),
    default: '24',
    help: 'how long an Evacuation record is kept after its request was restored; then the next Restore or admission deletes it (1–2160; docs/how-it-works.md)',
    readBy: EVERY_PROCESS,
  }),
  compatibilityTaints: setting({
    env: 'DRAINBRIDGE_COMPAT_TAINTS',
    parse: commaList.pipe(
      z.array(z.enum(COMPATIBILITY_TAINTS, { error: `each must be one of ${COMPATIBILITY_TAINTS.join(', ')}` })),
    ),
    default: '',
    help: `also set these taints while held, comma-separated, from ${COMPATIBILITY_TAINTS.join(', ')} (none by default: a custom taint would keep DaemonSet pods such as CNI agents from coming back; a NodeMaintenance's request sets medik8s.io/drain regardless, as node-maintenance-operator does — docs/nodemaintenance.md)`,
    readBy: EVERY_PROCESS,
  }),
  nova: {
    enabled: setting({
      env: 'DRAINBRIDGE_NOVA',
      parse: bool,
      default: 'false',
      help: 'evacuate Nova servers (credentials: OS_* / OS_CLOUD; docs/nova.md)',
      readBy: EVERY_PROCESS,
    }),
    /** How a node maps to its Nova host, parsed here once (lib/model/nova-host.ts); none: the node name. */
    hostRules: setting({
      env: 'DRAINBRIDGE_NOVA_HOST_RULE',
      parse: novaHostRules,
      default: 'node-name',
      help: 'node → Nova host mapping (see lib/model/nova-host.ts)',
      readBy: EVERY_PROCESS,
    }),
    /** Which nodes are Nova hosts, parsed here once (no requirement: every node). */
    nodeSelector: setting({
      env: 'DRAINBRIDGE_NOVA_NODE_SELECTOR',
      parse: selector,
      default: '',
      help: 'label selector of the nodes that are Nova hosts (empty: every node), e.g. openstack-compute-node=enabled; a node naming its host with the drainbridge.io/nova-host annotation or label always is, and a Nova host without a nova-compute service fails the evacuation',
      readBy: EVERY_PROCESS,
    }),
    maxConcurrentMigrations: setting({
      env: 'DRAINBRIDGE_NOVA_MAX_CONCURRENT_MIGRATIONS',
      parse: integer(1, 100),
      default: '1',
      help: "live migrations in flight per source host (1, Nova's own default)",
      readBy: EVERY_PROCESS,
    }),
    migrationTimeoutSeconds: setting({
      env: 'DRAINBRIDGE_NOVA_MIGRATION_TIMEOUT',
      parse: integer(30, 86_400),
      default: '1800',
      help: 'seconds before a running migration is aborted; a server still migrating at twice this is a blocker',
      readBy: EVERY_PROCESS,
    }),
    maxMigrationAttempts: setting({
      env: 'DRAINBRIDGE_NOVA_MAX_MIGRATION_ATTEMPTS',
      parse: integer(1, 20),
      default: '3',
      help: 'attempts per server',
      readBy: EVERY_PROCESS,
    }),
    shutoffPolicy: setting({
      env: 'DRAINBRIDGE_NOVA_SHUTOFF_POLICY',
      parse: z.enum(SHUTOFF_POLICIES, { error: 'must be block or cold-migrate' }),
      default: 'block',
      help: '`block` or `cold-migrate` for SHUTOFF servers',
      readBy: EVERY_PROCESS,
    }),
  },
  eventBusName: setting({
    env: 'DRAINBRIDGE_EVENT_BUS',
    parse: z.string().min(1).max(256),
    default: 'drainbridge',
    help: 'the EventBridge bus for outcome events (AWS)',
    readBy: EVERY_PROCESS,
    flag: { name: 'event-bus', value: 'NAME', commands: ['forwarder'] },
  }),
  namespace: setting({
    env: 'DRAINBRIDGE_NAMESPACE',
    parse: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a valid namespace name')
      .max(63),
    default: 'drainbridge',
    help: "namespace for drainbridge's Lease (admission mutex and queue); `drainbridge check` says when it is missing",
    readBy: EVERY_PROCESS,
  }),
  maxEvacuationHours: setting({
    env: 'DRAINBRIDGE_MAX_EVACUATION_HOURS',
    parse: integer(1, MAX_EVACUATION_HOURS_LIMIT),
    default: '24',
    help: `an evacuation fails (safe state kept) this long after it started, or at the request's deadline if sooner (1–${MAX_EVACUATION_HOURS_LIMIT}; counted across continued executions; a maintenance announced days ahead waits for notBefore first). No history workaround: an execution nearing Step Functions' 25,000 events continues as new`,
    readBy: EVERY_PROCESS,
  }),
  kubevirt: {
    maxMigrationsPerNode: setting({
      env: 'DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS_PER_NODE',
      parse: integer(1, 100),
      default: '2',
      help: "KubeVirt live migrations in flight from the node (KubeVirt's parallelOutboundMigrationsPerNode, if lower, wins)",
      readBy: EVERY_PROCESS,
    }),
    maxMigrationsPerCluster: setting({
      env: 'DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS',
      parse: integer(1, 1000),
      default: '5',
      help: "KubeVirt live migrations in flight in the cluster, everyone's counted (KubeVirt's parallelMigrationsPerCluster, if lower, wins)",
      readBy: EVERY_PROCESS,
    }),
    maxAttempts: setting({
      env: 'DRAINBRIDGE_KUBEVIRT_MAX_MIGRATION_ATTEMPTS',
      parse: integer(1, 20),
      default: '3',
      help: 'migrations per VMI before its failure is a `MigrationFailed` blocker',
      readBy: EVERY_PROCESS,
    }),
    retryBackoffSeconds: setting({
      env: 'DRAINBRIDGE_KUBEVIRT_RETRY_BACKOFF',
      parse: integer(1, 600),
      default: '30',
      help: 'seconds before a failed VMI migration is tried again (doubling, at most 600)',
      readBy: EVERY_PROCESS,
    }),
    restartUnmigratable: setting({
      env: 'DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE',
      parse: bool,
      default: 'false',
      help: 'opt-in (also --kubevirt-restart-unmigratable): restart VMIs that cannot live-migrate (None, or LiveMigrateIfPossible not migratable) on another node by evicting their launcher pod, only when their VirtualMachine runs them always; off, they are blockers and never shut down',
      readBy: EVERY_PROCESS,
    }),
  },
  maintenanceWindows: setting({
    env: 'DRAINBRIDGE_MAINTENANCE_WINDOWS',
    parse: z.string(),
    default: '',
    help: 'maintenance windows `drainbridge run` schedules: a JSON list of {name, schedule, timezone, durationMinutes, nodeSelector, maxNodes, endsOn} (docs/windows.md); on AWS the maintenanceWindows param',
    readBy: EVERY_PROCESS,
  }),
  startTiming: {
    marginSeconds: setting({
      env: 'DRAINBRIDGE_START_MARGIN_SECONDS',
      parse: integer(0, 7 * 86_400),
      default: '300',
      help: 'a request with notBefore starts its evacuation this long before notBefore, on top of the estimated evacuation time (docs/notices.md, "Starting in time")',
      readBy: EVERY_PROCESS,
    }),
    noticeRestoreGapSeconds: setting({
      env: 'DRAINBRIDGE_NOTICE_RESTORE_GAP_SECONDS',
      parse: integer(0, 90 * 86_400),
      default: '0',
      help: 'a cloud notice moved later after its node was drained: when the new start is more than this many seconds away, restore the node (only what drainbridge changed) and evacuate it again before the new start; 0 keeps it drained until the maintenance ends (docs/notices.md, "Rescheduled notices")',
      readBy: EVERY_PROCESS,
    }),
    podReadySeconds: setting({
      env: 'DRAINBRIDGE_POD_READY_SECONDS',
      parse: integer(0, 86_400),
      default: '30',
      help: 'estimate: seconds a replacement pod takes to become Ready (per wave of evictions a PodDisruptionBudget allows)',
      readBy: EVERY_PROCESS,
    }),
    migrationSeconds: setting({
      env: 'DRAINBRIDGE_MIGRATION_SECONDS',
      parse: integer(1, 86_400),
      default: '300',
      help: 'estimate: seconds per VM (Nova server, KubeVirt VMI) until evacuations on this cluster have recorded their own',
      readBy: EVERY_PROCESS,
    }),
  },
};

/** Every variable of the workflow's configuration. */
export const WORKFLOW_ENV_VARS: readonly string[] = settingsOf(WORKFLOW_SETTINGS).map((s) => s.env);

type DeclaredConfig = ValuesOf<typeof WORKFLOW_SETTINGS>;

/**
 * drainbridge's configuration: the declared settings' values, except those combined into one value
 * (Kubernetes access, the drain defaults the operator set, the maintenance windows).
 */
export type Config = Omit<DeclaredConfig, 'kubeAccess' | 'drain' | 'maintenanceWindows'> & {
  readonly kube: KubeAccess;
  /**
   * The drain options the operator set for every request (`drainbridge run`'s drain flags over the
   * DRAINBRIDGE_DRAIN_* variables that are set). An option left out follows the request's origin
   * (lib/model/drain-defaults.ts); a request's own `drain` wins over these.
   */
  readonly drainDefaults: Partial<DrainOptions>;
  /** Maintenance windows the embedded runner schedules (lib/sources/windows/); on AWS, the `maintenanceWindows` param. */
  readonly windows: readonly WindowDefinition[];
};

/**
 * Starting in time (a request with notBefore starts at notBefore − estimate − margin;
 * lib/workflow/start-time.ts): the margin, and the estimate's defaults where nothing was observed.
 */
export type StartTimingConfig = Config['startTiming'];
