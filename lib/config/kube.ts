/**
 * Turns the configured Kubernetes access into a client-node KubeConfig. The one place credentials
 * for the cluster are read. In Lambda (aws mode) a kubeconfig whose user runs an `exec` plugin or an
 * auth-provider is refused: there is no aws-iam-authenticator / kubectl binary to run there.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '../errors/index.ts';
import { registerSecret } from '../log/redact.ts';
import { resolveMaybeRef, resolveSecretRef, type SecretFetcher } from '../secrets/secret-refs.ts';
import { buildEksKubeConfig, EksTokenSource } from './eks.ts';
import type { Config } from './schema.ts';

function selectContext(kc: KubeConfig, context: string | undefined, where: string): void {
  if (!context) return;
  if (!kc.getContexts().some((c) => c.name === context)) {
    throw new ConfigError([{ path: 'DRAINBRIDGE_KUBE_CONTEXT', message: `context "${context}" is not in ${where}` }]);
  }
  kc.setCurrentContext(context);
}

/** Registers the user's secrets with the redactor and refuses plugins where they cannot run. */
function checkUser(kc: KubeConfig, mode: Config['mode'], where: string): void {
  const user = kc.getCurrentUser();
  if (!user) throw new ConfigError([{ path: where, message: 'the current context names no user' }]);
  registerSecret(user.token);
  registerSecret(user.password);
  registerSecret(user.keyData);
  if (mode === 'aws' && (user.exec || user.authProvider)) {
    throw new ConfigError([
      {
        path: where,
        message: `user "${user.name}" authenticates with an ${user.exec ? 'exec plugin' : 'auth-provider'}, which cannot run in Lambda; for EKS set DRAINBRIDGE_KUBE_ACCESS=eks (a token presigned in-process), otherwise store a kubeconfig with a bearer token (or client certificate)`,
      },
    ]);
  }
}

/** Builds the KubeConfig for `config.kube`; secret references are resolved with `fetch`. */
export async function buildKubeConfig(
  config: Pick<Config, 'kube' | 'mode'>,
  fetch?: SecretFetcher,
): Promise<KubeConfig> {
  const kc = new KubeConfig();
  const access = config.kube;
  switch (access.source) {
    case 'in-cluster':
      kc.loadFromCluster();
      break;
    case 'kubeconfig': {
      const path = access.path ?? join(homedir(), '.kube', 'config');
      try {
        kc.loadFromFile(path);
      } catch (error) {
        throw new ConfigError([
          { path: 'KUBECONFIG', message: `cannot read kubeconfig ${path}: ${(error as Error).message}` },
        ]);
      }
      selectContext(kc, access.context, path);
      checkUser(kc, config.mode, 'KUBECONFIG');
      break;
    }
    case 'secret': {
      const text = await resolveSecretRef(access.kubeconfigRef, fetch);
      try {
        kc.loadFromString(text);
      } catch {
        throw new ConfigError([
          { path: 'DRAINBRIDGE_KUBECONFIG_REF', message: 'the secret does not hold a valid kubeconfig' },
        ]);
      }
      selectContext(kc, access.context, access.kubeconfigRef);
      checkUser(kc, config.mode, 'DRAINBRIDGE_KUBECONFIG_REF');
      break;
    }
    case 'token': {
      const token = await resolveMaybeRef(access.token, fetch);
      kc.loadFromOptions({
        clusters: [{ name: 'drainbridge', server: access.server, ...(access.caData ? { caData: access.caData } : {}) }],
        users: [{ name: 'drainbridge', token }],
        contexts: [{ name: 'drainbridge', cluster: 'drainbridge', user: 'drainbridge' }],
        currentContext: 'drainbridge',
      });
      break;
    }
    case 'eks': {
      const source = new EksTokenSource({ clusterName: access.clusterName, region: access.region });
      // Mint once now so that missing credentials fail at start, not on the first API call.
      await source.token();
      return buildEksKubeConfig(access, source);
    }
  }
  return kc;
}
