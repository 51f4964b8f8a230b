/**
 * EKS access without exec plugins: the bearer token `aws eks get-token` / aws-iam-authenticator make,
 * minted in-process. The token is `k8s-aws-v1.` + base64url (no padding) of a SigV4 query-presigned
 * `GET https://sts.<region>.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15` whose signed
 * headers include `x-k8s-aws-id: <cluster name>`. The API server's authenticator replays that URL to
 * STS to learn the caller, so only the Lambda role's credentials are needed (from the default chain).
 *
 * STS accepts the presigned URL for 15 minutes after its X-Amz-Date whatever X-Amz-Expires says, so
 * the token source mints a fresh one well before that, and a client-node Authenticator puts the
 * current token on every request (the KubeConfig itself never holds a token that could go stale).
 */
import { createHash, createHmac, type Hmac, type Hash as NodeHash } from 'node:crypto';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { TransientError } from '../errors/index.ts';
import { registerSecret } from '../log/redact.ts';
import { namedExports } from '../util/named-exports.ts';
import { withRetry } from '../util/retry.ts';

/** The prefix aws-iam-authenticator's verifier requires. */
export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
/** The header that binds a token to one cluster; it must be signed, never hoisted into the query. */
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/**
 * X-Amz-Expires: ignored by STS (the URL lives 15 minutes regardless), but authenticator servers of
 * 0.3.0 and older reject values over 60, so every token generator sends 60.
 */
export const PRESIGN_EXPIRES_SECONDS = 60;
/** How long STS honours the presigned URL after X-Amz-Date. */
export const TOKEN_LIFETIME_MS = 15 * 60_000;
/** Mint a new token after this long: 5 minutes of margin for clock skew and slow requests. */
export const TOKEN_REFRESH_AFTER_MS = 10 * 60_000;

const STS_ACTION_QUERY = { Action: 'GetCallerIdentity', Version: '2011-06-15' } as const;
const CREDENTIALS_TIMEOUT_MS = 5_000;

/** AWS credentials as the SDK's providers return them. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** Returns current credentials; the SDK's default chain refreshes expiring ones itself. */
export type CredentialSource = () => Promise<AwsCredentials>;

/** SHA-256 (and HMAC-SHA-256 when given a secret) over node:crypto, in the shape SignatureV4 expects. */
class NodeSha256 {
  readonly #hash: NodeHash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** The regional STS endpoint (aws-iam-authenticator validates the host against the partition's list). */
export function stsHostname(region: string): string {
  return `sts.${region}.${region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com'}`;
}

/** RFC 3986 query encoding, as SigV4 canonicalises it. */
function encodeRfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** One minted token and when it stops being accepted. */
export interface EksToken {
  readonly token: string;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
}

export interface PresignParams {
  readonly clusterName: string;
  readonly region: string;
  readonly credentials: AwsCredentials;
  readonly signingDate: Date;
}

/** Mints one EKS bearer token: same inputs, same token. The token is registered with the log redactor. */
export async function presignEksToken(params: PresignParams): Promise<EksToken> {
  const hostname = stsHostname(params.region);
  // Loaded when a token is first minted: only `eks` access needs the signer (a cold import pays for nothing else).
  const { SignatureV4 } = namedExports(await import('@smithy/signature-v4'), 'SignatureV4');
  const signer = new SignatureV4({
    service: 'sts',
    region: params.region,
    credentials: params.credentials,
    sha256: NodeSha256,
  });
  const presigned = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { ...STS_ACTION_QUERY },
      headers: { host: hostname, [CLUSTER_ID_HEADER]: params.clusterName },
    },
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: params.signingDate },
  );
  const query = Object.entries(presigned.query ?? {})
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, value]) => `${encodeRfc3986(key)}=${encodeRfc3986(value)}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  const token = EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url');
  registerSecret(token);
  const issuedAt = new Date(params.signingDate.getTime());
  return { token, issuedAt, expiresAt: new Date(issuedAt.getTime() + TOKEN_LIFETIME_MS) };
}

export interface EksTokenSourceOptions {
  readonly clusterName: string;
  readonly region: string;
  /** Default: the AWS SDK's default chain (in Lambda: the function role's environment credentials). */
  readonly credentials?: CredentialSource;
  /** Injected for tests. */
  readonly now?: () => Date;
  /** Injected for tests: retry pauses. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The SDK's default credential chain, its module loaded on the first call (not at import). */
function defaultCredentials(): CredentialSource {
  let provider: CredentialSource | undefined;
  return async () => {
    if (!provider) {
      const { defaultProvider } = namedExports(await import('@aws-sdk/credential-provider-node'), 'defaultProvider');
      provider = defaultProvider();
    }
    return provider();
  };
}

/** Rejects with TransientError when `promise` has not settled after `ms`; never leaves a timer behind. */
async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TransientError(`${what} timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Hands out a valid token, minting a new one when the current one is older than TOKEN_REFRESH_AFTER_MS.
 * Concurrent callers during a refresh share one mint.
 */
export class EksTokenSource {
  readonly #options: EksTokenSourceOptions;
  readonly #credentials: CredentialSource;
  readonly #now: () => Date;
  #current: EksToken | undefined;
  #minting: Promise<EksToken> | undefined;

  constructor(options: EksTokenSourceOptions) {
    this.#options = options;
    this.#credentials = options.credentials ?? defaultCredentials();
    this.#now = options.now ?? (() => new Date());
  }

  /** A token valid for at least TOKEN_LIFETIME_MS - TOKEN_REFRESH_AFTER_MS from now. */
  async token(): Promise<string> {
    const current = this.#current;
    if (current && this.#now().getTime() - current.issuedAt.getTime() < TOKEN_REFRESH_AFTER_MS) return current.token;
    this.#minting ??= this.#mint().finally(() => {
      this.#minting = undefined;
    });
    return (await this.#minting).token;
  }

  async #mint(): Promise<EksToken> {
    const credentials = await this.#fetchCredentials();
    const minted = await presignEksToken({
      clusterName: this.#options.clusterName,
      region: this.#options.region,
      credentials,
      signingDate: this.#now(),
    });
    this.#current = minted;
    return minted;
  }

  /**
   * The only external call (the container-credentials endpoint or IMDS outside Lambda): bounded and
   * retried, since fetching credentials changes nothing. Ends as TransientError, which the workflow retries.
   */
  async #fetchCredentials(): Promise<AwsCredentials> {
    try {
      return await withRetry(() => withTimeout(this.#credentials(), CREDENTIALS_TIMEOUT_MS, 'AWS credentials'), {
        attempts: 3,
        baseDelayMs: 200,
        maxDelayMs: 1_000,
        isRetryable: () => true,
        ...(this.#options.sleep ? { sleep: this.#options.sleep } : {}),
      });
    } catch (error) {
      const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new TransientError(`EKS token for cluster ${this.#options.clusterName}: no AWS credentials (${why})`, {
        cause: error,
      });
    }
  }
}

/** The auth-provider name the KubeConfig's user carries so that the authenticator below picks it up. */
export const EKS_AUTH_PROVIDER = 'drainbridge-eks';

type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/** A client-node Authenticator that sets `Authorization: Bearer <current token>` on every request. */
export function eksAuthenticator(source: EksTokenSource): Authenticator {
  return {
    isAuthProvider: (user: User) => (user.authProvider as { name?: unknown } | undefined)?.name === EKS_AUTH_PROVIDER,
    applyAuthentication: async (_user, opts) => {
      const token = await source.token();
      opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
    },
  };
}

/** What the `eks` access source needs. */
export interface EksAccess {
  readonly clusterName: string;
  readonly region: string;
  readonly server: string;
  /** The cluster's CA bundle, base64 PEM (`aws eks describe-cluster … certificateAuthority.data`). */
  readonly caData: string;
}

/**
 * A KubeConfig for an EKS cluster whose requests carry tokens from `source`. The user has no `token`
 * field on purpose: client-node would send that static value after the authenticator's header.
 */
export function buildEksKubeConfig(access: EksAccess, source: EksTokenSource): KubeConfig {
  const kc = new KubeConfig();
  kc.addAuthenticator(eksAuthenticator(source));
  kc.loadFromOptions({
    clusters: [{ name: access.clusterName, server: access.server, caData: access.caData, skipTLSVerify: false }],
    users: [{ name: 'drainbridge', authProvider: { name: EKS_AUTH_PROVIDER, config: {} } }],
    contexts: [{ name: 'drainbridge', cluster: access.clusterName, user: 'drainbridge' }],
    currentContext: 'drainbridge',
  });
  return kc;
}
