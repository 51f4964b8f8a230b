/**
 * What `drainbridge run` asked of the scale section's simulator while the requests ran, from the
 * simulator's request log. Pure: it classifies records, it never reads the log itself.
 *
 * A cluster-wide list is a list of every node, or of pods in every namespace, without a label or field
 * selector (counted once however many pages it took). Two kinds are told apart by what the same user asks next on the same resource:
 *  - an informer's (re)list is followed by its watch (list, then watch from the list's resourceVersion:
 *    client-go's and drainbridge's informers alike) — one at start, and again only when a watch expired;
 *  - any other is a list made for one request (e.g. finding the node a cloud instance id names), the cost
 *    that grows with requests × cluster size.
 */
import type { RequestRecord } from '../../sim/server/request-log.ts';
import { countKinds, type RequestKinds } from './requests.ts';

/** What the run user asked while the requests ran. */
export interface ScaleRequests {
  readonly total: number;
  readonly writes: number;
  readonly kinds: RequestKinds;
  /** Cluster-wide node lists followed by a node watch (an informer's list or relist). */
  readonly informerNodeLists: number;
  /** Cluster-wide node lists not followed by a watch: made for a request. */
  readonly requestNodeLists: number;
  /** Cluster-wide pod lists followed by a pod watch. */
  readonly informerPodLists: number;
  /** Cluster-wide pod lists not followed by a watch. */
  readonly requestPodLists: number;
  /** Reads of the admission Lease: one per admission attempt. */
  readonly admissionAttempts: number;
}

function isClusterWideList(record: RequestRecord): boolean {
  return (
    record.verb === 'list' &&
    record.namespace === '' &&
    (record.resource === 'nodes' || record.resource === 'pods') &&
    record.subresource === '' &&
    !/[?&](labelSelector|fieldSelector)=./.test(record.query) &&
    // A later page of a paged list (500 objects a page) is part of the list its first page began.
    !/[?&]continue=./.test(record.query)
  );
}

function isLaterPage(record: RequestRecord): boolean {
  return record.verb === 'list' && /[?&]continue=./.test(record.query);
}

/** Whether the user's next request on the same resource after `index` is a watch (an informer's list). */
function followedByWatch(records: readonly RequestRecord[], index: number): boolean {
  const list = records[index] as RequestRecord;
  for (const next of records.slice(index + 1)) {
    if (next.resource !== list.resource || next.group !== list.group || isLaterPage(next)) continue;
    return next.verb === 'watch';
  }
  return false;
}

/** The run user's requests, summarised (records in log order). */
export function summarizeScaleRequests(records: readonly RequestRecord[], user: string): ScaleRequests {
  const mine = records.filter((record) => record.user === user);
  const counts = { informerNodeLists: 0, requestNodeLists: 0, informerPodLists: 0, requestPodLists: 0 };
  mine.forEach((record, index) => {
    if (!isClusterWideList(record)) return;
    const informer = followedByWatch(mine, index);
    if (record.resource === 'nodes') counts[informer ? 'informerNodeLists' : 'requestNodeLists']++;
    else counts[informer ? 'informerPodLists' : 'requestPodLists']++;
  });
  return {
    total: mine.length,
    writes: mine.filter((r) => r.write && !(r.resource === 'pods' && r.subresource === 'eviction')).length,
    kinds: countKinds(mine),
    ...counts,
    admissionAttempts: mine.filter((r) => r.verb === 'get' && r.name === 'drainbridge-admission').length,
  };
}
