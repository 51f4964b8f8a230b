/**
 * The forwarder's (and the node agent's) Kubernetes client for a configuration: the lean one
 * (lib/clients/kube/http). For accesses it does not read itself (exec plugins, EKS, a kubeconfig in a secret) it
 * goes through lib/config's client-node KubeConfig, imported only then.
 */

import { KubeHttpClient, type KubeHttpClientOptions } from '../../clients/kube/http/client.ts';
import type { Config } from '../../config/schema.ts';

export function connectKube(
  config: Pick<Config, 'kube' | 'mode'>,
  options: KubeHttpClientOptions = {},
): Promise<KubeHttpClient> {
  return KubeHttpClient.connect(
    config.kube,
    async () => (await import('../../config/kube.ts')).buildKubeConfig(config),
    options,
  );
}
