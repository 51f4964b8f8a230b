/**
 * Secret references in configuration values: on AWS, credentials stay in SSM Parameter Store or
 * Secrets Manager and the environment holds only a reference to them.
 *
 *   ssm:/drainbridge/os-password                     SecureString parameter (decrypted)
 *   secretsmanager:drainbridge/kube                  the whole SecretString
 *   secretsmanager:arn:aws:secretsmanager:…#token    one key of a JSON SecretString
 *
 * Every resolved value is registered with the log redactor before it is returned.
 *
 * Its own folder (one module per external system: SSM and Secrets Manager) rather than part of
 * lib/config: both the configuration and the OpenStack credentials resolve references, and the
 * configuration validates Nova's host rule, so a copy under lib/config made config → nova → openstack
 * → config a cycle.
 */
import { ConfigError } from '../errors/index.ts';
import { registerSecret } from '../log/redact.ts';
import { namedExports } from '../util/named-exports.ts';

const SSM_PREFIX = 'ssm:';
const SECRETS_MANAGER_PREFIX = 'secretsmanager:';

export function isSecretRef(value: string): boolean {
  return value.startsWith(SSM_PREFIX) || value.startsWith(SECRETS_MANAGER_PREFIX);
}

/** Fetches one secret by reference; injected in tests and in embedded mode. */
export type SecretFetcher = (ref: ParsedRef) => Promise<string>;

export type ParsedRef =
  | { readonly store: 'ssm'; readonly name: string }
  | { readonly store: 'secretsmanager'; readonly id: string; readonly jsonKey?: string };

export function parseSecretRef(ref: string): ParsedRef {
  if (ref.startsWith(SSM_PREFIX)) {
    const name = ref.slice(SSM_PREFIX.length);
    if (!name) throw new Error(`secret reference "${ref}" names no parameter`);
    return { store: 'ssm', name };
  }
  if (ref.startsWith(SECRETS_MANAGER_PREFIX)) {
    const rest = ref.slice(SECRETS_MANAGER_PREFIX.length);
    const hash = rest.lastIndexOf('#');
    const id = hash >= 0 ? rest.slice(0, hash) : rest;
    if (!id) throw new Error(`secret reference "${ref}" names no secret`);
    return hash >= 0 ? { store: 'secretsmanager', id, jsonKey: rest.slice(hash + 1) } : { store: 'secretsmanager', id };
  }
  throw new Error(`"${ref}" is not a secret reference (ssm:… or secretsmanager:…)`);
}

const AWS_CALL_TIMEOUT_MS = 5_000;

/**
 * The AWS fetcher: SSM GetParameter (decrypted) or Secrets Manager GetSecretValue, with SDK retries. Each
 * SDK client is loaded when a reference first needs it: a function that uses no SSM reference never loads
 * the SSM client (the clients are a large part of a cold import).
 */
export const awsSecretFetcher: SecretFetcher = async (ref) => {
  const requestHandler = { requestTimeout: AWS_CALL_TIMEOUT_MS, connectionTimeout: AWS_CALL_TIMEOUT_MS };
  if (ref.store === 'ssm') {
    const { GetParameterCommand, SSMClient } = namedExports(await import('@aws-sdk/client-ssm'), 'SSMClient');
    const ssm = new SSMClient({ maxAttempts: 3, requestHandler });
    const out = await ssm.send(new GetParameterCommand({ Name: ref.name, WithDecryption: true }));
    return out.Parameter?.Value ?? '';
  }
  const { GetSecretValueCommand, SecretsManagerClient } = namedExports(
    await import('@aws-sdk/client-secrets-manager'),
    'SecretsManagerClient',
  );
  const sm = new SecretsManagerClient({ maxAttempts: 3, requestHandler });
  const out = await sm.send(new GetSecretValueCommand({ SecretId: ref.id }));
  return out.SecretString ?? '';
};

function pickJsonKey(ref: ParsedRef, text: string, original: string): string {
  if (ref.store !== 'secretsmanager' || ref.jsonKey === undefined) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`secret ${original}: the secret is not JSON, so it has no key "${ref.jsonKey}"`);
  }
  const value = (parsed as Record<string, unknown> | null)?.[ref.jsonKey];
  if (typeof value !== 'string') throw new Error(`secret ${original}: no string key "${ref.jsonKey}" in the secret`);
  return value;
}

/**
 * Resolves a reference to its value (registered as a secret). Errors name the reference, never a value.
 */
export async function resolveSecretRef(ref: string, fetch: SecretFetcher = awsSecretFetcher): Promise<string> {
  const parsed = parseSecretRef(ref);
  let text: string;
  try {
    text = await fetch(parsed);
  } catch (error) {
    const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new ConfigError([{ path: ref, message: `could not be read (${why})` }]);
  }
  const value = pickJsonKey(parsed, text, ref);
  if (!value) throw new ConfigError([{ path: ref, message: 'resolved to an empty value' }]);
  registerSecret(value);
  return value;
}

/** Resolves `value` when it is a reference; returns it unchanged (and registered as a secret) otherwise. */
export async function resolveMaybeRef(value: string, fetch: SecretFetcher = awsSecretFetcher): Promise<string> {
  if (isSecretRef(value)) return resolveSecretRef(value, fetch);
  registerSecret(value);
  return value;
}
