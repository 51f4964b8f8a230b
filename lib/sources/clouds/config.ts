/**
 * The node agent's configuration, read from the environment in lib/config's style: one validated
 * object, every problem listed at once, each naming its variable (and, inside the policy, the JSON path).
 * Kept beside the sources rather than in lib/config: only the agent reads it.
 */
import { z } from 'zod';
import { DrainOptionsInput } from '../../bus/contracts/fields.ts';
import { problemsOf, safeParseReporting } from '../../bus/contracts/parse.ts';
import { ConfigError, type FieldProblem } from '../../errors/index.ts';
import { NOTICE_ACTIONS, NOTICE_PROVIDERS, type NoticeProvider } from '../../model/notice.ts';
import type { DrainOptions } from '../../model/request.ts';
import { envSchemaOf, textsOf, type ValuesOf, valuesOf } from '../../settings/setting.ts';
import { DEFAULT_NOTICE_POLICY, NOTICE_TIMINGS, NOTICE_TYPES, type NoticePolicy, type NoticeRule } from './policy.ts';
import { CLOUDS } from './registry/descriptors.ts';
import { AGENT_SETTINGS } from './registry/settings.ts';

type DeclaredAgentConfig = ValuesOf<typeof AGENT_SETTINGS>;

/** The node agent's configuration: its declared settings, the notice policy merged over the defaults. */
export type AgentConfig = Omit<DeclaredAgentConfig, 'policy'> & { readonly policy: NoticePolicy };

const AgentEnv = envSchemaOf(AGENT_SETTINGS);

const RuleOverride = z.strictObject({
  action: z.enum(NOTICE_ACTIONS, { error: `must be one of ${NOTICE_ACTIONS.join(', ')}` }).optional(),
  timing: z.enum(NOTICE_TIMINGS, { error: `must be one of ${NOTICE_TIMINGS.join(', ')}` }).optional(),
  approveWhenDrained: z.boolean({ error: 'must be true or false' }).optional(),
  drain: DrainOptionsInput.optional(),
});
type RuleOverride = z.infer<typeof RuleOverride>;

const POLICY_VAR = AGENT_SETTINGS.policy.env;

/** The clouds whose events the agent can approve (their descriptors say so). */
const APPROVERS = Object.values(CLOUDS)
  .filter((cloud) => cloud.approvesEvents)
  .map((cloud) => cloud.provider)
  .join(', ');

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
    if (!CLOUDS[provider].approvesEvents && isObject(value) && value.approveWhenDrained === true) {
      problems.push({
        path: `${path}.${type}.approveWhenDrained`,
        message: `only ${APPROVERS} events can be approved`,
      });
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

/** The agent's configuration from the environment; a ConfigError lists every problem. */
export function loadAgentConfig(env: Readonly<Record<string, string | undefined>> = process.env): AgentConfig {
  const parsed = safeParseReporting(AgentEnv, textsOf(AGENT_SETTINGS, env, { emptyIsUnset: true }));
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  const policy = parseNoticePolicy(env[POLICY_VAR] ?? '');
  if (Array.isArray(policy)) problems.push(...policy);
  if (!parsed.success || Array.isArray(policy) || problems.length > 0) throw new ConfigError(problems);
  return { ...valuesOf(AGENT_SETTINGS, parsed.data), policy };
}
