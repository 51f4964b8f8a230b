/**
 * The lean Kubernetes HTTP client (see client.ts): the forwarder's and the node agent's way to the API
 * server without client-node at run time.
 */
export {
  type CallSettings,
  type ClusterResource,
  KubeHttpClient,
  type KubeHttpClientOptions,
  kubeJson,
  type ListPage,
  type WatchEvent,
} from './client.ts';
export { inClusterEndpoint, type KubeEndpoint, loadKubeEndpoint, type TlsSettings } from './endpoint.ts';
