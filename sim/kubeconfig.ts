/** A kubeconfig (YAML) for one simulator URL and bearer token. */
import { stringify } from 'yaml';

/**
 * Renders a kubeconfig with one cluster, one user and one current context, all named
 * `drainbridge-sim`. `caPem` (the serving certificate) is embedded as `certificate-authority-data`.
 */
export function renderKubeconfig(server: string, token: string, caPem?: string): string {
  const name = 'drainbridge-sim';
  const cluster: Record<string, string> = { server };
  if (caPem) cluster['certificate-authority-data'] = Buffer.from(caPem).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}
