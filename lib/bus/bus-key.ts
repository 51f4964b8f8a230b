/**
 * The settings of the bus endpoint that `drainbridge run` serves to the node agents (bus-endpoint.ts),
 * from the environment: where run listens, where an agent sends, and the key both sign with. Validated
 * at start; a problem names its variable and never shows the key.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ConfigError, type FieldProblem } from '../errors/index.ts';
import { hostPort } from '../settings/parsers.ts';
import { type Setting, setting, textsOf } from '../settings/setting.ts';
import type { SigningKey } from './sigv4.ts';

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

const ADDRESS_EXAMPLE = '0.0.0.0:8471';

const PLAINTEXT_ALLOWED = 'allow';

/** Where run listens; a port above 65535 is refused here, with the same words, rather than at listen. */
const listenAddress = hostPort(ADDRESS_EXAMPLE).refine((address) => address.port <= 65_535, {
  message: `must be host:port, e.g. ${ADDRESS_EXAMPLE} or 127.0.0.1:0`,
});

const endpointUrl = z.string().transform((endpoint, ctx) => {
  let url: URL | undefined;
  try {
    url = new URL(endpoint);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || (url.pathname !== '/' && url.pathname !== '')) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be an https URL without a path, e.g. https://drainbridge-run-bus.drainbridge.svc:8471',
    });
    return z.NEVER;
  }
  return endpoint.replace(/\/+$/, '');
});

const signingKey = z.string().transform((key, ctx) => {
  const problem =
    key.trim() !== key
      ? 'must not begin or end with white space'
      : key.length < MIN_BUS_KEY_LENGTH
        ? `must be at least ${MIN_BUS_KEY_LENGTH} characters`
        : undefined;
  if (problem === undefined) return busSigningKey(key);
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
});

/** The bus endpoint's settings, declared once; each is read only when the endpoint is used. */
export const BUS_ENDPOINT_SETTINGS = {
  address: setting({
    env: 'DRAINBRIDGE_BUS_ADDRESS',
    parse: listenAddress.optional(),
    default: undefined,
    help: '`drainbridge run`: host:port of the PutEvents endpoint for node agents (`forwarder --node-agent --bus-endpoint`; requests signed with DRAINBRIDGE_BUS_KEY, over TLS from DRAINBRIDGE_BUS_TLS_CERT/_KEY; cloud notices only; unset: not served)',
    readBy: ['run'],
    flag: { name: 'bus-address', value: 'HOST:PORT', commands: ['run'] },
  }),
  endpoint: setting({
    env: 'DRAINBRIDGE_BUS_ENDPOINT',
    parse: endpointUrl.optional(),
    default: undefined,
    help: "node agent: URL of `drainbridge run`'s bus endpoint, used instead of EventBridge (requests signed with DRAINBRIDGE_BUS_KEY; lib/bus/README.md)",
    readBy: ['node-agent'],
    flag: { name: 'bus-endpoint', value: 'URL', commands: ['forwarder'] },
  }),
  key: setting({
    env: 'DRAINBRIDGE_BUS_KEY',
    parse: signingKey.optional(),
    default: undefined,
    help: 'the key both sides sign and check with (at least 32 characters; from a Secret)',
    secret: true,
    readBy: ['run', 'node-agent'],
  }),
  tlsCert: setting({
    env: 'DRAINBRIDGE_BUS_TLS_CERT',
    parse: z.string().optional(),
    default: undefined,
    help: "`drainbridge run`: PEM file of the endpoint's TLS certificate (tls.crt of a Secret)",
    readBy: ['run'],
  }),
  tlsKey: setting({
    env: 'DRAINBRIDGE_BUS_TLS_KEY',
    parse: z.string().optional(),
    default: undefined,
    help: "`drainbridge run`: PEM file of that certificate's private key (tls.key of the same Secret)",
    readBy: ['run'],
  }),
  ca: setting({
    env: 'DRAINBRIDGE_BUS_CA',
    parse: z.string().optional(),
    default: undefined,
    help: 'node agent: PEM file of the certificate to trust for the endpoint (unset: the system CAs)',
    readBy: ['node-agent'],
  }),
  plaintext: setting({
    env: 'DRAINBRIDGE_BUS_PLAINTEXT',
    parse: z.literal(PLAINTEXT_ALLOWED, { error: `must be ${PLAINTEXT_ALLOWED} or unset` }).optional(),
    default: undefined,
    help: '`allow`: serve / send without TLS (tests on one machine only; anyone on the path reads the events)',
    readBy: ['run', 'node-agent'],
  }),
};

type Parsed<T> = { readonly value?: T; readonly problem?: FieldProblem };

/** One setting's value from `env` (an empty value is unset), or its problem. */
function read<T>(declared: Setting<z.ZodType<T, string | undefined>>, env: Env): Parsed<T> {
  const texts = textsOf({ it: declared }, env, { emptyIsUnset: true });
  const parsed = declared.parse.safeParse(texts[declared.env]);
  if (parsed.success) return { value: parsed.data };
  return { problem: { path: declared.env, message: parsed.error.issues[0]?.message ?? 'is not valid' } };
}

/** The key, or the problem with it; `needed`: the variable that requires it. */
function keyOf(env: Env, needed: string, problems: FieldProblem[]): SigningKey | undefined {
  const key = read(BUS_ENDPOINT_SETTINGS.key, env);
  if (key.problem) problems.push(key.problem);
  else if (key.value === undefined)
    problems.push({ path: BUS_ENDPOINT_SETTINGS.key.env, message: `is required with ${needed}` });
  return key.value;
}

/** `drainbridge run`'s endpoint settings; undefined when DRAINBRIDGE_BUS_ADDRESS is not set (no endpoint). */
export function loadBusServerSettings(env: Env): BusServerSettings | undefined {
  const address = read(BUS_ENDPOINT_SETTINGS.address, env);
  if (!address.problem && address.value === undefined) return undefined;
  const problems = address.problem ? [address.problem] : [];
  const key = keyOf(env, BUS_ENDPOINT_SETTINGS.address.env, problems);
  const plaintext = plaintextAllowed(env, problems);
  const tls = serverTls(env, plaintext, problems);
  if (!address.value || !key || problems.length > 0) throw new ConfigError(problems);
  return { ...address.value, key, tls };
}

/** Whether DRAINBRIDGE_BUS_PLAINTEXT=allow; a value other than `allow` is a problem. */
function plaintextAllowed(env: Env, problems: FieldProblem[]): boolean {
  const plaintext = read(BUS_ENDPOINT_SETTINGS.plaintext, env);
  if (plaintext.problem) problems.push(plaintext.problem);
  return plaintext.value === PLAINTEXT_ALLOWED;
}

/** TLS from the two PEM files, or plain HTTP only when DRAINBRIDGE_BUS_PLAINTEXT=allow says so. */
function serverTls(env: Env, plaintext: boolean, problems: FieldProblem[]): BusServerTls {
  const certFile = read(BUS_ENDPOINT_SETTINGS.tlsCert, env).value ?? '';
  const keyFile = read(BUS_ENDPOINT_SETTINGS.tlsKey, env).value ?? '';
  if (certFile !== '' && keyFile !== '') return { certFile, keyFile };
  if (certFile !== '' || keyFile !== '') {
    const missing = certFile === '' ? BUS_ENDPOINT_SETTINGS.tlsCert.env : BUS_ENDPOINT_SETTINGS.tlsKey.env;
    problems.push({ path: missing, message: 'is required with the other TLS file (both come from one Secret)' });
  } else if (!plaintext) {
    problems.push({
      path: BUS_ENDPOINT_SETTINGS.tlsCert.env,
      message:
        'and DRAINBRIDGE_BUS_TLS_KEY are required with DRAINBRIDGE_BUS_ADDRESS (the endpoint serves TLS; DRAINBRIDGE_BUS_PLAINTEXT=allow serves plain HTTP)',
    });
  }
  return 'plaintext';
}

/** A node agent's settings for run's endpoint; undefined when DRAINBRIDGE_BUS_ENDPOINT is not set (EventBridge). */
export function loadBusClientSettings(env: Env): BusClientSettings | undefined {
  const endpoint = read(BUS_ENDPOINT_SETTINGS.endpoint, env);
  if (!endpoint.problem && endpoint.value === undefined) return undefined;
  const problems = endpoint.problem ? [endpoint.problem] : [];
  const key = keyOf(env, BUS_ENDPOINT_SETTINGS.endpoint.env, problems);
  const plaintext = plaintextAllowed(env, problems);
  if (endpoint.value?.startsWith('http:') && !plaintext) {
    problems.push({
      path: BUS_ENDPOINT_SETTINGS.endpoint.env,
      message: 'must be https: (plain http only with DRAINBRIDGE_BUS_PLAINTEXT=allow)',
    });
  }
  if (!endpoint.value || !key || problems.length > 0) throw new ConfigError(problems);
  const caFile = read(BUS_ENDPOINT_SETTINGS.ca, env).value;
  return { endpoint: endpoint.value, key, ...(caFile ? { caFile } : {}) };
}
