/**
 * The list of cloud descriptors (lib/sources/clouds/<cloud>/descriptor.ts) and the tables derived from it: the
 * sources' labels and request-id tags, each provider's notice types and default rules. Adding a cloud is
 * its descriptor and one entry here (docs/development.md, "Add a cloud").
 */
import { NOTICE_ACTIONS, type NoticeProvider, type NoticeSource } from '../../../model/notice.ts';
import { settingsOf } from '../../../settings/setting.ts';
import { ALIBABA_CLOUD } from '../alibaba/descriptor.ts';
import { AWS_CLOUD } from '../aws/descriptor.ts';
import { AZURE_CLOUD } from '../azure/descriptor.ts';
import type { AnyCloud, CloudDescriptor, SourceFacts } from '../contract/descriptor.ts';
import { NOTICE_TIMINGS } from '../contract/rules.ts';
import { GCP_CLOUD } from '../gcp/descriptor.ts';

/** One descriptor per provider: a provider without one does not compile. */
export const CLOUDS = Object.freeze({
  azure: AZURE_CLOUD,
  aws: AWS_CLOUD,
  gcp: GCP_CLOUD,
  alibaba: ALIBABA_CLOUD,
}) satisfies {
  readonly [P in NoticeProvider]: CloudDescriptor<P>;
};

export const CLOUD_DESCRIPTORS: readonly AnyCloud[] = Object.values(CLOUDS) as readonly AnyCloud[];

/** Every source with its facts, from every descriptor. */
export function sourceFacts(): [NoticeSource, SourceFacts][] {
  return CLOUD_DESCRIPTORS.flatMap((cloud) => Object.entries(cloud.sources) as [NoticeSource, SourceFacts][]);
}

function bySource<T>(pick: (facts: SourceFacts) => T): Readonly<Record<NoticeSource, T>> {
  return Object.freeze(Object.fromEntries(sourceFacts().map(([source, facts]) => [source, pick(facts)]))) as Readonly<
    Record<NoticeSource, T>
  >;
}

/** What a document is, for messages. */
export const SOURCE_LABELS = bySource((facts) => facts.label);

/** Short tags keep request ids readable and under the limit (lib/sources/clouds/ids.ts). */
export const SOURCE_TAGS = bySource((facts) => facts.tag);

/** What each source's provider calls its document's version, where it has one. */
export const SOURCE_DOCUMENT_VERSIONS = bySource((facts) => facts.documentVersion);

function sourceProblems(cloud: AnyCloud): string[] {
  const sources = Object.entries(cloud.sources) as [string, SourceFacts | undefined][];
  const problems = sources.length === 0 ? ['no source'] : [];
  const variables = new Set(settingsOf(cloud.settings).map((s) => s.env));
  for (const [source, facts] of sources) {
    if (!source.startsWith(`${cloud.provider}-`)) problems.push(`source ${source}: not named ${cloud.provider}-…`);
    if (!facts?.label) problems.push(`source ${source}: no label`);
    if (!facts?.tag) problems.push(`source ${source}: no request-id tag`);
    const variable = facts?.optIn?.match(/^DRAINBRIDGE_\w+/)?.[0];
    if (variable && !variables.has(variable))
      problems.push(`source ${source}: opted in by ${variable}, not a setting of the cloud`);
  }
  return problems;
}

function ruleProblems(cloud: AnyCloud): string[] {
  const problems = cloud.noticeTypes.length === 0 ? ['no notice type'] : [];
  for (const type of cloud.noticeTypes) {
    const rule = Object.hasOwn(cloud.policy, type) ? cloud.policy[type] : undefined;
    if (!rule) problems.push(`notice type ${type}: no default rule`);
    else if (!NOTICE_ACTIONS.includes(rule.action) || !NOTICE_TIMINGS.includes(rule.timing) || !rule.why) {
      problems.push(`notice type ${type}: an incomplete rule`);
    }
  }
  for (const [type, rule] of Object.entries(cloud.policy)) {
    if (rule.approveWhenDrained && !cloud.approvesEvents)
      problems.push(`rule ${type}: approves an event the cloud cannot approve`);
    if (!cloud.noticeTypes.includes(type)) problems.push(`rule ${type}: not one of the notice types`);
  }
  return problems;
}

/** The parts a descriptor lacks or gets wrong, each in a phrase (none for a complete one). Pure. */
export function missingParts(cloud: AnyCloud): string[] {
  return [
    ...(cloud.docs.length === 0 ? ['no provider page named'] : []),
    ...(settingsOf(cloud.settings).some((s) => s.env.endsWith('_URL')) ? [] : ['no metadata base URL setting']),
    ...(/^[a-z][a-z0-9+.-]*:\/\/$/.test(cloud.providerIdScheme) ? [] : ['no providerID scheme (`<scheme>://`)']),
    ...sourceProblems(cloud),
    ...ruleProblems(cloud),
  ];
}
