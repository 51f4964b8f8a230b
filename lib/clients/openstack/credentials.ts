/**
 * OpenStack credentials as operators already hold them: the `OS_*` variables of an openrc file, or a
 * `clouds.yaml` entry chosen by `OS_CLOUD`. Secret values may be AWS references
 * (`ssm:/param/name`, `secretsmanager:<name-or-arn>[#jsonKey]`), resolved through the injected
 * `resolveSecretRef` (lib/secrets/secret-refs.ts) so that no plaintext password sits in a Lambda
 * environment. Every secret obtained is registered for redaction.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, type FieldProblem } from '../../errors/index.ts';
import { registerSecret } from '../../log/redact.ts';
import { resolveSecretRef as resolveAwsSecretRef } from '../../secrets/secret-refs.ts';
import { yamlErrorLine } from '../../util/yaml-error-line.ts';

const nonEmpty = z.string().trim().min(1, 'must not be empty');

const credentialsShape = z.object({
  authUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  method: z.enum(['password', 'application_credential']),
  username: nonEmpty.optional(),
  userId: nonEmpty.optional(),
  password: nonEmpty.optional(),
  userDomainName: nonEmpty.optional(),
  userDomainId: nonEmpty.optional(),
  applicationCredentialId: nonEmpty.optional(),
  applicationCredentialName: nonEmpty.optional(),
  applicationCredentialSecret: nonEmpty.optional(),
  projectName: nonEmpty.optional(),
  projectId: nonEmpty.optional(),
  projectDomainName: nonEmpty.optional(),
  projectDomainId: nonEmpty.optional(),
  /** Domain scope (`OS_DOMAIN_NAME`/`_ID`), used only when no project is given. */
  domainName: nonEmpty.optional(),
  domainId: nonEmpty.optional(),
  regionName: nonEmpty.optional(),
  interface: z.enum(['public', 'internal', 'admin']).default('public'),
  caBundlePath: nonEmpty.optional(),
  insecure: z.boolean().default(false),
});

/** Which fields an auth method needs together (checked on the raw input too, so every gap is reported at once). */
function missingCombinations(c: { [K in keyof z.infer<typeof credentialsShape>]?: unknown }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const need = (ok: boolean, path: string, message: string) => {
    if (!ok) problems.push({ path, message });
  };
  const has = (value: unknown) => value !== undefined;
  if (c.method === 'application_credential') {
    need(has(c.applicationCredentialSecret), 'applicationCredentialSecret', 'required');
    need(
      has(c.applicationCredentialId) || has(c.applicationCredentialName),
      'applicationCredentialId',
      'an application credential id (or name with a user) is required',
    );
    return problems;
  }
  need(has(c.password), 'password', 'required for password authentication');
  need(has(c.username) || has(c.userId), 'username', 'a user name or user id is required');
  need(
    has(c.userId) || has(c.userDomainName) || has(c.userDomainId),
    'userDomainName',
    'a user domain name or id is required with a user name',
  );
  need(
    has(c.projectName) || has(c.projectId) || has(c.domainName) || has(c.domainId),
    'projectName',
    'a project (or domain) name or id is required',
  );
  need(
    !has(c.projectName) || has(c.projectDomainName) || has(c.projectDomainId),
    'projectDomainName',
    'a project domain name or id is required with a project name',
  );
  return problems;
}

/** Validated credentials; exactly one auth method with the fields it needs. */
export const openStackCredentialsSchema = credentialsShape.superRefine((c, ctx) => {
  for (const problem of missingCombinations(c))
    ctx.addIssue({ code: 'custom', path: [problem.path], message: problem.message });
});

export type OpenStackCredentials = z.infer<typeof openStackCredentialsSchema>;
type RawCredentials = { [K in keyof OpenStackCredentials]?: unknown };

/** Resolves `ssm:` / `secretsmanager:` references (lib/secrets/secret-refs.ts). */
export type SecretResolver = (ref: string) => Promise<string>;

export interface CredentialSources {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Defaults to lib/secrets/secret-refs.ts (SSM / Secrets Manager); `null` refuses references. */
  readonly resolveSecretRef?: SecretResolver | null;
  /** Working directory and home for the clouds.yaml search path; injected for tests. */
  readonly cwd?: string;
  readonly home?: string;
  readonly readText?: (path: string) => Promise<string>;
}

/** `OS_*` variable for each credential field, so that errors name what the operator set. */
const ENV_NAMES: Record<keyof OpenStackCredentials, string> = {
  authUrl: 'OS_AUTH_URL',
  method: 'OS_AUTH_TYPE',
  username: 'OS_USERNAME',
  userId: 'OS_USER_ID',
  password: 'OS_PASSWORD',
  userDomainName: 'OS_USER_DOMAIN_NAME',
  userDomainId: 'OS_USER_DOMAIN_ID',
  applicationCredentialId: 'OS_APPLICATION_CREDENTIAL_ID',
  applicationCredentialName: 'OS_APPLICATION_CREDENTIAL_NAME',
  applicationCredentialSecret: 'OS_APPLICATION_CREDENTIAL_SECRET',
  projectName: 'OS_PROJECT_NAME',
  projectId: 'OS_PROJECT_ID',
  projectDomainName: 'OS_PROJECT_DOMAIN_NAME',
  projectDomainId: 'OS_PROJECT_DOMAIN_ID',
  domainName: 'OS_DOMAIN_NAME',
  domainId: 'OS_DOMAIN_ID',
  regionName: 'OS_REGION_NAME',
  interface: 'OS_INTERFACE',
  caBundlePath: 'OS_CACERT',
  insecure: 'OS_INSECURE',
};

/** clouds.yaml keys (under `auth:` unless noted) for each field. */
const CLOUDS_KEYS: Record<keyof OpenStackCredentials, string> = {
  authUrl: 'auth.auth_url',
  method: 'auth_type',
  username: 'auth.username',
  userId: 'auth.user_id',
  password: 'auth.password',
  userDomainName: 'auth.user_domain_name',
  userDomainId: 'auth.user_domain_id',
  applicationCredentialId: 'auth.application_credential_id',
  applicationCredentialName: 'auth.application_credential_name',
  applicationCredentialSecret: 'auth.application_credential_secret',
  projectName: 'auth.project_name',
  projectId: 'auth.project_id',
  projectDomainName: 'auth.project_domain_name',
  projectDomainId: 'auth.project_domain_id',
  domainName: 'auth.domain_name',
  domainId: 'auth.domain_id',
  regionName: 'region_name',
  interface: 'interface',
  caBundlePath: 'cacert',
  insecure: 'insecure',
};

const SECRET_FIELDS = ['password', 'applicationCredentialSecret'] as const;
const SECRET_REF = /^(ssm:\/|secretsmanager:)/;

/** `v3applicationcredential` / `password` / `v3password` → our method name. */
function methodOf(authType: unknown, hasAppCred: boolean): unknown {
  if (authType === undefined || authType === '') return hasAppCred ? 'application_credential' : 'password';
  if (typeof authType !== 'string') return authType;
  const normalised = authType.replace(/^v3/, '').replace('applicationcredential', 'application_credential');
  return normalised;
}

function fromEnv(env: CredentialSources['env']): RawCredentials {
  const raw: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(ENV_NAMES)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[field] = value;
  }
  if (raw.insecure !== undefined) raw.insecure = /^(1|true|yes)$/i.test(String(raw.insecure));
  raw.method = methodOf(
    raw.method,
    raw.applicationCredentialId !== undefined || raw.applicationCredentialName !== undefined,
  );
  return raw;
}

function pick(entry: Record<string, unknown>, dotted: string): unknown {
  let value: unknown = entry;
  for (const part of dotted.split('.')) {
    value = value && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value;
}

function fromCloudEntry(entry: Record<string, unknown>): RawCredentials {
  const raw: Record<string, unknown> = {};
  for (const [field, key] of Object.entries(CLOUDS_KEYS)) {
    const value = pick(entry, key);
    if (value !== undefined && value !== null && value !== '') raw[field] = value;
  }
  raw.method = methodOf(
    raw.method,
    raw.applicationCredentialId !== undefined || raw.applicationCredentialName !== undefined,
  );
  return raw;
}

/** The clouds.yaml search path, in openstacksdk's order; `OS_CLIENT_CONFIG_FILE` comes first. */
export function cloudsYamlCandidates(sources: CredentialSources): string[] {
  const home = sources.home ?? homedir();
  const explicit = sources.env.OS_CLIENT_CONFIG_FILE;
  return [
    ...(explicit ? [explicit] : []),
    join(sources.cwd ?? process.cwd(), 'clouds.yaml'),
    join(home, '.config', 'openstack', 'clouds.yaml'),
    '/etc/openstack/clouds.yaml',
  ];
}

/** A clouds.yaml's document; a syntax error names the file and line only (the line may be the password). */
function parseCloudsYaml(file: string, text: string): unknown {
  try {
    return parseYaml(text);
  } catch (error) {
    throw new ConfigError([{ path: 'OS_CLOUD', message: `${file} is not valid YAML${yamlErrorLine(error)}` }]);
  }
}

async function loadCloud(cloud: string, sources: CredentialSources): Promise<{ raw: RawCredentials; file: string }> {
  const read = sources.readText ?? ((path: string) => readFile(path, 'utf8'));
  const tried: string[] = [];
  for (const file of cloudsYamlCandidates(sources)) {
    let text: string;
    try {
      text = await read(file);
    } catch {
      tried.push(file);
      continue;
    }
    const doc = parseCloudsYaml(file, text);
    const clouds = pick((doc ?? {}) as Record<string, unknown>, 'clouds') as Record<string, unknown> | undefined;
    const cloudEntry = clouds?.[cloud];
    if (cloudEntry && typeof cloudEntry === 'object') {
      return { raw: fromCloudEntry(cloudEntry as Record<string, unknown>), file };
    }
    tried.push(`${file} (no cloud "${cloud}")`);
  }
  throw new ConfigError([{ path: 'OS_CLOUD', message: `cloud "${cloud}" not found in ${tried.join(', ')}` }]);
}

async function resolveSecrets(raw: RawCredentials, sources: CredentialSources, label: (f: string) => string) {
  for (const field of SECRET_FIELDS) {
    const value = raw[field];
    if (typeof value !== 'string' || !SECRET_REF.test(value)) continue;
    const resolve =
      sources.resolveSecretRef === undefined ? (ref: string) => resolveAwsSecretRef(ref) : sources.resolveSecretRef;
    if (!resolve) {
      throw new ConfigError([{ path: label(field), message: 'is a secret reference but no resolver is configured' }]);
    }
    try {
      raw[field] = await resolve(value);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new ConfigError([{ path: label(field), message: `cannot resolve secret reference: ${why}` }]);
    }
  }
}

/** Adds `/v3` when the auth URL names the Keystone root (`https://keystone:5000`). */
function normaliseAuthUrl(raw: RawCredentials): void {
  if (typeof raw.authUrl !== 'string') return;
  const trimmed = raw.authUrl.replace(/\/+$/, '');
  raw.authUrl = /\/v3$/.test(trimmed) ? trimmed : `${trimmed}/v3`;
}

/**
 * Loads and validates credentials: `OS_CLOUD` selects a clouds.yaml entry, otherwise the `OS_*`
 * variables. Throws ConfigError naming each bad variable (or clouds.yaml key); secrets never appear
 * in its message.
 */
export async function loadOpenStackCredentials(sources: CredentialSources): Promise<OpenStackCredentials> {
  const cloud = sources.env.OS_CLOUD;
  let raw: RawCredentials;
  let label: (field: string) => string;
  if (cloud) {
    const loaded = await loadCloud(cloud, sources);
    raw = loaded.raw;
    label = (field) => `${loaded.file}: clouds.${cloud}.${CLOUDS_KEYS[field as keyof OpenStackCredentials] ?? field}`;
  } else {
    raw = fromEnv(sources.env);
    label = (field) => ENV_NAMES[field as keyof OpenStackCredentials] ?? field;
  }
  await resolveSecrets(raw, sources, label);
  for (const field of SECRET_FIELDS) if (typeof raw[field] === 'string') registerSecret(raw[field] as string);
  normaliseAuthUrl(raw);
  const parsed = credentialsShape.safeParse(raw);
  const problems: FieldProblem[] = [
    ...(parsed.success ? [] : parsed.error.issues.map((i) => ({ path: String(i.path[0] ?? ''), message: i.message }))),
    ...missingCombinations(raw),
  ].map((p) => ({ path: label(p.path), message: p.message }));
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  return parsed.data;
}
