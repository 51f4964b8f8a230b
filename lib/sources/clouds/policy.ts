/**
 * The notice policy: per provider and notice type, whether drainbridge evacuates, how the notice's time
 * becomes the request's times, which drain options the request carries, and (Azure) whether the event is
 * approved once drainbridge drained for it. Plain data, so `drainbridge plan` can show it; operators
 * override any part of it with DRAINBRIDGE_NOTICE_POLICY (lib/sources/clouds/config.ts).
 */
import type { NoticeProvider } from '../../model/notice.ts';
import type { DrainOptions } from '../../model/request.ts';
import { NOTICE_TIMINGS, type NoticeRule, type NoticeTiming } from './contract/rules.ts';
import { CLOUDS } from './registry/descriptors.ts';

/** The notice types of each provider: the keys of its policy rules, from the clouds' descriptors (descriptors.ts). */
export const NOTICE_TYPES = Object.freeze(
  Object.fromEntries(Object.values(CLOUDS).map((cloud) => [cloud.provider, cloud.noticeTypes])),
) as { readonly [P in NoticeProvider]: (typeof CLOUDS)[P]['noticeTypes'] };

export type NoticeType<P extends NoticeProvider = NoticeProvider> = (typeof NOTICE_TYPES)[P][number];

export { NOTICE_TIMINGS, type NoticeRule, type NoticeTiming };

export type NoticePolicy = { readonly [P in NoticeProvider]: Readonly<Record<NoticeType<P>, NoticeRule>> };

/** Each provider's default rules, from its descriptor (lib/sources/clouds/<cloud>/descriptor.ts). */
export const DEFAULT_NOTICE_POLICY: NoticePolicy = Object.freeze(
  Object.fromEntries(Object.values(CLOUDS).map((cloud) => [cloud.provider, cloud.policy])),
) as NoticePolicy;

/** The rule for a notice; undefined for a key the policy does not know (the parsers never produce one). */
export function ruleFor(policy: NoticePolicy, provider: NoticeProvider, key: string): NoticeRule | undefined {
  const rules = policy[provider] as Readonly<Record<string, NoticeRule>>;
  return Object.hasOwn(rules, key) ? rules[key] : undefined;
}

/** One row per provider and type, for `drainbridge plan` and the README. */
export interface PolicyRow extends NoticeRule {
  readonly provider: NoticeProvider;
  readonly type: string;
}

export function describePolicy(policy: NoticePolicy = DEFAULT_NOTICE_POLICY): PolicyRow[] {
  return (Object.keys(NOTICE_TYPES) as NoticeProvider[]).flatMap((provider) =>
    NOTICE_TYPES[provider].map((type) => ({
      provider,
      type,
      ...(ruleFor(policy, provider, type) as NoticeRule),
    })),
  );
}

/**
 * The policy with the node agent's drain flags (`drainbridge forwarder --node-agent --force …`) under each
 * rule's own drain options: a rule's (DRAINBRIDGE_NOTICE_POLICY, per notice type) is the more specific.
 */
export function policyWithDrain(policy: NoticePolicy, drain: Partial<DrainOptions>): NoticePolicy {
  if (Object.keys(drain).length === 0) return policy;
  const withFlags = (rules: Readonly<Record<string, NoticeRule>>) =>
    Object.fromEntries(
      Object.entries(rules).map(([type, rule]) => [type, { ...rule, drain: { ...drain, ...rule.drain } }]),
    );
  return Object.fromEntries(
    Object.entries(policy).map(([provider, rules]) => [provider, withFlags(rules)]),
  ) as unknown as NoticePolicy;
}
