/**
 * Builds the Config from the environment. Fails at start with every problem listed at once;
 * values of secret variables are never echoed back.
 */

import { problemsOf, safeParseReporting } from '../bus/contracts/parse.ts';
import { ConfigError, type FieldProblem } from '../errors/index.ts';
import type { DrainOptions } from '../model/request.ts';
import { envSchemaOf, secretsOf, textsOf, type ValuesOf, valuesOf } from '../settings/setting.ts';
import { parseWindows, type WindowDefinition } from '../sources/windows/definition.ts';
import { type Config, type KubeAccess, WORKFLOW_SETTINGS } from './schema.ts';

type Environment = Readonly<Record<string, string | undefined>>;
type Declared = ValuesOf<typeof WORKFLOW_SETTINGS>;
type Access = Declared['kubeAccess'];

const ENV_SCHEMA = envSchemaOf(WORKFLOW_SETTINGS);
const SECRET_ENV_VARS = secretsOf(WORKFLOW_SETTINGS);
const ACCESS = WORKFLOW_SETTINGS.kubeAccess;

function requireVars(access: Access, fields: readonly (keyof typeof ACCESS)[], problems: FieldProblem[]): void {
  for (const field of fields) {
    if (!access[field])
      problems.push({ path: ACCESS[field].env, message: `is required when DRAINBRIDGE_KUBE_ACCESS=${access.source}` });
  }
}

/**
 * `eks` access: cluster, endpoint and CA are required; the region defaults to Lambda's AWS_REGION,
 * which the environment schema does not list (it is the runtime's, not drainbridge's).
 */
function eksAccessOf(env: Access, runtimeRegion: string | undefined, problems: FieldProblem[]): KubeAccess {
  requireVars(env, ['eksCluster', 'server', 'caData'], problems);
  if (env.server && !env.server.startsWith('https://')) {
    // The token is a credential for 15 minutes: it only ever travels over TLS.
    problems.push({
      path: 'DRAINBRIDGE_KUBE_SERVER',
      message: 'must be an https:// URL with DRAINBRIDGE_KUBE_ACCESS=eks',
    });
  }
  const region = env.eksRegion ?? runtimeRegion ?? '';
  if (!region) {
    problems.push({
      path: 'DRAINBRIDGE_EKS_REGION',
      message: 'is required when DRAINBRIDGE_KUBE_ACCESS=eks and AWS_REGION is unset',
    });
  }
  return {
    source: 'eks',
    clusterName: env.eksCluster ?? '',
    region,
    server: env.server ?? '',
    caData: env.caData ?? '',
  };
}

function kubeAccessOf(env: Access, problems: FieldProblem[]): KubeAccess {
  const context = env.context ? { context: env.context } : {};
  switch (env.source) {
    case 'in-cluster':
      return { source: 'in-cluster' };
    case 'secret':
      requireVars(env, ['kubeconfigRef'], problems);
      return { source: 'secret', kubeconfigRef: env.kubeconfigRef ?? '', ...context };
    case 'token': {
      requireVars(env, ['server', 'token'], problems);
      const ca = env.caData ? { caData: env.caData } : {};
      return {
        source: 'token',
        server: env.server ?? '',
        token: env.token ?? '',
        ...ca,
      };
    }
    default:
      return { source: 'kubeconfig', ...(env.kubeconfig ? { path: env.kubeconfig } : {}), ...context };
  }
}

function crossFieldProblems(env: Declared): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (env.mode === 'aws' && env.kubeAccess.source === 'kubeconfig') {
    problems.push({
      path: 'DRAINBRIDGE_KUBE_ACCESS',
      message:
        'kubeconfig files are not available in Lambda; use secret (a kubeconfig in Secrets Manager), token, or eks (a token presigned with the function role)',
    });
  }
  if (env.mode === 'aws' && env.kubeAccess.source === 'token' && env.kubeAccess.token) {
    if (!/^(ssm|secretsmanager):/.test(env.kubeAccess.token)) {
      problems.push({
        path: 'DRAINBRIDGE_KUBE_TOKEN',
        message: 'must be a secret reference (ssm:… or secretsmanager:…) in aws mode, not a literal token',
      });
    }
  }
  return problems;
}

/** The maintenance windows; their mistakes join the other problems. */
function windowsOf(text: string, problems: FieldProblem[]): WindowDefinition[] {
  try {
    return parseWindows(text, WORKFLOW_SETTINGS.maintenanceWindows.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
    return [];
  }
}

/** The DRAINBRIDGE_DRAIN_* variables the operator set (an unset one is left out: the origin decides). */
function drainSetBy(drain: Declared['drain']): Partial<DrainOptions> {
  return Object.fromEntries(Object.entries(drain).filter(([, value]) => value !== undefined));
}

function toConfig(declared: Declared, kube: KubeAccess, windows: readonly WindowDefinition[]): Config {
  const { kubeAccess: _access, drain, maintenanceWindows: _windows, ...rest } = declared;
  return { ...rest, kube, drainDefaults: drainSetBy(drain), windows };
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
  const parsed = safeParseReporting(ENV_SCHEMA, textsOf(WORKFLOW_SETTINGS, env, { emptyIsUnset: true }));
  if (!parsed.success) throw new ConfigError(redactProblems(problemsOf(parsed.error), env));
  const declared = valuesOf(WORKFLOW_SETTINGS, parsed.data);
  const problems = crossFieldProblems(declared);
  const kube =
    declared.kubeAccess.source === 'eks'
      ? eksAccessOf(declared.kubeAccess, env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined, problems)
      : kubeAccessOf(declared.kubeAccess, problems);
  const windows = windowsOf(declared.maintenanceWindows, problems);
  if (problems.length > 0) throw new ConfigError(redactProblems(problems, env));
  return toConfig(declared, kube, windows);
}
