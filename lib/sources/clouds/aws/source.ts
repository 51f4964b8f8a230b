/**
 * The node agent's EC2 sources, over one IMDSv2 client (one session token): scheduled maintenance events
 * always; the spot `instance-action` and the rebalance recommendation when enabled. Every notice read
 * from this instance's IMDS concerns this node.
 */
import type { NoticeSource } from '../../../model/notice.ts';
import type { LoopContext, SourceLoop } from '../loop.ts';
import { type Notice, type ParsedDocument, parseJsonText } from '../notice.ts';
import { Ec2MetadataClient, REBALANCE_PATH, SCHEDULED_EVENTS_PATH, SPOT_INSTANCE_ACTION_PATH } from './client.ts';
import { parseEc2ScheduledEvents, parseRebalanceRecommendation, parseSpotInstanceAction } from './parse.ts';

interface Ec2Document {
  readonly source: NoticeSource;
  readonly path: string;
  /** `undefined` when IMDS answered 404. */
  readonly parse: (document: unknown) => ParsedDocument;
}

const DOCUMENTS: readonly Ec2Document[] = [
  {
    source: 'aws-scheduled-events',
    path: SCHEDULED_EVENTS_PATH,
    parse: (document) => parseEc2ScheduledEvents(document ?? []),
  },
  { source: 'aws-spot-instance-action', path: SPOT_INSTANCE_ACTION_PATH, parse: parseSpotInstanceAction },
  { source: 'aws-rebalance-recommendation', path: REBALANCE_PATH, parse: parseRebalanceRecommendation },
];

class Ec2Source implements SourceLoop {
  readonly source: NoticeSource;
  readonly intervalMs: number;
  readonly #client: Ec2MetadataClient;
  readonly #document: Ec2Document;

  constructor(document: Ec2Document, client: Ec2MetadataClient, intervalMs: number) {
    this.source = document.source;
    this.#document = document;
    this.#client = client;
    this.intervalMs = intervalMs;
  }

  async read(signal: AbortSignal): Promise<ParsedDocument> {
    const text = await this.#client.get(this.#document.path, signal);
    return this.#document.parse(text === undefined ? undefined : parseJsonText(this.source, text));
  }

  async mine(notices: readonly Notice[]): Promise<Notice[]> {
    return [...notices];
  }
}

/** The EC2 sources the configuration enables. */
export function awsSources(context: LoopContext, client?: Ec2MetadataClient): SourceLoop[] {
  const { aws, timeoutMs, pollSeconds } = context.config;
  const shared =
    client ?? new Ec2MetadataClient({ baseUrl: aws.baseUrl, tokenTtlSeconds: aws.tokenTtlSeconds, timeoutMs });
  const enabled = DOCUMENTS.filter(
    (d) =>
      d.source === 'aws-scheduled-events' ||
      (d.source === 'aws-spot-instance-action' && aws.spot) ||
      (d.source === 'aws-rebalance-recommendation' && aws.rebalance),
  );
  return enabled.map((document) => new Ec2Source(document, shared, pollSeconds * 1000));
}
