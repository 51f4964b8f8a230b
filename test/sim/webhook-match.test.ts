/** Which requests a validating webhook's rules and selectors take (sim/server/webhooks/match.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Attributes, ruleMatches, webhookApplies } from '../../sim/server/webhooks/match.ts';

const pods: Attributes = {
  operation: 'CREATE',
  group: '',
  version: 'v1',
  resource: 'pods',
  namespaced: true,
  objectLabels: [{ app: 'web' }],
  namespaceLabels: { team: 'shop' },
};
const eviction: Attributes = { ...pods, subresource: 'eviction' };
const node: Attributes = { ...pods, resource: 'nodes', namespaced: false, operation: 'UPDATE', objectLabels: [{}] };
const rule = (resources: string[], extra: Record<string, unknown> = {}) => ({
  operations: ['*'],
  apiGroups: ['*'],
  apiVersions: ['*'],
  resources,
  ...extra,
});

describe('webhook rules', () => {
  const cases: [string, ReturnType<typeof rule>, Attributes, boolean][] = [
    ['pods matches pods', rule(['pods']), pods, true],
    ['pods does not match pods/eviction', rule(['pods']), eviction, false],
    ['* does not match a subresource', rule(['*']), eviction, false],
    ['pods/* matches pods/eviction', rule(['pods/*']), eviction, true],
    ['*/eviction matches pods/eviction', rule(['*/eviction']), eviction, true],
    ['*/* matches everything', rule(['*/*']), eviction, true],
    ['*/status does not match pods', rule(['*/status']), pods, false],
    ['operation UPDATE only: not a CREATE', rule(['pods'], { operations: ['UPDATE'] }), pods, false],
    ['group apps: not core', rule(['pods'], { apiGroups: ['apps'] }), pods, false],
    ['version v2: not v1', rule(['pods'], { apiVersions: ['v2'] }), pods, false],
    ['scope Namespaced: not a node', rule(['nodes'], { scope: 'Namespaced' }), node, false],
    ['scope Cluster: a node', rule(['nodes'], { scope: 'Cluster' }), node, true],
  ];
  for (const [what, each, request, expected] of cases) {
    it(what, () => assert.equal(ruleMatches(each, request), expected));
  }
});

describe('webhook selectors', () => {
  const webhook = (extra: Record<string, unknown>) => ({ name: 'w', rules: [rule(['pods'])], ...extra });

  it('objectSelector against the object labels; namespaceSelector against the namespace labels', () => {
    assert.equal(webhookApplies(webhook({ objectSelector: { matchLabels: { app: 'web' } } }), pods), true);
    assert.equal(webhookApplies(webhook({ objectSelector: { matchLabels: { app: 'db' } } }), pods), false);
    assert.equal(webhookApplies(webhook({ namespaceSelector: { matchLabels: { team: 'shop' } } }), pods), true);
    assert.equal(
      webhookApplies(
        webhook({ namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['shop'] }] } }),
        pods,
      ),
      false,
    );
    assert.equal(webhookApplies(webhook({ objectSelector: {} }), pods), true, 'an empty selector selects everything');
  });

  it('a namespaceSelector does not apply to cluster-scoped objects', () => {
    const onNodes = { name: 'w', rules: [rule(['nodes'])], namespaceSelector: { matchLabels: { team: 'x' } } };
    assert.equal(webhookApplies(onNodes, node), true);
  });
});
