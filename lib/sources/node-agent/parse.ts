/**
 * One entry to every node-local parser: a metadata document's text (undefined for a 404) → notices.
 * What the agent's sources do after each read, in one place for tests and tools.
 */

import { DrainbridgeError } from '../../errors/index.ts';
import type { NoticeSource } from '../../model/notice.ts';
import { parseEc2ScheduledEvents, parseRebalanceRecommendation, parseSpotInstanceAction } from '../clouds/aws/parse.ts';
import { parseAzureScheduledEvents } from '../clouds/azure/parse.ts';
import { parseGceMaintenanceEvent, parseGcePreempted, parseGceUpcomingMaintenance } from '../clouds/gcp/parse.ts';
import { type ParsedDocument, parseJsonText } from '../clouds/notice.ts';

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
  const json = () => (text === undefined ? undefined : parseJsonText(source, text));
  switch (source) {
    case 'azure-scheduled-events':
      return parseAzureScheduledEvents(json());
    case 'aws-scheduled-events':
      return parseEc2ScheduledEvents(json() ?? []);
    case 'aws-spot-instance-action':
      return parseSpotInstanceAction(json());
    case 'aws-rebalance-recommendation':
      return parseRebalanceRecommendation(json());
    case 'gcp-maintenance-event':
      return parseGceMaintenanceEvent(text ?? '', etag);
    case 'gcp-upcoming-maintenance':
      return parseGceUpcomingMaintenance(json());
    case 'gcp-preempted':
      return parseGcePreempted(text ?? '', noticedAt);
    case 'aws-health':
    case 'aws-spot-interruption-warning':
      throw new DrainbridgeError(`${source} is not a metadata document (it arrives as an EventBridge event)`);
    default:
      // Every source is a case above: a new one that is not fails to compile here.
      return unknownSource(source);
  }
}

function unknownSource(source: never): never {
  throw new DrainbridgeError(`unknown notice source ${String(source)}`);
}
