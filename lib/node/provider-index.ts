/**
 * Which node a providerID or cloud instance target names, without listing every node for every request.
 * Kubernetes has no selector on `spec.providerID` (nodes take field selectors on `metadata.name` and
 * `spec.unschedulable` only), so the first such request lists every node once and keeps, per client, only
 * each node's name and providerID. A later request that finds exactly one node in that index reads that
 * node alone and uses it if it still has the providerID; otherwise — nothing or several found, the node gone
 * or changed, or the index older than its maximum age — every node is listed again and the index replaced.
 *
 * A list in flight is shared by the requests that arrive meanwhile. Deps are built once per Lambda container or embedded run (lib/workflow/deps.ts), so one list serves a
 * warm container's or a `run` process's requests: 500 cloud notices at 5,000 nodes cost one list of 5,000
 * nodes and 500 node reads, not 500 lists. The maximum age bounds how long a node that joined with a
 * providerID already in the index (a node re-registered under a new name) can go unseen: a fresh list
 * finds both and the target is refused as ambiguous, as without the index.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { isNotFound } from '../clients/kube/errors.ts';

/** How long an index answers before every node is listed again. */
export const PROVIDER_INDEX_MAX_AGE_MS = 60_000;

interface ProviderIndex {
  readonly listedAt: number;
  /**
   * Each node's name and providerID only (a few dozen bytes a node, not the whole object) — a promise, so
   * that requests arriving together (a burst of notices) share the one list in flight.
   */
  readonly nodes: Promise<readonly V1Node[]>;
}

const indexes = new WeakMap<KubeClient, ProviderIndex>();

function slim(node: V1Node): V1Node {
  return { metadata: { name: node.metadata?.name ?? '' }, spec: { providerID: node.spec?.providerID ?? '' } };
}

/** Every node, listed now (the index replaced with what the list finds; dropped if the list fails). */
function listAndIndex(client: KubeClient, now: number): Promise<readonly V1Node[]> {
  const nodes = client.listNodes().then((listed) => listed.map(slim));
  const index = { listedAt: now, nodes };
  indexes.set(client, index);
  nodes.catch(() => {
    if (indexes.get(client) === index) indexes.delete(client);
  });
  return nodes;
}

/** The one indexed node `match` picks, read again: undefined when it is gone or no longer matches. */
async function confirmed(
  client: KubeClient,
  name: string,
  match: (nodes: readonly V1Node[]) => V1Node[],
): Promise<V1Node | undefined> {
  try {
    const node = slim(await client.getNode(name));
    return match([node]).length === 1 ? node : undefined;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * The nodes `match` picks among every node (name and providerID only): from the index when it names exactly
 * one node that still matches, else from a fresh list of every node.
 */
export async function nodesMatching(
  client: KubeClient,
  match: (nodes: readonly V1Node[]) => V1Node[],
  clock: () => number = Date.now,
): Promise<V1Node[]> {
  const index = indexes.get(client);
  const now = clock();
  if (index && now - index.listedAt < PROVIDER_INDEX_MAX_AGE_MS) {
    const indexed = match(await index.nodes);
    const name = indexed.length === 1 ? indexed[0]?.metadata?.name : undefined;
    const node = name ? await confirmed(client, name, match) : undefined;
    if (node) return [node];
  }
  return match(await listAndIndex(client, now));
}
