/** Loading OpenStack credentials from OS_* variables, clouds.yaml and secret references. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { cloudsYamlCandidates, loadOpenStackCredentials } from '../../../lib/clients/openstack/credentials.ts';
import { ConfigError } from '../../../lib/errors/index.ts';
import { clearSecrets, redactString } from '../../../lib/log/redact.ts';

const OPENRC = {
  OS_AUTH_URL: 'https://keystone.example:5000',
  OS_USERNAME: 'drainbridge',
  OS_PASSWORD: 'openrc-password-1',
  OS_PROJECT_NAME: 'admin',
  OS_USER_DOMAIN_NAME: 'Default',
  OS_PROJECT_DOMAIN_NAME: 'Default',
  OS_REGION_NAME: 'RegionOne',
  OS_INTERFACE: 'internal',
};

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'drainbridge-creds-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => clearSecrets());

function problemsOf(error: unknown): string[] {
  assert.ok(error instanceof ConfigError, String(error));
  return error.problems.map((p) => p.path);
}

describe('OS_* variables', () => {
  test('an openrc set of variables loads, the auth URL gains /v3, the password is registered for redaction', async () => {
    const creds = await loadOpenStackCredentials({ env: OPENRC, home: dir, cwd: dir });
    assert.equal(creds.authUrl, 'https://keystone.example:5000/v3');
    assert.equal(creds.method, 'password');
    assert.equal(creds.interface, 'internal');
    assert.equal(creds.regionName, 'RegionOne');
    assert.equal(creds.insecure, false);
    assert.equal(redactString('x openrc-password-1 y'), 'x [REDACTED] y');
  });

  test('ids instead of names', async () => {
    const creds = await loadOpenStackCredentials({
      env: { OS_AUTH_URL: 'http://k/v3', OS_USER_ID: 'u1', OS_PASSWORD: 'pw-12345', OS_PROJECT_ID: 'p1' },
    });
    assert.equal(creds.userId, 'u1');
    assert.equal(creds.projectId, 'p1');
  });

  test('application credentials need no project', async () => {
    const creds = await loadOpenStackCredentials({
      env: {
        OS_AUTH_URL: 'http://k/v3',
        OS_APPLICATION_CREDENTIAL_ID: 'ac',
        OS_APPLICATION_CREDENTIAL_SECRET: 'ac-secret-9',
      },
    });
    assert.equal(creds.method, 'application_credential');
  });

  test('missing and bad variables are each named; the secret is not in the message', async () => {
    const error = await loadOpenStackCredentials({
      env: { OS_AUTH_URL: 'keystone', OS_USERNAME: 'u', OS_PASSWORD: 'hidden-pw-77', OS_INTERFACE: 'backdoor' },
    }).catch((e: unknown) => e);
    assert.deepEqual(problemsOf(error).sort(), [
      'OS_AUTH_URL',
      'OS_INTERFACE',
      'OS_PROJECT_NAME',
      'OS_USER_DOMAIN_NAME',
    ]);
    assert.ok(!(error as Error).message.includes('hidden-pw-77'));
  });

  test('a project name without a project domain is refused', async () => {
    const { OS_PROJECT_DOMAIN_NAME: _, ...env } = OPENRC;
    const error = await loadOpenStackCredentials({ env }).catch((e: unknown) => e);
    assert.deepEqual(problemsOf(error), ['OS_PROJECT_DOMAIN_NAME']);
  });
});

describe('secret references', () => {
  test('OS_PASSWORD=secretsmanager:… is resolved and registered', async () => {
    const asked: string[] = [];
    const creds = await loadOpenStackCredentials({
      env: { ...OPENRC, OS_PASSWORD: 'secretsmanager:openstack/admin#password' },
      resolveSecretRef: async (ref) => {
        asked.push(ref);
        return 'resolved-pw-42';
      },
    });
    assert.deepEqual(asked, ['secretsmanager:openstack/admin#password']);
    assert.equal(creds.password, 'resolved-pw-42');
    assert.equal(redactString('resolved-pw-42'), '[REDACTED]');
  });

  test('an unresolvable reference names the variable', async () => {
    const error = await loadOpenStackCredentials({
      env: { ...OPENRC, OS_PASSWORD: 'ssm:/openstack/password' },
      resolveSecretRef: async () => {
        throw new Error('ParameterNotFound');
      },
    }).catch((e: unknown) => e);
    assert.deepEqual(problemsOf(error), ['OS_PASSWORD']);
    assert.match((error as Error).message, /ParameterNotFound/);
  });

  test('references refused (resolver null) is a configuration error', async () => {
    const error = await loadOpenStackCredentials({ env: { ...OPENRC, OS_PASSWORD: 'ssm:/x' } }).catch(
      (e: unknown) => e,
    );
    assert.deepEqual(problemsOf(error), ['OS_PASSWORD']);
  });
});

describe('clouds.yaml', () => {
  const yaml = `clouds:
  lab:
    auth:
      auth_url: http://127.0.0.1:5000/v3/
      username: admin
      password: clouds-pw-3
      project_name: admin
      user_domain_name: Default
      project_domain_id: default
    region_name: RegionOne
    interface: public
    cacert: /etc/ssl/lab-ca.pem
  appcred:
    auth_type: v3applicationcredential
    auth:
      auth_url: https://k.example/v3
      application_credential_id: abc
      application_credential_secret: secretsmanager:os/appcred
`;

  test('the search path: OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack, /etc/openstack', () => {
    assert.deepEqual(cloudsYamlCandidates({ env: { OS_CLIENT_CONFIG_FILE: '/x/c.yaml' }, cwd: '/w', home: '/h' }), [
      '/x/c.yaml',
      '/w/clouds.yaml',
      '/h/.config/openstack/clouds.yaml',
      '/etc/openstack/clouds.yaml',
    ]);
  });

  test('OS_CLOUD picks an entry from ~/.config/openstack/clouds.yaml', async () => {
    const home = join(dir, 'home');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(home, '.config', 'openstack'), { recursive: true });
    await writeFile(join(home, '.config', 'openstack', 'clouds.yaml'), yaml);
    const creds = await loadOpenStackCredentials({ env: { OS_CLOUD: 'lab' }, home, cwd: join(dir, 'nowhere') });
    assert.equal(creds.authUrl, 'http://127.0.0.1:5000/v3');
    assert.equal(creds.projectDomainId, 'default');
    assert.equal(creds.caBundlePath, '/etc/ssl/lab-ca.pem');
  });

  test('application credential entries with a secret reference', async () => {
    const file = join(dir, 'explicit.yaml');
    await writeFile(file, yaml);
    const creds = await loadOpenStackCredentials({
      env: { OS_CLOUD: 'appcred', OS_CLIENT_CONFIG_FILE: file },
      resolveSecretRef: async () => 'from-secrets-manager',
      home: dir,
      cwd: dir,
    });
    assert.equal(creds.method, 'application_credential');
    assert.equal(creds.applicationCredentialSecret, 'from-secrets-manager');
  });

  test('an unknown cloud names OS_CLOUD and the files tried', async () => {
    const file = join(dir, 'explicit.yaml');
    const error = await loadOpenStackCredentials({
      env: { OS_CLOUD: 'nope', OS_CLIENT_CONFIG_FILE: file },
      home: dir,
      cwd: dir,
    }).catch((e: unknown) => e);
    assert.deepEqual(problemsOf(error), ['OS_CLOUD']);
    assert.match((error as Error).message, /cloud "nope" not found/);
  });

  test('bad entries name the clouds.yaml key', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'clouds:\n  broken:\n    auth:\n      username: admin\n      password: pw-bad-1\n');
    const error = await loadOpenStackCredentials({
      env: { OS_CLOUD: 'broken', OS_CLIENT_CONFIG_FILE: file },
      home: dir,
      cwd: dir,
    }).catch((e: unknown) => e);
    const paths = problemsOf(error);
    assert.ok(
      paths.some((p) => p.endsWith('clouds.broken.auth.auth_url')),
      paths.join(),
    );
  });
});

describe('a clouds.yaml that is not valid YAML', () => {
  test('is named with its line, never with the parser excerpt that quotes the password', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'drainbridge-clouds-'));
    const file = join(dir, 'clouds.yaml');
    await writeFile(file, 'clouds:\n  lab:\n    auth:\n      username: admin\n      password: SuperSecret123: oops\n');
    const error = await loadOpenStackCredentials({
      env: { OS_CLOUD: 'lab', OS_CLIENT_CONFIG_FILE: file },
      home: dir,
      cwd: dir,
    }).catch((e: unknown) => e);
    assert.ok(error instanceof ConfigError, String(error));
    assert.deepEqual(problemsOf(error), ['OS_CLOUD']);
    assert.equal(error.problems[0]?.message, `${file} is not valid YAML (line 5)`);
    assert.ok(!error.message.includes('SuperSecret123'), error.message);
  });
});
