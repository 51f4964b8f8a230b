/**
 * Turns the configured Kubernetes access into a client-node KubeConfig. The one place credentials
 * for the cluster are read. In Lambda (aws mode) a kubeconfig whose user runs an `exec` plugin or an
 * auth-provider is refused: there is no aws-iam-authenticator / kubectl binary to run there.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { SERVICE_ACCOUNT_DIR, SERVICE_ACCOUNT_DIR_VARIABLE, serviceAccountDir } from '../clients/kube/http/endpoint.ts';
import { ConfigError } from '../errors/index.ts';
import { registerSecret } from '../log/redact.ts';
import { resolveMaybeRef, resolveSecretRef, type SecretFetcher } from '../secrets/secret-refs.ts';
import { credentialFileProblem } from '../util/yaml-error-line.ts';
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

/** Where a pod's ServiceAccount token is mounted (what in-cluster access reads). */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * In-cluster access outside a pod would fail later as "Invalid URL" (no KUBERNETES_SERVICE_HOST): say
 * what is missing and what to use instead.
 */
function checkInCluster(env: Readonly<Record<string, string | undefined>>, tokenFile: string): void {
  const missing = [
    ...(env.KUBERNETES_SERVICE_HOST ? [] : ['KUBERNETES_SERVICE_HOST is not set']),
    ...(env.KUBERNETES_SERVICE_PORT ? [] : ['KUBERNETES_SERVICE_PORT is not set']),
    ...(existsSync(tokenFile) ? [] : [`there is no ServiceAccount token at ${tokenFile}`]),
  ];
  if (missing.length === 0) return;
  throw new ConfigError([
    {
      path: 'DRAINBRIDGE_KUBE_ACCESS',
      message: `in-cluster access needs a pod's ServiceAccount, and this process does not run in one (${missing.join('; ')}): outside the cluster use DRAINBRIDGE_KUBE_ACCESS=kubeconfig (KUBECONFIG or --kubeconfig); a ServiceAccount mounted elsewhere: ${SERVICE_ACCOUNT_DIR_VARIABLE}`,
    },
  ]);
}

/**
 * client-node's in-cluster configuration, reading the ServiceAccount's token and CA where
 * DRAINBRIDGE_SERVICE_ACCOUNT_DIR says (the lean client, lib/clients/kube/http, reads the same directory).
 */
function loadInCluster(kc: KubeConfig, env: Readonly<Record<string, string | undefined>>): void {
  const dir = serviceAccountDir(env);
  checkInCluster(env, dir === SERVICE_ACCOUNT_DIR ? SERVICE_ACCOUNT_TOKEN : join(dir, 'token'));
  kc.loadFromCluster();
  if (dir === SERVICE_ACCOUNT_DIR) return;
  kc.loadFromOptions({
    clusters: kc.clusters.map((cluster) => ({ ...cluster, caFile: join(dir, 'ca.crt') })),
    users: kc.users.map((user) => ({
      ...user,
      authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } },
    })),
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
  });
}

/**
 * A plain-HTTP server would get drainbridge's credentials in clear text; the client refuses it later with
 * a line that names nothing to change. Refuse it here, naming what to set.
 */
function checkScheme(kc: KubeConfig, variable: string, file?: string): void {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server.startsWith('http://') || cluster.skipTLSVerify) return;
  const fix = file
    ? `use the cluster's https:// address as the server of cluster "${cluster.name}" in ${file}, or, for a local test cluster only, set insecure-skip-tls-verify: true on it`
    : `set ${variable} to the https:// address of the API server`;
  throw new ConfigError([
    {
      path: variable,
      message: `the API server ${cluster.server} is plain HTTP, and drainbridge sends its credentials only over TLS: ${fix}`,
    },
  ]);
}

/** Builds the KubeConfig for `config.kube`; secret references are resolved with `fetch`. */
export async function buildKubeConfig(
  config: Pick<Config, 'kube' | 'mode'>,
  fetch?: SecretFetcher,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<KubeConfig> {
  const kc = new KubeConfig();
  const access = config.kube;
  switch (access.source) {
    case 'in-cluster':
      loadInCluster(kc, env);
      break;
    case 'kubeconfig': {
      const path = access.path ?? join(homedir(), '.kube', 'config');
      try {
        kc.loadFromFile(path);
      } catch (error) {
        // Never the parser's message: it quotes the lines around the error, which may hold a token.
        throw new ConfigError([
          { path: 'KUBECONFIG', message: `cannot read kubeconfig ${path}: ${credentialFileProblem(error)}` },
        ]);
      }
      selectContext(kc, access.context, path);
      checkUser(kc, config.mode, 'KUBECONFIG');
      checkScheme(kc, 'KUBECONFIG', path);
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
      checkScheme(kc, 'DRAINBRIDGE_KUBECONFIG_REF', 'the kubeconfig of that secret');
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
      checkScheme(kc, 'DRAINBRIDGE_KUBE_SERVER');
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
