/**
 * The node agent's configuration, read from the environment in lib/config's style: one validated
 * object, every problem listed at once, each naming its variable (and, inside the policy, the JSON path).
 * Kept beside the sources rather than in lib/config: only the agent reads it.
 */
import { z } from 'zod';
import { NOTICE_ACTIONS, NOTICE_PROVIDERS, type NoticeProvider } from '../domain/notice.ts';
import type { DrainOptions } from '../domain/request.ts';
import { ConfigError, type FieldProblem } from '../errors/index.ts';
import { DrainOptionsInput, NodeName } from '../events/fields.ts';
import { problemsOf, safeParseReporting } from '../events/parse.ts';
import { DEFAULT_NOTICE_POLICY, NOTICE_TIMINGS, NOTICE_TYPES, type NoticePolicy, type NoticeRule } from './policy.ts';

export interface AgentConfig {
  /** This node's name (the downward API's `spec.nodeName`). */
  readonly nodeName: string;
  /** Whose metadata service this node has. */
  readonly provider: NoticeProvider;
  /** Seconds between two reads of a polled document. */
  readonly pollSeconds: number;
  /** Per-call timeout of a metadata request (ms); GCE's hanging requests get their wait on top. */
  readonly timeoutMs: number;
  readonly policy: NoticePolicy;
  readonly azure: {
    readonly baseUrl: string;
    readonly apiVersion: string;
    /** Seconds between two checks whether an event may be approved (they read the cluster). */
    readonly approvalCheckSeconds: number;
  };
  readonly aws: {
    readonly baseUrl: string;
    readonly tokenTtlSeconds: number;
    /** Read the spot `instance-action` notice (opt-in). */
    readonly spot: boolean;
    /** Read the rebalance recommendation (opt-in). */
    readonly rebalance: boolean;
  };
  readonly gcp: {
    readonly baseUrl: string;
    /** `timeout_sec` of the hanging maintenance-event request. */
    readonly waitSeconds: number;
    /** Read `upcoming-maintenance` too. */
    readonly upcoming: boolean;
    readonly upcomingPollSeconds: number;
  };
}

/** Each variable with its default (undefined: required or optional) and meaning, for validation and docs/configuration.md. */
export const AGENT_ENV_VARS = {
  DRAINBRIDGE_NODE_NAME: { default: undefined, help: 'this node (downward API `spec.nodeName`); required' },
  DRAINBRIDGE_AGENT_PROVIDER: { default: undefined, help: `whose metadata service: ${NOTICE_PROVIDERS.join(', ')}` },
  DRAINBRIDGE_AGENT_POLL_SECONDS: { default: '2', help: 'seconds between reads of a polled document' },
  DRAINBRIDGE_AGENT_TIMEOUT_MS: { default: '2000', help: 'timeout of one metadata request (ms)' },
  DRAINBRIDGE_NOTICE_POLICY: { default: '', help: 'JSON overrides of the notice policy (lib/sources/README.md)' },
  DRAINBRIDGE_AGENT_AZURE_URL: { default: 'http://169.254.169.254', help: 'Azure IMDS base URL' },
  DRAINBRIDGE_AGENT_AZURE_API_VERSION: { default: '2020-07-01', help: 'Scheduled Events api-version' },
  DRAINBRIDGE_AGENT_AZURE_APPROVAL_CHECK_SECONDS: {
    default: '5',
    help: 'seconds between checks whether an event may be approved',
  },
  DRAINBRIDGE_AGENT_AWS_URL: { default: 'http://169.254.169.254', help: 'EC2 IMDS base URL' },
  DRAINBRIDGE_AGENT_AWS_TOKEN_TTL_SECONDS: { default: '3600', help: 'IMDSv2 session token lifetime (1–21600)' },
  DRAINBRIDGE_AGENT_AWS_SPOT: { default: 'false', help: 'read the spot instance-action notice' },
  DRAINBRIDGE_AGENT_AWS_REBALANCE: { default: 'false', help: 'read the rebalance recommendation' },
  DRAINBRIDGE_AGENT_GCP_URL: { default: 'http://metadata.google.internal', help: 'GCE metadata server base URL' },
  DRAINBRIDGE_AGENT_GCP_WAIT_SECONDS: { default: '60', help: '`timeout_sec` of the hanging maintenance-event read' },
  DRAINBRIDGE_AGENT_GCP_UPCOMING: { default: 'true', help: 'read the upcoming-maintenance document too' },
  DRAINBRIDGE_AGENT_GCP_UPCOMING_POLL_SECONDS: { default: '60', help: 'seconds between reads of upcoming-maintenance' },
} as const satisfies Record<string, { default: string | undefined; help: string }>;

const bool = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');
const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
const baseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .transform((url) => url.replace(/\/+$/, ''));

const AgentEnv = z.object({
  DRAINBRIDGE_NODE_NAME: NodeName,
  DRAINBRIDGE_AGENT_PROVIDER: z.enum(NOTICE_PROVIDERS, { error: `must be one of ${NOTICE_PROVIDERS.join(', ')}` }),
  DRAINBRIDGE_AGENT_POLL_SECONDS: int(1, 300),
  DRAINBRIDGE_AGENT_TIMEOUT_MS: int(100, 60_000),
  DRAINBRIDGE_NOTICE_POLICY: z.string(),
  DRAINBRIDGE_AGENT_AZURE_URL: baseUrl,
  DRAINBRIDGE_AGENT_AZURE_API_VERSION: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be an api-version such as 2020-07-01'),
  DRAINBRIDGE_AGENT_AZURE_APPROVAL_CHECK_SECONDS: int(1, 300),
  DRAINBRIDGE_AGENT_AWS_URL: baseUrl,
  DRAINBRIDGE_AGENT_AWS_TOKEN_TTL_SECONDS: int(1, 21_600),
  DRAINBRIDGE_AGENT_AWS_SPOT: bool,
  DRAINBRIDGE_AGENT_AWS_REBALANCE: bool,
  DRAINBRIDGE_AGENT_GCP_URL: baseUrl,
  DRAINBRIDGE_AGENT_GCP_WAIT_SECONDS: int(1, 3600),
  DRAINBRIDGE_AGENT_GCP_UPCOMING: bool,
  DRAINBRIDGE_AGENT_GCP_UPCOMING_POLL_SECONDS: int(5, 86_400),
});

const RuleOverride = z.strictObject({
  action: z.enum(NOTICE_ACTIONS, { error: `must be one of ${NOTICE_ACTIONS.join(', ')}` }).optional(),
  timing: z.enum(NOTICE_TIMINGS, { error: `must be one of ${NOTICE_TIMINGS.join(', ')}` }).optional(),
  approveWhenDrained: z.boolean({ error: 'must be true or false' }).optional(),
  drain: DrainOptionsInput.optional(),
});
type RuleOverride = z.infer<typeof RuleOverride>;

const POLICY_VAR = 'DRAINBRIDGE_NOTICE_POLICY';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mergeRule(base: NoticeRule, override: RuleOverride): NoticeRule {
  const drain = { ...base.drain, ...(override.drain as Partial<DrainOptions> | undefined) };
  return { ...base, ...override, drain, why: `${base.why} (overridden)` };
}

/** One provider's overrides → its merged rules, collecting problems. */
function providerRules(
  provider: NoticeProvider,
  given: unknown,
  problems: FieldProblem[],
): Record<string, NoticeRule> | undefined {
  const path = `${POLICY_VAR}.${provider}`;
  if (!isObject(given)) {
    problems.push({ path, message: 'must be an object of notice types' });
    return undefined;
  }
  const known: readonly string[] = NOTICE_TYPES[provider];
  const rules: Record<string, NoticeRule> = { ...DEFAULT_NOTICE_POLICY[provider] };
  for (const [type, value] of Object.entries(given)) {
    if (!known.includes(type)) {
      problems.push({
        path: `${path}.${type}`,
        message: `unknown ${provider} notice type (known: ${known.join(', ')})`,
      });
      continue;
    }
    if (provider !== 'azure' && isObject(value) && value.approveWhenDrained === true) {
      problems.push({ path: `${path}.${type}.approveWhenDrained`, message: 'only Azure events can be approved' });
    }
    const parsed = safeParseReporting(RuleOverride, value);
    if (!parsed.success) problems.push(...problemsOf(parsed.error, `${path}.${type}`));
    else rules[type] = mergeRule(rules[type] as NoticeRule, parsed.data);
  }
  return rules;
}

/**
 * The policy: the defaults with DRAINBRIDGE_NOTICE_POLICY's overrides, e.g.
 * `{"azure":{"Freeze":{"action":"evacuate"}},"aws":{"instance-reboot":{"drain":{"gracePeriodSeconds":60}}}}`.
 * Returns the problems instead of the policy when there are any.
 */
export function parseNoticePolicy(text: string): NoticePolicy | FieldProblem[] {
  if (text.trim() === '') return DEFAULT_NOTICE_POLICY;
  let given: unknown;
  try {
    given = JSON.parse(text);
  } catch (error) {
    return [{ path: POLICY_VAR, message: `is not JSON (${(error as Error).message})` }];
  }
  if (!isObject(given)) return [{ path: POLICY_VAR, message: 'must be a JSON object keyed by provider' }];
  const problems: FieldProblem[] = [];
  const policy: Record<string, unknown> = { ...DEFAULT_NOTICE_POLICY };
  for (const [provider, value] of Object.entries(given)) {
    if (!(NOTICE_PROVIDERS as readonly string[]).includes(provider)) {
      problems.push({
        path: `${POLICY_VAR}.${provider}`,
        message: `unknown provider (known: ${NOTICE_PROVIDERS.join(', ')})`,
      });
      continue;
    }
    const rules = providerRules(provider as NoticeProvider, value, problems);
    if (rules) policy[provider] = rules;
  }
  return problems.length > 0 ? problems : (policy as unknown as NoticePolicy);
}

function withDefaults(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, spec] of Object.entries(AGENT_ENV_VARS)) {
    const given = env[name];
    out[name] = given !== undefined && given !== '' ? given : spec.default;
  }
  return out;
}

type AgentEnv = z.infer<typeof AgentEnv>;

function toAgentConfig(env: AgentEnv, policy: NoticePolicy): AgentConfig {
  return {
    nodeName: env.DRAINBRIDGE_NODE_NAME,
    provider: env.DRAINBRIDGE_AGENT_PROVIDER,
    pollSeconds: env.DRAINBRIDGE_AGENT_POLL_SECONDS,
    timeoutMs: env.DRAINBRIDGE_AGENT_TIMEOUT_MS,
    policy,
    azure: {
      baseUrl: env.DRAINBRIDGE_AGENT_AZURE_URL,
      apiVersion: env.DRAINBRIDGE_AGENT_AZURE_API_VERSION,
      approvalCheckSeconds: env.DRAINBRIDGE_AGENT_AZURE_APPROVAL_CHECK_SECONDS,
    },
    aws: {
      baseUrl: env.DRAINBRIDGE_AGENT_AWS_URL,
      tokenTtlSeconds: env.DRAINBRIDGE_AGENT_AWS_TOKEN_TTL_SECONDS,
      spot: env.DRAINBRIDGE_AGENT_AWS_SPOT,
      rebalance: env.DRAINBRIDGE_AGENT_AWS_REBALANCE,
    },
    gcp: {
      baseUrl: env.DRAINBRIDGE_AGENT_GCP_URL,
      waitSeconds: env.DRAINBRIDGE_AGENT_GCP_WAIT_SECONDS,
      upcoming: env.DRAINBRIDGE_AGENT_GCP_UPCOMING,
      upcomingPollSeconds: env.DRAINBRIDGE_AGENT_GCP_UPCOMING_POLL_SECONDS,
    },
  };
}

/** The agent's configuration from the environment; a ConfigError lists every problem. */
export function loadAgentConfig(env: Readonly<Record<string, string | undefined>> = process.env): AgentConfig {
  const parsed = safeParseReporting(AgentEnv, withDefaults(env));
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  const policy = parseNoticePolicy(env[POLICY_VAR] ?? '');
  if (Array.isArray(policy)) problems.push(...policy);
  if (!parsed.success || Array.isArray(policy) || problems.length > 0) throw new ConfigError(problems);
  return toAgentConfig(parsed.data, policy);
}
