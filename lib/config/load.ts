/**
 * Builds the Config from the environment. Fails at start with every problem listed at once;
 * values of secret variables are never echoed back.
 */
import type { DrainOptions } from '../domain/request.ts';
import { ConfigError, type FieldProblem } from '../errors/index.ts';
import { problemsOf, safeParseReporting } from '../events/parse.ts';
import { parseWindows, type WindowDefinition } from '../windows/definition.ts';
import { type Config, ENV_VARS, type Env, EnvSchema, type KubeAccess, SECRET_ENV_VARS } from './schema.ts';

type Environment = Readonly<Record<string, string | undefined>>;

function withDefaults(env: Environment): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, spec] of Object.entries(ENV_VARS)) {
    const given = env[name];
    out[name] = given !== undefined && given !== '' ? given : spec.default;
  }
  return out;
}

function requireVars(env: Env, names: readonly (keyof Env)[], problems: FieldProblem[]): void {
  for (const name of names) {
    if (!env[name])
      problems.push({ path: name, message: `is required when DRAINBRIDGE_KUBE_ACCESS=${env.DRAINBRIDGE_KUBE_ACCESS}` });
  }
}

/**
 * `eks` access: cluster, endpoint and CA are required; the region defaults to Lambda's AWS_REGION,
 * which the environment schema does not list (it is the runtime's, not drainbridge's).
 */
function eksAccessOf(env: Env, runtimeRegion: string | undefined, problems: FieldProblem[]): KubeAccess {
  requireVars(env, ['DRAINBRIDGE_EKS_CLUSTER', 'DRAINBRIDGE_KUBE_SERVER', 'DRAINBRIDGE_KUBE_CA'], problems);
  if (env.DRAINBRIDGE_KUBE_SERVER && !env.DRAINBRIDGE_KUBE_SERVER.startsWith('https://')) {
    // The token is a credential for 15 minutes: it only ever travels over TLS.
    problems.push({
      path: 'DRAINBRIDGE_KUBE_SERVER',
      message: 'must be an https:// URL with DRAINBRIDGE_KUBE_ACCESS=eks',
    });
  }
  const region = env.DRAINBRIDGE_EKS_REGION ?? runtimeRegion ?? '';
  if (!region) {
    problems.push({
      path: 'DRAINBRIDGE_EKS_REGION',
      message: 'is required when DRAINBRIDGE_KUBE_ACCESS=eks and AWS_REGION is unset',
    });
  }
  return {
    source: 'eks',
    clusterName: env.DRAINBRIDGE_EKS_CLUSTER ?? '',
    region,
    server: env.DRAINBRIDGE_KUBE_SERVER ?? '',
    caData: env.DRAINBRIDGE_KUBE_CA ?? '',
  };
}

function kubeAccessOf(env: Env, problems: FieldProblem[]): KubeAccess {
  const context = env.DRAINBRIDGE_KUBE_CONTEXT ? { context: env.DRAINBRIDGE_KUBE_CONTEXT } : {};
  switch (env.DRAINBRIDGE_KUBE_ACCESS) {
    case 'in-cluster':
      return { source: 'in-cluster' };
    case 'secret':
      requireVars(env, ['DRAINBRIDGE_KUBECONFIG_REF'], problems);
      return { source: 'secret', kubeconfigRef: env.DRAINBRIDGE_KUBECONFIG_REF ?? '', ...context };
    case 'token': {
      requireVars(env, ['DRAINBRIDGE_KUBE_SERVER', 'DRAINBRIDGE_KUBE_TOKEN'], problems);
      const ca = env.DRAINBRIDGE_KUBE_CA ? { caData: env.DRAINBRIDGE_KUBE_CA } : {};
      return {
        source: 'token',
        server: env.DRAINBRIDGE_KUBE_SERVER ?? '',
        token: env.DRAINBRIDGE_KUBE_TOKEN ?? '',
        ...ca,
      };
    }
    default:
      return { source: 'kubeconfig', ...(env.KUBECONFIG ? { path: env.KUBECONFIG } : {}), ...context };
  }
}

function crossFieldProblems(env: Env): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (env.DRAINBRIDGE_MODE === 'aws' && env.DRAINBRIDGE_KUBE_ACCESS === 'kubeconfig') {
    problems.push({
      path: 'DRAINBRIDGE_KUBE_ACCESS',
      message:
        'kubeconfig files are not available in Lambda; use secret (a kubeconfig in Secrets Manager), token, or eks (a token presigned with the function role)',
    });
  }
  if (env.DRAINBRIDGE_MODE === 'aws' && env.DRAINBRIDGE_KUBE_ACCESS === 'token' && env.DRAINBRIDGE_KUBE_TOKEN) {
    if (!/^(ssm|secretsmanager):/.test(env.DRAINBRIDGE_KUBE_TOKEN)) {
      problems.push({
        path: 'DRAINBRIDGE_KUBE_TOKEN',
        message: 'must be a secret reference (ssm:… or secretsmanager:…) in aws mode, not a literal token',
      });
    }
  }
  return problems;
}

/** The maintenance windows; their mistakes join the other problems. */
function windowsOf(env: Env, problems: FieldProblem[]): WindowDefinition[] {
  try {
    return parseWindows(env.DRAINBRIDGE_MAINTENANCE_WINDOWS, 'DRAINBRIDGE_MAINTENANCE_WINDOWS');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
    return [];
  }
}

/** The DRAINBRIDGE_DRAIN_* variables the operator set (an unset one is left out: the origin decides). */
function drainSetBy(env: Env): Partial<DrainOptions> {
  const given: Partial<DrainOptions> = {
    force: env.DRAINBRIDGE_DRAIN_FORCE,
    ignoreDaemonSets: env.DRAINBRIDGE_DRAIN_IGNORE_DAEMONSETS,
    deleteEmptyDirData: env.DRAINBRIDGE_DRAIN_DELETE_EMPTYDIR_DATA,
    gracePeriodSeconds: env.DRAINBRIDGE_DRAIN_GRACE_PERIOD,
    timeoutSeconds: env.DRAINBRIDGE_DRAIN_TIMEOUT,
    podSelector: env.DRAINBRIDGE_DRAIN_POD_SELECTOR,
    disableEviction: env.DRAINBRIDGE_DRAIN_DISABLE_EVICTION,
    skipWaitForDeleteTimeoutSeconds: env.DRAINBRIDGE_DRAIN_SKIP_WAIT_FOR_DELETE_TIMEOUT,
    chunkSize: env.DRAINBRIDGE_DRAIN_CHUNK_SIZE,
  };
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
}

function toConfig(env: Env, kube: KubeAccess, windows: readonly WindowDefinition[]): Config {
  return {
    mode: env.DRAINBRIDGE_MODE,
    kube,
    drainDefaults: drainSetBy(env),
    maxHeldNodes: env.DRAINBRIDGE_MAX_HELD_NODES,
    slotLimits: env.DRAINBRIDGE_SLOT_LIMITS,
    infraPodSelector: env.DRAINBRIDGE_INFRA_POD_SELECTOR,
    tombstoneTtlHours: env.DRAINBRIDGE_TOMBSTONE_TTL_HOURS,
    recordTtlHours: env.DRAINBRIDGE_RECORD_TTL_HOURS,
    compatibilityTaints: env.DRAINBRIDGE_COMPAT_TAINTS,
    nova: {
      enabled: env.DRAINBRIDGE_NOVA,
      hostRule: env.DRAINBRIDGE_NOVA_HOST_RULE,
      nodeSelector: env.DRAINBRIDGE_NOVA_NODE_SELECTOR,
      maxConcurrentMigrations: env.DRAINBRIDGE_NOVA_MAX_CONCURRENT_MIGRATIONS,
      migrationTimeoutSeconds: env.DRAINBRIDGE_NOVA_MIGRATION_TIMEOUT,
      maxMigrationAttempts: env.DRAINBRIDGE_NOVA_MAX_MIGRATION_ATTEMPTS,
      shutoffPolicy: env.DRAINBRIDGE_NOVA_SHUTOFF_POLICY,
    },
    eventBusName: env.DRAINBRIDGE_EVENT_BUS,
    namespace: env.DRAINBRIDGE_NAMESPACE,
    maxEvacuationHours: env.DRAINBRIDGE_MAX_EVACUATION_HOURS,
    kubevirt: {
      maxMigrationsPerNode: env.DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS_PER_NODE,
      maxMigrationsPerCluster: env.DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS,
      maxAttempts: env.DRAINBRIDGE_KUBEVIRT_MAX_MIGRATION_ATTEMPTS,
      retryBackoffSeconds: env.DRAINBRIDGE_KUBEVIRT_RETRY_BACKOFF,
      restartUnmigratable: env.DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE,
    },
    startTiming: {
      marginSeconds: env.DRAINBRIDGE_START_MARGIN_SECONDS,
      podReadySeconds: env.DRAINBRIDGE_POD_READY_SECONDS,
      migrationSeconds: env.DRAINBRIDGE_MIGRATION_SECONDS,
    },
    windows,
  };
}

/** Secret variables' problems say what is wrong without repeating the value. */
function redactProblems(problems: FieldProblem[], env: Environment): FieldProblem[] {
  return problems.map((p) => {
    const value = env[p.path];
    if (!SECRET_ENV_VARS.has(p.path) || !value) return p;
    return { path: p.path, message: p.message.split(value).join('[REDACTED]') };
  });
}

/** Reads and validates the configuration; throws ConfigError listing every problem. */
export function loadConfig(env: Environment = process.env): Config {
  const raw = withDefaults(env);
  const parsed = safeParseReporting(EnvSchema, raw);
  if (!parsed.success) throw new ConfigError(redactProblems(problemsOf(parsed.error), env));
  const problems = crossFieldProblems(parsed.data);
  const kube =
    parsed.data.DRAINBRIDGE_KUBE_ACCESS === 'eks'
      ? eksAccessOf(parsed.data, env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined, problems)
      : kubeAccessOf(parsed.data, problems);
  const windows = windowsOf(parsed.data, problems);
  if (problems.length > 0) throw new ConfigError(redactProblems(problems, env));
  return toConfig(parsed.data, kube, windows);
}
