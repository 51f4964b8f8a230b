/**
 * One entry to every node-local parser: a metadata document's text (undefined for a 404) → notices.
 * What the agent's sources do after each read, in one place for tests and tools; each cloud's parsers
 * come from its agent part (lib/sources/clouds/<cloud>/agent.ts, listed in registry/agents.ts).
 */

import { DrainbridgeError } from '../../errors/index.ts';
import type { NoticeSource } from '../../model/notice.ts';
import type { DocumentParser } from '../clouds/agent-part/agent-part.ts';
import type { ParsedDocument } from '../clouds/notice.ts';
import { CLOUD_AGENTS } from '../clouds/registry/agents.ts';

/** Every source's parser (null: it arrives on an event bus), from every cloud's agent part. */
const PARSERS: ReadonlyMap<string, DocumentParser | null> = new Map(
  Object.values(CLOUD_AGENTS).flatMap((agent) => Object.entries(agent.parse)),
);

/**
 * Parses a document read from `source`. `etag` is the GCE answer's ETag (maintenance-event only);
 * `noticedAt`, when a GCE preemption was first read (its 30 s count from then).
 */
export function parseNoticeDocument(
  source: NoticeSource,
  text: string | undefined,
  etag?: string,
  noticedAt: Date = new Date(),
): ParsedDocument {
  const parse = PARSERS.get(source);
  if (parse === undefined) throw new DrainbridgeError(`unknown notice source ${String(source)}`);
  if (parse === null) {
    throw new DrainbridgeError(`${source} is not a metadata document (it arrives as an EventBridge event)`);
  }
  return parse(text, { ...(etag === undefined ? {} : { etag }), noticedAt });
}
