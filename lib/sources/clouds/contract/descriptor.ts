/**
 * One descriptor per cloud (lib/sources/clouds/<cloud>/descriptor.ts): what drainbridge knows about its notices
 * as data — its documents with their labels and request-id tags, its notice types with their default
 * rules, its providerID scheme and the provider pages it follows. The shared tables are derived from the
 * list of descriptors (descriptors.ts: SOURCE_LABELS, SOURCE_TAGS, NOTICE_TYPES, the default policy); a
 * descriptor that lacks a source of its provider, or a rule for one of its types, does not compile, and
 * test/unit/sources/descriptors.test.ts fails on an empty or inconsistent part. A leaf (types only).
 *
 * Behaviour stays in the cloud's own files, reached through its agent part (agent-part/agent-part.ts: its loops and a
 * parser per source, listed in registry/agents.ts), which the compiler checks against its sources.
 */
import { z } from 'zod';
import type { NOTICE_PROVIDER_IDS, NoticeProvider, NoticeSource } from '../../../model/notice.ts';
import type { SettingReader, SettingTree } from '../../../settings/setting.ts';
import type { NoticeRule } from './rules.ts';

/** Who reads a cloud's settings: the node agent (lib/sources/clouds/registry/settings.ts groups them per cloud). */
export const AGENT_READERS: readonly SettingReader[] = ['node-agent'];

/** A metadata service's base URL setting: http(s), no trailing slash. */
export const metadataBaseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .transform((url) => url.replace(/\/+$/, ''));

/** The sources of one provider: those of NOTICE_SOURCES named `<provider>-…`. */
export type SourcesOf<P extends NoticeProvider> = Extract<NoticeSource, `${P}-${string}`>;

export interface SourceFacts {
  /** What the document is, for messages (`EC2 scheduled events (IMDS)`). */
  readonly label: string;
  /** Its part of request ids (`<provider>:<node>:<tag>:<event key>`, lib/sources/clouds/ids.ts). */
  readonly tag: string;
  /** Where it is read: the node's metadata service (the node agent) or an EventBridge bus (no agent). */
  readonly arrives: 'metadata' | 'event-bus';
  /** Opt-in: read only when the named setting enables it. */
  readonly optIn?: string;
  /**
   * What the provider calls the document's version (Azure `DocumentIncarnation`, GCE `ETag`), where it has
   * one: a notice's revision key names it (lib/sources/clouds/notice-details.ts).
   */
  readonly documentVersion?: string;
}

export interface CloudDescriptor<
  P extends NoticeProvider = NoticeProvider,
  T extends string = string,
  S extends SettingTree = SettingTree,
> {
  readonly provider: P;
  /** Whether the agent can approve its events (Azure's StartRequests): a rule may then set approveWhenDrained. */
  readonly approvesEvents: boolean;
  /** The provider pages its parsers and fixtures follow. */
  readonly docs: readonly string[];
  /**
   * Its nodes' `spec.providerID` prefix, as its cloud-controller-manager writes it: the model's
   * NOTICE_PROVIDER_IDS, which lib/node/resolve.ts reads (lib/node cannot import this folder), holds the
   * same — the compiler refuses another.
   */
  readonly providerIdScheme: (typeof NOTICE_PROVIDER_IDS)[P]['scheme'];
  /** Its node agent settings (base URL, opt-in sources, poll times): AGENT_SETTINGS.<provider>. */
  readonly settings: S;
  readonly sources: { readonly [Source in SourcesOf<P>]: SourceFacts };
  /** Its notice types: the keys of its policy rules (DRAINBRIDGE_NOTICE_POLICY). */
  readonly noticeTypes: readonly T[];
  readonly policy: Readonly<Record<T, NoticeRule>>;
}

/** Any cloud's descriptor, as the list holds it (its types widened). */
export interface AnyCloud {
  readonly provider: NoticeProvider;
  /** Whether the agent can approve its events (Azure's StartRequests): a rule may then set approveWhenDrained. */
  readonly approvesEvents: boolean;
  readonly docs: readonly string[];
  readonly providerIdScheme: string;
  readonly settings: SettingTree;
  readonly sources: Readonly<Partial<Record<NoticeSource, SourceFacts>>>;
  readonly noticeTypes: readonly string[];
  readonly policy: Readonly<Record<string, NoticeRule>>;
}

/** Declares a descriptor, keeping its notice types as literals (the policy's types are derived from them). */
export function defineCloud<P extends NoticeProvider, const T extends string, S extends SettingTree>(
  descriptor: CloudDescriptor<P, T, S>,
): CloudDescriptor<P, T, S> {
  return Object.freeze(descriptor);
}
