/**
 * Where the API server is and how a request proves who it is, for the lean HTTP client: read directly
 * for the common cases — the pod's ServiceAccount (in-cluster) and kubeconfig files whose user has a
 * token, a token file, a client certificate or a password — and through client-node's KubeConfig for
 * the rest (exec plugins, auth-providers, proxies, kubeconfigs held in a secret, EKS), which the caller
 * loads only then (lib/config builds it): client-node costs ~45 MiB of resident memory just by being imported.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../../../errors/index.ts';
import { registerSecret } from '../../../log/redact.ts';
import { setting, textsOf } from '../../../settings/setting.ts';
import { credentialFileProblem } from '../../../util/yaml-error-line.ts';

export interface TlsSettings {
  readonly ca?: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly rejectUnauthorized: boolean;
  readonly servername?: string;
}

/** How to reach the cluster: lib/config's `KubeAccess` (`in-cluster` and `kubeconfig` are read here). */
export interface KubeAccessInput {
  readonly source: string;
  /** kubeconfig: the file (default ~/.kube/config) and the context (default its current one). */
  readonly path?: string;
  readonly context?: string;
}

/** The part of client-node's KubeConfig used for the accesses read through it. */
export interface KubeConfigLike {
  getCurrentCluster(): { readonly server: string } | null;
  applyToHTTPSOptions(options: object): Promise<void>;
}

export interface KubeEndpoint {
  readonly server: URL;
  readonly tls: TlsSettings;
  /** The `Authorization` header for the next request (a token file is read again as it rotates). */
  authorization(): Promise<string | undefined>;
}

/** The ServiceAccount's files in every pod. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** In-cluster access's one setting, declared once (lib/settings/setting.ts; docs/configuration.md). */
export const IN_CLUSTER_SETTINGS = {
  /**
   * Where in-cluster access reads the ServiceAccount's `token` and `ca.crt` from, when not the standard
   * mount: a pod that mounts a projected token elsewhere (`automountServiceAccountToken: false` and a
   * projected volume), or a test with a ServiceAccount directory of its own.
   */
  serviceAccountDir: setting({
    env: 'DRAINBRIDGE_SERVICE_ACCOUNT_DIR',
    parse: z.string(),
    default: SERVICE_ACCOUNT_DIR,
    help: "`in-cluster` access: the directory of the pod's ServiceAccount `token` and `ca.crt`, when mounted elsewhere (a projected volume)",
    readBy: ['functions', 'cli', 'run', 'forwarder', 'node-agent'],
  }),
};

export const SERVICE_ACCOUNT_DIR_VARIABLE = IN_CLUSTER_SETTINGS.serviceAccountDir.env;

/** The ServiceAccount directory in-cluster access reads (lib/config's client-node access reads the same). */
export function serviceAccountDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return textsOf(IN_CLUSTER_SETTINGS, env, { emptyIsUnset: true })[SERVICE_ACCOUNT_DIR_VARIABLE] ?? SERVICE_ACCOUNT_DIR;
}

/** A projected ServiceAccount token is rotated by the kubelet: read it again at most this often (client-go: 1 min). */
const TOKEN_FILE_REFRESH_MS = 60_000;

/** Reads a token file, again once it may have changed; the value is registered with the log redactor. */
export function tokenFileReader(path: string, now: () => number = Date.now): () => string {
  let cached: { token: string; readAt: number; mtimeMs: number } | undefined;
  return () => {
    const at = now();
    if (cached && at - cached.readAt < TOKEN_FILE_REFRESH_MS) return cached.token;
    const mtimeMs = statSync(path).mtimeMs;
    if (cached && cached.mtimeMs === mtimeMs) {
      cached = { ...cached, readAt: at };
      return cached.token;
    }
    const token = readFileSync(path, 'utf8').trim();
    registerSecret(token);
    cached = { token, readAt: at, mtimeMs };
    return token;
  };
}

/** The pod's own ServiceAccount, as client-go's rest.InClusterConfig reads it. */
export function inClusterEndpoint(env: NodeJS.ProcessEnv = process.env, dir = serviceAccountDir(env)): KubeEndpoint {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const tokenPath = join(dir, 'token');
  const caPath = join(dir, 'ca.crt');
  const missing = [
    ...(host ? [] : ['KUBERNETES_SERVICE_HOST is not set']),
    ...(port ? [] : ['KUBERNETES_SERVICE_PORT is not set']),
    ...(existsSync(tokenPath) ? [] : [`there is no ServiceAccount token at ${tokenPath}`]),
    ...(existsSync(caPath) ? [] : [`there is no cluster CA at ${caPath}`]),
  ];
  if (missing.length > 0) {
    throw new ConfigError([
      {
        path: 'DRAINBRIDGE_KUBE_ACCESS',
        message: `in-cluster access needs a pod's ServiceAccount (${missing.join('; ')}): not running in a pod? Outside the cluster use DRAINBRIDGE_KUBE_ACCESS=kubeconfig; a ServiceAccount mounted elsewhere: ${SERVICE_ACCOUNT_DIR_VARIABLE}`,
      },
    ]);
  }
  const token = tokenFileReader(tokenPath);
  return {
    server: new URL(`https://${host?.includes(':') ? `[${host}]` : host}:${port}`),
    tls: { ca: readFileSync(caPath), rejectUnauthorized: true },
    authorization: async () => `Bearer ${token()}`,
  };
}

type Fields = Readonly<Record<string, unknown>>;

/** `clusters[name=…].cluster` and the like. */
function entryNamed(list: unknown, field: string, name: string): Fields | undefined {
  if (!Array.isArray(list)) return undefined;
  const found = (list as (Fields | null)[]).find((entry) => entry?.name === name);
  const value = found?.[field];
  return typeof value === 'object' && value !== null ? (value as Fields) : undefined;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Inline base64 data, or a file (relative to the kubeconfig's folder). */
function material(fields: Fields, key: string, base: string): Buffer | undefined {
  const data = text(fields[`${key}-data`]);
  if (data) return Buffer.from(data, 'base64');
  const file = text(fields[key]);
  return file ? readFileSync(isAbsolute(file) ? file : join(base, file)) : undefined;
}

/** The user's credentials as an Authorization header: a token, a token file (read again as it rotates), or a password. */
function authorizationOf(user: Fields, base: string): () => Promise<string | undefined> {
  const token = text(user.token);
  const tokenFile = text(user.tokenFile);
  const username = text(user.username);
  const password = text(user.password);
  registerSecret(token);
  registerSecret(password);
  if (token) return async () => `Bearer ${token}`;
  if (tokenFile) {
    const read = tokenFileReader(isAbsolute(tokenFile) ? tokenFile : join(base, tokenFile));
    return async () => `Bearer ${read()}`;
  }
  const basic = username ? `Basic ${Buffer.from(`${username}:${password ?? ''}`).toString('base64')}` : undefined;
  return async () => basic;
}

function tlsOf(cluster: Fields, user: Fields, base: string): TlsSettings {
  const ca = material(cluster, 'certificate-authority', base);
  const cert = material(user, 'client-certificate', base);
  const key = material(user, 'client-key', base);
  const servername = text(cluster['tls-server-name']);
  return {
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
    ...(servername ? { servername } : {}),
  };
}

/** What a kubeconfig's context names, if the lean client can use it as it is (undefined: use client-node). */
function leanFromKubeconfig(document: Fields, context: string, where: string): KubeEndpoint | undefined {
  const selected = entryNamed(document.contexts, 'context', context);
  if (!selected) {
    throw new ConfigError([{ path: 'KUBECONFIG', message: `context "${context}" is not in ${where}` }]);
  }
  const cluster = entryNamed(document.clusters, 'cluster', String(selected.cluster ?? '')) ?? {};
  const user = entryNamed(document.users, 'user', String(selected.user ?? '')) ?? {};
  const server = text(cluster.server);
  if (!server) throw new ConfigError([{ path: 'KUBECONFIG', message: `context "${context}" names no cluster server` }]);
  if (user.exec || user['auth-provider'] || cluster['proxy-url']) return undefined;
  const base = dirname(where);
  return { server: new URL(server), tls: tlsOf(cluster, user, base), authorization: authorizationOf(user, base) };
}

/** A kubeconfig file, read the lean way when its user allows it. */
function kubeconfigEndpoint(path: string, context: string | undefined): KubeEndpoint | undefined {
  let document: Fields;
  try {
    document = parse(readFileSync(path, 'utf8')) as Fields;
  } catch (error) {
    // Never the parser's message: it quotes the line of the error, which may hold a token.
    throw new ConfigError([
      { path: 'KUBECONFIG', message: `cannot read kubeconfig ${path}: ${credentialFileProblem(error)}` },
    ]);
  }
  const current = context ?? text(document['current-context']);
  if (!current) throw new ConfigError([{ path: 'KUBECONFIG', message: `${path} names no current context` }]);
  return leanFromKubeconfig(document, current, path);
}

/** Through client-node's KubeConfig, for what the lean reading does not cover. */
async function clientNodeEndpoint(kc: KubeConfigLike): Promise<KubeEndpoint> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new ConfigError([{ path: 'KUBECONFIG', message: 'the current context names no cluster' }]);
  const applied: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean; servername?: string } = {};
  await kc.applyToHTTPSOptions(applied);
  return {
    server: new URL(cluster.server),
    tls: {
      ...(applied.ca ? { ca: applied.ca } : {}),
      ...(applied.cert ? { cert: applied.cert } : {}),
      ...(applied.key ? { key: applied.key } : {}),
      rejectUnauthorized: applied.rejectUnauthorized !== false,
      ...(applied.servername ? { servername: applied.servername } : {}),
    },
    authorization: async () => {
      const options: { headers: Record<string, string>; auth?: string } = { headers: {} };
      await kc.applyToHTTPSOptions(options);
      if (options.headers.Authorization) return options.headers.Authorization;
      return options.auth ? `Basic ${Buffer.from(options.auth).toString('base64')}` : undefined;
    },
  };
}

/**
 * The endpoint for a configured Kubernetes access: read here for in-cluster and simple kubeconfigs,
 * otherwise through the KubeConfig `loadKubeConfig` builds (lib/config's buildKubeConfig, imported lazily).
 */
export async function loadKubeEndpoint(
  access: KubeAccessInput,
  loadKubeConfig: () => Promise<KubeConfigLike>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<KubeEndpoint> {
  if (access.source === 'in-cluster') return inClusterEndpoint(env);
  if (access.source === 'kubeconfig') {
    const lean = kubeconfigEndpoint(access.path ?? join(homedir(), '.kube', 'config'), access.context);
    if (lean) return lean;
  }
  return clientNodeEndpoint(await loadKubeConfig());
}
