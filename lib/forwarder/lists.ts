/**
 * The informers' list calls: every page of a collection (limit/continue) through the one KubeClient
 * (timeout, retries, named errors), returned as one list carrying the first page's resourceVersion — the
 * snapshot every page belongs to, and where the watch resumes.
 */
import type { KubernetesListObject, KubernetesObject, V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.ts';

interface Page<T> {
  readonly items: T[];
  readonly metadata?: { readonly resourceVersion?: string; readonly _continue?: string; readonly continue?: string };
}

const PAGE_SIZE = 500;

async function allPages<T extends KubernetesObject>(
  fetchPage: (page: { limit: number; _continue?: string }) => Promise<Page<T>>,
): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  let resourceVersion: string | undefined;
  let token: string | undefined;
  do {
    const page = await fetchPage({ limit: PAGE_SIZE, ...(token ? { _continue: token } : {}) });
    items.push(...page.items);
    resourceVersion ??= page.metadata?.resourceVersion;
    token = page.metadata?._continue || page.metadata?.continue || undefined;
  } while (token);
  return { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: resourceVersion ?? '' } };
}

export function listNodes(client: KubeClient): Promise<KubernetesListObject<V1Node>> {
  return allPages((page) => client.call('list nodes', (o) => client.core.listNode(page, o)));
}

/** A cluster-scoped custom resource, e.g. NodeMaintenances or Evacuations. */
export function listClusterObjects<T extends KubernetesObject>(
  client: KubeClient,
  api: { readonly group: string; readonly version: string; readonly plural: string },
): Promise<KubernetesListObject<T>> {
  return allPages((page) =>
    client.call(`list ${api.plural}`, async (o) => {
      const listed: unknown = await client.custom.listClusterCustomObject({ ...api, ...page }, o);
      return listed as Page<T>;
    }),
  );
}

/** The watch path of a cluster-scoped custom resource. */
export function clusterObjectsPath(api: {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}): string {
  return `/apis/${api.group}/${api.version}/${api.plural}`;
}
