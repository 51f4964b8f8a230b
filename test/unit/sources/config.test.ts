/** The agent's configuration and the notice policy: defaults, overrides, and errors naming the setting. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../lib/errors/index.ts';
import { loadAgentConfig, parseNoticePolicy } from '../../../lib/sources/clouds/config.ts';
import { DEFAULT_NOTICE_POLICY, describePolicy, ruleFor } from '../../../lib/sources/clouds/policy.ts';

const BASE = { DRAINBRIDGE_NODE_NAME: 'node-1', DRAINBRIDGE_AGENT_PROVIDER: 'azure' };

function problems(env: Record<string, string>): string[] {
  try {
    loadAgentConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.problems.map((p) => `${p.path}: ${p.message}`);
  }
  assert.fail('the configuration was accepted');
}

describe('agent configuration', () => {
  it('has documented defaults', () => {
    const config = loadAgentConfig(BASE);
    assert.equal(config.nodeName, 'node-1');
    assert.equal(config.provider, 'azure');
    assert.equal(config.azure.baseUrl, 'http://169.254.169.254');
    assert.equal(config.azure.apiVersion, '2020-07-01');
    assert.equal(config.aws.spot, false, 'spot is opt-in');
    assert.equal(config.aws.rebalance, false, 'rebalance is opt-in');
    assert.equal(config.gcp.baseUrl, 'http://metadata.google.internal');
    assert.equal(config.policy, DEFAULT_NOTICE_POLICY);
  });

  it('lists every bad setting at once, by name', () => {
    const found = problems({
      DRAINBRIDGE_NODE_NAME: 'Node_1',
      DRAINBRIDGE_AGENT_PROVIDER: 'ibm',
      DRAINBRIDGE_AGENT_POLL_SECONDS: '0',
      DRAINBRIDGE_AGENT_AWS_URL: 'ftp://x',
      DRAINBRIDGE_AGENT_AWS_SPOT: 'yes',
      DRAINBRIDGE_AGENT_AWS_TOKEN_TTL_SECONDS: '99999',
    });
    for (const name of [
      'DRAINBRIDGE_NODE_NAME: must be a valid node name',
      'DRAINBRIDGE_AGENT_PROVIDER: must be one of azure, aws, gcp',
      'DRAINBRIDGE_AGENT_POLL_SECONDS: must be at least 1',
      'DRAINBRIDGE_AGENT_AWS_URL: must be an http(s) URL',
      'DRAINBRIDGE_AGENT_AWS_SPOT: must be true or false',
      'DRAINBRIDGE_AGENT_AWS_TOKEN_TTL_SECONDS: must be at most 21600',
    ]) {
      assert.ok(
        found.some((p) => p.startsWith(name)),
        `${name} in ${found.join(' | ')}`,
      );
    }
  });

  it('requires the node name and the provider', () => {
    const found = problems({});
    assert.ok(found.includes('DRAINBRIDGE_NODE_NAME: is required'), found.join(' | '));
    assert.ok(
      found.some((p) => p.startsWith('DRAINBRIDGE_AGENT_PROVIDER:')),
      found.join(' | '),
    );
  });
});

describe('notice policy', () => {
  it('defaults: Azure Freeze ignored; Reboot, Redeploy, Preempt, Terminate evacuated and approved after the drain', () => {
    assert.equal(ruleFor(DEFAULT_NOTICE_POLICY, 'azure', 'Freeze')?.action, 'ignore');
    for (const type of ['Reboot', 'Redeploy', 'Preempt', 'Terminate']) {
      const rule = ruleFor(DEFAULT_NOTICE_POLICY, 'azure', type);
      assert.equal(rule?.action, 'evacuate', type);
      assert.equal(rule?.approveWhenDrained, true, type);
    }
    for (const type of [
      'system-reboot',
      'system-maintenance',
      'instance-reboot',
      'instance-retirement',
      'instance-stop',
    ]) {
      assert.equal(ruleFor(DEFAULT_NOTICE_POLICY, 'aws', type)?.action, 'evacuate', type);
    }
    assert.equal(ruleFor(DEFAULT_NOTICE_POLICY, 'aws', 'spot-interruption')?.timing, 'deadline');
    assert.equal(ruleFor(DEFAULT_NOTICE_POLICY, 'gcp', 'MIGRATE_ON_HOST_MAINTENANCE')?.action, 'evacuate');
    assert.equal(ruleFor(DEFAULT_NOTICE_POLICY, 'gcp', 'TERMINATE_ON_HOST_MAINTENANCE')?.action, 'evacuate');
    assert.equal(ruleFor(DEFAULT_NOTICE_POLICY, 'aws', 'no-such-type'), undefined);
  });

  it('carries no drain option of its own: the origin decides, below the operator (docs/drain-defaults.md)', () => {
    for (const row of describePolicy()) assert.deepEqual(row.drain, {}, `${row.provider} ${row.type}`);
  });

  it('is data for `plan`: one row per provider and type', () => {
    const rows = describePolicy();
    assert.equal(rows.length, 5 + 7 + 4 + 12);
    assert.deepEqual(
      rows.filter((r) => r.action === 'ignore').map((r) => `${r.provider}/${r.type}`),
      ['azure/Freeze'],
    );
  });

  it('takes overrides field by field, keeping the rest', () => {
    const policy = parseNoticePolicy(
      JSON.stringify({
        azure: { Freeze: { action: 'evacuate' } },
        aws: { 'instance-reboot': { drain: { gracePeriodSeconds: 60 } } },
      }),
    );
    assert.ok(!Array.isArray(policy));
    assert.equal(policy.azure.Freeze.action, 'evacuate');
    assert.equal(policy.azure.Reboot.action, 'evacuate');
    assert.deepEqual(policy.aws['instance-reboot'].drain, { gracePeriodSeconds: 60 });
  });

  it('refuses overrides naming the JSON path', () => {
    const found = problems({
      ...BASE,
      DRAINBRIDGE_NOTICE_POLICY: JSON.stringify({
        azure: { Frezze: { action: 'evacuate' }, Reboot: { action: 'maybe' } },
        aws: { 'system-reboot': { approveWhenDrained: true, drain: { force: 'yes' } } },
        ibm: {},
      }),
    });
    for (const expected of [
      'DRAINBRIDGE_NOTICE_POLICY.azure.Frezze: unknown azure notice type (known: Freeze, Reboot, Redeploy, Preempt, Terminate)',
      'DRAINBRIDGE_NOTICE_POLICY.azure.Reboot.action: must be one of evacuate, ignore',
      'DRAINBRIDGE_NOTICE_POLICY.aws.system-reboot.drain.force:',
      'DRAINBRIDGE_NOTICE_POLICY.aws.system-reboot.approveWhenDrained: only azure events can be approved',
      'DRAINBRIDGE_NOTICE_POLICY.ibm: unknown provider (known: azure, aws, gcp, alibaba)',
    ]) {
      assert.ok(
        found.some((p) => p.startsWith(expected)),
        `${expected} in ${found.join(' | ')}`,
      );
    }
    assert.deepEqual(
      problems({ ...BASE, DRAINBRIDGE_NOTICE_POLICY: '{not json' }).map((p) => p.split(':')[0]),
      ['DRAINBRIDGE_NOTICE_POLICY'],
    );
  });
});
