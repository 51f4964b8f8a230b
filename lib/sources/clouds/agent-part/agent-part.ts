/**
 * A cloud's behaviour in the node agent, beside its descriptor (the data, descriptor.ts): the loops of its
 * sources and a parser for each of its metadata documents. Each cloud exports one (`<cloud>/agent.ts`),
 * and lib/sources/clouds/registry/agents.ts lists them; a cloud whose agent lacks a parser for one of its
 * sources does not compile, and test/unit/sources/descriptors.test.ts checks the registry against the
 * descriptors. A leaf (types only).
 */
import type { NoticeProvider } from '../../../model/notice.ts';
import type { SourcesOf } from '../contract/descriptor.ts';
import type { LoopContext, SourceLoop } from '../loop.ts';
import type { ParsedDocument } from '../notice.ts';

/** What came with a document besides its text. */
export interface DocumentRead {
  /** The answer's ETag (GCE). */
  readonly etag?: string;
  /** When the document was first read (a notice without a time of its own counts from then: GCE preemption). */
  readonly noticedAt: Date;
}

/** A metadata document's text (undefined for a 404) → its notices. */
export type DocumentParser = (text: string | undefined, read: DocumentRead) => ParsedDocument;

export interface CloudAgent<P extends NoticeProvider = NoticeProvider> {
  readonly provider: P;
  /** The loops of the sources the configuration enables. */
  readonly loops: (context: LoopContext) => SourceLoop[];
  /** Each source's parser; `null` for a source that arrives on an event bus (it has no metadata document). */
  readonly parse: { readonly [S in SourcesOf<P>]: DocumentParser | null };
}
