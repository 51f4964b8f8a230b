/** What a Forwarder under test needs to reach the cluster of a kubeconfig file: the lean client, as deployed. */

import type { KubeHttpClient } from '../../lib/clients/kube/http/client.ts';
import { connectKube } from '../../lib/sources/forwarder/kube.ts';

export async function connectForwarderKube(
  kubeconfigPath: string,
  options: { timeoutMs?: number } = {},
): Promise<{ client: KubeHttpClient }> {
  const config = { mode: 'embedded' as const, kube: { source: 'kubeconfig' as const, path: kubeconfigPath } };
  return { client: await connectKube(config, { retry: { attempts: 1 }, ...options }) };
}
