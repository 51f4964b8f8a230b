/**
 * The settings of the bus endpoint that `drainbridge run` serves to the node agents (bus-endpoint.ts),
 * from the environment: where run listens, where an agent sends, and the key both sign with. Validated
 * at start; a problem names its variable and never shows the key.
 */
import { createHash } from 'node:crypto';
import { ConfigError, type FieldProblem } from '../errors/index.ts';
import type { SigningKey } from './sigv4.ts';

export const BUS_ENDPOINT_ENV_VARS = {
  DRAINBRIDGE_BUS_ADDRESS: {
    default: undefined,
    help: '`drainbridge run`: host:port of the PutEvents endpoint for node agents (unset: not served)',
  },
  DRAINBRIDGE_BUS_ENDPOINT: {
    default: undefined,
    help: "node agent: URL of `drainbridge run`'s bus endpoint, used instead of EventBridge",
  },
  DRAINBRIDGE_BUS_KEY: {
    default: undefined,
    help: 'the key both sides sign and check with (at least 32 characters; from a Secret)',
  },
  DRAINBRIDGE_BUS_TLS_CERT: {
    default: undefined,
    help: "`drainbridge run`: PEM file of the endpoint's TLS certificate (tls.crt of a Secret)",
  },
  DRAINBRIDGE_BUS_TLS_KEY: {
    default: undefined,
    help: "`drainbridge run`: PEM file of that certificate's private key (tls.key of the same Secret)",
  },
  DRAINBRIDGE_BUS_CA: {
    default: undefined,
    help: 'node agent: PEM file of the certificate to trust for the endpoint (unset: the system CAs)',
  },
  DRAINBRIDGE_BUS_PLAINTEXT: {
    default: undefined,
    help: '`allow`: serve / send without TLS (tests on one machine only; anyone on the path reads the events)',
  },
} as const;

/** The shortest key accepted: 32 characters (e.g. `openssl rand -hex 32` gives 64). */
export const MIN_BUS_KEY_LENGTH = 32;

/** The access key id under which requests are signed with `secret`: a fingerprint, not the key. */
export function busSigningKey(secret: string): SigningKey {
  const fingerprint = createHash('sha256').update(`drainbridge bus key\n${secret}`).digest('hex').slice(0, 20);
  return { accessKeyId: `DRAINBRIDGE${fingerprint.toUpperCase()}`, secretAccessKey: secret };
}

/** The PEM files of run's TLS certificate and key (read by bus-tls.ts); `plaintext` when explicitly allowed. */
export type BusServerTls = { readonly certFile: string; readonly keyFile: string } | 'plaintext';

export interface BusServerSettings {
  readonly host: string;
  readonly port: number;
  readonly key: SigningKey;
  readonly tls: BusServerTls;
}

export interface BusClientSettings {
  /** The endpoint URL, without a trailing slash. */
  readonly endpoint: string;
  readonly key: SigningKey;
  /** The PEM file of the certificate the agent trusts for an https endpoint (undefined: the system CAs). */
  readonly caFile?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function keyProblem(env: Env, needed: string): FieldProblem | undefined {
  const key = env.DRAINBRIDGE_BUS_KEY;
  if (key === undefined || key === '') return { path: 'DRAINBRIDGE_BUS_KEY', message: `is required with ${needed}` };
  if (key.trim() !== key) return { path: 'DRAINBRIDGE_BUS_KEY', message: 'must not begin or end with white space' };
  if (key.length < MIN_BUS_KEY_LENGTH) {
    return { path: 'DRAINBRIDGE_BUS_KEY', message: `must be at least ${MIN_BUS_KEY_LENGTH} characters` };
  }
  return undefined;
}

const PLAINTEXT_ALLOWED = 'allow';

function plaintextProblem(env: Env): FieldProblem | undefined {
  const value = env.DRAINBRIDGE_BUS_PLAINTEXT;
  if (value === undefined || value === '' || value === PLAINTEXT_ALLOWED) return undefined;
  return { path: 'DRAINBRIDGE_BUS_PLAINTEXT', message: `must be ${PLAINTEXT_ALLOWED} or unset` };
}

/** TLS from the two PEM files, or plain HTTP only when DRAINBRIDGE_BUS_PLAINTEXT=allow says so. */
function serverTls(env: Env, problems: FieldProblem[]): BusServerTls {
  const certFile = env.DRAINBRIDGE_BUS_TLS_CERT ?? '';
  const keyFile = env.DRAINBRIDGE_BUS_TLS_KEY ?? '';
  if (certFile !== '' && keyFile !== '') return { certFile, keyFile };
  if (certFile !== '' || keyFile !== '') {
    const missing = certFile === '' ? 'DRAINBRIDGE_BUS_TLS_CERT' : 'DRAINBRIDGE_BUS_TLS_KEY';
    problems.push({ path: missing, message: 'is required with the other TLS file (both come from one Secret)' });
  } else if (env.DRAINBRIDGE_BUS_PLAINTEXT !== PLAINTEXT_ALLOWED) {
    problems.push({
      path: 'DRAINBRIDGE_BUS_TLS_CERT',
      message:
        'and DRAINBRIDGE_BUS_TLS_KEY are required with DRAINBRIDGE_BUS_ADDRESS (the endpoint serves TLS; DRAINBRIDGE_BUS_PLAINTEXT=allow serves plain HTTP)',
    });
  }
  return 'plaintext';
}

/** `drainbridge run`'s endpoint settings; undefined when DRAINBRIDGE_BUS_ADDRESS is not set (no endpoint). */
export function loadBusServerSettings(env: Env): BusServerSettings | undefined {
  const address = env.DRAINBRIDGE_BUS_ADDRESS;
  if (address === undefined || address === '') return undefined;
  const problems: FieldProblem[] = [];
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]*):(\d{1,5})$/.exec(address);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65_535) {
    problems.push({ path: 'DRAINBRIDGE_BUS_ADDRESS', message: 'must be host:port, e.g. 0.0.0.0:8471 or 127.0.0.1:0' });
  }
  const key = keyProblem(env, 'DRAINBRIDGE_BUS_ADDRESS');
  if (key) problems.push(key);
  const plaintext = plaintextProblem(env);
  if (plaintext) problems.push(plaintext);
  const tls = serverTls(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host: (match?.[1] ?? '').replace(/^\[|\]$/g, '') || '0.0.0.0',
    port,
    key: busSigningKey(env.DRAINBRIDGE_BUS_KEY as string),
    tls,
  };
}

/** A node agent's settings for run's endpoint; undefined when DRAINBRIDGE_BUS_ENDPOINT is not set (EventBridge). */
export function loadBusClientSettings(env: Env): BusClientSettings | undefined {
  const endpoint = env.DRAINBRIDGE_BUS_ENDPOINT;
  if (endpoint === undefined || endpoint === '') return undefined;
  const problems: FieldProblem[] = [];
  let url: URL | undefined;
  try {
    url = new URL(endpoint);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || (url.pathname !== '/' && url.pathname !== '')) {
    problems.push({
      path: 'DRAINBRIDGE_BUS_ENDPOINT',
      message: 'must be an https URL without a path, e.g. https://drainbridge-run-bus.drainbridge.svc:8471',
    });
  } else if (url.protocol === 'http:' && env.DRAINBRIDGE_BUS_PLAINTEXT !== PLAINTEXT_ALLOWED) {
    problems.push({
      path: 'DRAINBRIDGE_BUS_ENDPOINT',
      message: 'must be https: (plain http only with DRAINBRIDGE_BUS_PLAINTEXT=allow)',
    });
  }
  const key = keyProblem(env, 'DRAINBRIDGE_BUS_ENDPOINT');
  if (key) problems.push(key);
  const plaintext = plaintextProblem(env);
  if (plaintext) problems.push(plaintext);
  if (problems.length > 0) throw new ConfigError(problems);
  const caFile = env.DRAINBRIDGE_BUS_CA;
  return {
    endpoint: endpoint.replace(/\/+$/, ''),
    key: busSigningKey(env.DRAINBRIDGE_BUS_KEY as string),
    ...(caFile ? { caFile } : {}),
  };
}
