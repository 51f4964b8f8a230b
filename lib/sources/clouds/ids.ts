/**
 * Request ids for notices: deterministic, so every read of the same notice (another poll, a restarted
 * agent, a redelivered event) yields the same id and the workflow treats it as a duplicate.
 *
 * `<provider>:<node>:<source tag>:<event key>` — per node, because one provider event can name several
 * nodes (an Azure event lists every VM it applies to) and each node's evacuation is its own request.
 */
import { createHash } from 'node:crypto';
import type { NoticeSource } from '../../model/notice.ts';
import { SOURCE_TAGS } from './registry/descriptors.ts';

/** The RequestId contract: at most 128 characters of `A-Za-z0-9._:@/-`. */
const MAX_LENGTH = 128;
const NOT_ALLOWED = /[^A-Za-z0-9._@/-]/g;

/** Short tags keep ids readable and under the limit: from the clouds' descriptors (descriptors.ts). */
export { SOURCE_TAGS };

function clean(part: string): string {
  return part.replace(NOT_ALLOWED, '-');
}

/** 16 hex digits of SHA-256: stands in for a part too long to keep. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** The prefix every id of `source` for `node` starts with (how an agent recognises its own holds). */
export function requestIdPrefix(source: NoticeSource, node: string): string {
  const provider = source.split('-')[0] ?? source;
  const nodePart = `${provider}:${node}:${SOURCE_TAGS[source]}:`.length + 17 > MAX_LENGTH ? shortHash(node) : node;
  return `${provider}:${clean(nodePart)}:${SOURCE_TAGS[source]}:`;
}

/** The request id of `eventKey` from `source` on `node`. Hashes the key when the whole would be too long. */
export function noticeRequestId(source: NoticeSource, node: string, eventKey: string): string {
  const prefix = requestIdPrefix(source, node);
  const key = clean(eventKey);
  return prefix.length + key.length <= MAX_LENGTH ? `${prefix}${key}` : `${prefix}${shortHash(eventKey)}`;
}
