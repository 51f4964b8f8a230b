import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildKubeConfig, loadConfig, resolveSecretRef } from '../../../lib/config/index.ts';
import { ConfigError } from '../../../lib/errors/index.ts';
import { redactString } from '../../../lib/log/redact.ts';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('the configuration was accepted');
}

describe('loadConfig', () => {
  it('sets no drain option and embedded mode with an empty environment (each origin decides)', () => {
    const config = loadConfig({});
    assert.equal(config.mode, 'embedded');
    assert.deepEqual(config.kube, { source: 'kubeconfig' });
    assert.deepEqual(config.drainDefaults, {}, 'no DRAINBRIDGE_DRAIN_* set: nothing overrides the origin');
    assert.equal(config.maxHeldNodes, 1);
    assert.equal(config.nova.maxConcurrentMigrations, 1);
    assert.equal(config.nova.shutoffPolicy, 'block');
    assert.deepEqual(config.compatibilityTaints, []);
  });

  it('reads drain defaults, limits and taints', () => {
    const config = loadConfig({
      DRAINBRIDGE_DRAIN_IGNORE_DAEMONSETS: 'true',
      DRAINBRIDGE_DRAIN_GRACE_PERIOD: '30',
      DRAINBRIDGE_MAX_HELD_NODES: '3',
      DRAINBRIDGE_INFRA_POD_SELECTOR: 'app in (nova-compute,libvirt)',
      DRAINBRIDGE_COMPAT_TAINTS: 'kubevirt.io/drain',
    });
    assert.deepEqual(config.drainDefaults, { ignoreDaemonSets: true, gracePeriodSeconds: 30 }, 'only what was set');
    assert.equal(config.maxHeldNodes, 3);
    assert.equal(config.infraPodSelector, 'app in (nova-compute,libvirt)');
    assert.deepEqual(config.compatibilityTaints, ['kubevirt.io/drain']);
  });

  it('lists every problem at once, each naming its variable', () => {
    const error = configError({
      DRAINBRIDGE_MODE: 'cloud',
      DRAINBRIDGE_DRAIN_FORCE: 'yes',
      DRAINBRIDGE_MAX_HELD_NODES: '0',
      DRAINBRIDGE_INFRA_POD_SELECTOR: 'app in (a',
      DRAINBRIDGE_COMPAT_TAINTS: 'example.com/x',
    });
    assert.deepEqual(
      error.problems.map((p) => `${p.path}: ${p.message}`),
      [
        'DRAINBRIDGE_MODE: must be aws or embedded',
        'DRAINBRIDGE_DRAIN_FORCE: must be true or false',
        'DRAINBRIDGE_MAX_HELD_NODES: must be at least 1',
        'DRAINBRIDGE_INFRA_POD_SELECTOR: is not a valid label selector (invalid label key "app in (a")',
        'DRAINBRIDGE_COMPAT_TAINTS[0]: each must be one of medik8s.io/drain, kubevirt.io/drain',
      ],
    );
    assert.match(error.message, /^invalid configuration:\n {2}- DRAINBRIDGE_MODE: must be aws or embedded\n/);
  });

  it('requires what each access source needs', () => {
    const error = configError({ DRAINBRIDGE_KUBE_ACCESS: 'token' });
    assert.deepEqual(
      error.problems.map((p) => p.path),
      ['DRAINBRIDGE_KUBE_SERVER', 'DRAINBRIDGE_KUBE_TOKEN'],
    );
    assert.deepEqual(configError({ DRAINBRIDGE_KUBE_ACCESS: 'secret' }).problems, [
      { path: 'DRAINBRIDGE_KUBECONFIG_REF', message: 'is required when DRAINBRIDGE_KUBE_ACCESS=secret' },
    ]);
  });

  it('refuses a kubeconfig file or a literal token in aws mode, without echoing the token', () => {
    const token = 'eyJhbGciOiJSUzI1NiJ9.super-secret-token-value';
    const error = configError({
      DRAINBRIDGE_MODE: 'aws',
      DRAINBRIDGE_KUBE_ACCESS: 'token',
      DRAINBRIDGE_KUBE_SERVER: 'https://k8s.example.com',
      DRAINBRIDGE_KUBE_TOKEN: token,
    });
    assert.equal(error.problems[0]?.path, 'DRAINBRIDGE_KUBE_TOKEN');
    assert.ok(!error.message.includes(token), 'the token must not appear in the error');
    assert.match(configError({ DRAINBRIDGE_MODE: 'aws' }).message, /kubeconfig files are not available in Lambda/);
  });
});

describe('secret references', () => {
  it('resolves ssm and secretsmanager references (with a JSON key) and registers the value for redaction', async () => {
    const seen: unknown[] = [];
    const fetch = async (ref: unknown) => {
      seen.push(ref);
      return JSON.stringify({ token: 'tok-from-secrets-manager-123', other: 'x' });
    };
    const value = await resolveSecretRef('secretsmanager:arn:aws:secretsmanager:eu-west-1:1:secret:kube#token', fetch);
    assert.equal(value, 'tok-from-secrets-manager-123');
    assert.deepEqual(seen, [
      { store: 'secretsmanager', id: 'arn:aws:secretsmanager:eu-west-1:1:secret:kube', jsonKey: 'token' },
    ]);
    assert.equal(redactString('Bearer tok-from-secrets-manager-123'), 'Bearer [REDACTED]');
    await resolveSecretRef('ssm:/drainbridge/x', async (ref) => {
      assert.deepEqual(ref, { store: 'ssm', name: '/drainbridge/x' });
      return 'value-from-ssm';
    });
  });

  it('names the reference, not a value, when it cannot be read', async () => {
    await assert.rejects(
      resolveSecretRef('ssm:/missing', async () => {
        throw Object.assign(new Error('Parameter /missing not found.'), { name: 'ParameterNotFound' });
      }),
      {
        name: 'ConfigError',
        message: /ssm:\/missing: could not be read \(ParameterNotFound: Parameter \/missing not found\.\)/,
      },
    );
  });
});

describe('buildKubeConfig', () => {
  const kubeconfig = (user: string) => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]
contexts: [{ name: ctx, context: { cluster: c, user: u } }]
current-context: ctx
users: [{ name: u, user: ${user} }]
`;
  const exec = '{ exec: { apiVersion: client.authentication.k8s.io/v1beta1, command: aws, args: [eks, get-token] } }';

  it('builds a token kubeconfig from a secret reference', async () => {
    const kc = await buildKubeConfig(
      { mode: 'aws', kube: { source: 'token', server: 'https://k8s.example.com', token: 'ssm:/kube/token' } },
      async () => 'the-bearer-token-xyz',
    );
    assert.equal(kc.getCurrentCluster()?.server, 'https://k8s.example.com');
    assert.equal(kc.getCurrentUser()?.token, 'the-bearer-token-xyz');
  });

  it('refuses an exec-plugin kubeconfig in Lambda mode with a clear message, and accepts it embedded', async () => {
    await assert.rejects(
      buildKubeConfig({ mode: 'aws', kube: { source: 'secret', kubeconfigRef: 'secretsmanager:kube' } }, async () =>
        kubeconfig(exec),
      ),
      { name: 'ConfigError', message: /user "u" authenticates with an exec plugin, which cannot run in Lambda/ },
    );
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-kc-'));
    writeFileSync(join(dir, 'config'), kubeconfig(exec));
    const kc = await buildKubeConfig({ mode: 'embedded', kube: { source: 'kubeconfig', path: join(dir, 'config') } });
    assert.equal(kc.getCurrentContext(), 'ctx');
  });

  it('names a missing context', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-kc-'));
    writeFileSync(join(dir, 'config'), kubeconfig('{ token: abcd1234 }'));
    await assert.rejects(
      buildKubeConfig({ mode: 'embedded', kube: { source: 'kubeconfig', path: join(dir, 'config'), context: 'prod' } }),
      {
        message: /context "prod" is not in/,
      },
    );
  });
});

describe('Nova settings', () => {
  it('accepts the host rule forms, kept parsed, and refuses a broken one at start', () => {
    assert.deepEqual(loadConfig({ DRAINBRIDGE_NOVA_HOST_RULE: 'regex:^(.*)\\.k8s$=>$1' }).nova.hostRules, [
      { nodeNamePattern: '^(.*)\\.k8s$', novaHost: '$1' },
    ]);
    assert.deepEqual(loadConfig({}).nova.hostRules, [], 'node-name: no rule');
    const error = configError({ DRAINBRIDGE_NOVA_HOST_RULE: 'regex:([=>x' });
    assert.equal(error.problems[0]?.path, 'DRAINBRIDGE_NOVA_HOST_RULE');
  });

  it('keeps the Nova node selector parsed, and refuses a broken one at start naming it', () => {
    assert.deepEqual(
      loadConfig({ DRAINBRIDGE_NOVA_NODE_SELECTOR: 'openstack-compute-node=enabled' }).nova.nodeSelector,
      [{ key: 'openstack-compute-node', op: 'in', values: ['enabled'] }],
    );
    assert.deepEqual(loadConfig({}).nova.nodeSelector, [], 'empty: every node');
    const error = configError({ DRAINBRIDGE_NOVA_NODE_SELECTOR: 'a in (' });
    assert.equal(error.problems[0]?.path, 'DRAINBRIDGE_NOVA_NODE_SELECTOR');
    assert.match(error.problems[0]?.message ?? '', /^is not a valid label selector/);
  });
});
