/** Authentication and RBAC: tokens, ServiceAccounts, bindings, refusals worded as the apiserver words them. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AccessAttributes, ruleAllows } from '../../sim/auth/rules.ts';
import type { Simulator } from '../../sim/index.ts';
import { api, PODS, runningPod, startBare } from './helpers.ts';

const RBAC = { group: 'rbac.authorization.k8s.io' };

const resource = (verb: string, resourceName: string, more: Partial<AccessAttributes> = {}): AccessAttributes => ({
  verb,
  isResourceRequest: true,
  path: '',
  group: '',
  resource: resourceName,
  subresource: '',
  namespace: 'default',
  name: '',
  ...more,
});

describe('RBAC rule matching', () => {
  const cases: [string, Parameters<typeof ruleAllows>[0], AccessAttributes, boolean][] = [
    ['exact', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, resource('get', 'pods'), true],
    ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, resource('list', 'pods'), false],
    ['star verb', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, resource('delete', 'pods'), true],
    ['other group', { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, resource('get', 'pods'), false],
    [
      'subresource needs its own entry',
      { verbs: ['create'], apiGroups: [''], resources: ['pods'] },
      resource('create', 'pods', { subresource: 'eviction' }),
      false,
    ],
    [
      'pods/eviction',
      { verbs: ['create'], apiGroups: [''], resources: ['pods/eviction'] },
      resource('create', 'pods', { subresource: 'eviction' }),
      true,
    ],
    [
      '*/status',
      { verbs: ['get'], apiGroups: ['*'], resources: ['*/status'] },
      resource('get', 'nodes', { subresource: 'status' }),
      true,
    ],
    [
      'resourceNames match',
      { verbs: ['get'], apiGroups: [''], resources: ['nodes'], resourceNames: ['n1'] },
      resource('get', 'nodes', { name: 'n1' }),
      true,
    ],
    [
      'resourceNames do not allow list',
      { verbs: ['list'], apiGroups: [''], resources: ['nodes'], resourceNames: ['n1'] },
      resource('list', 'nodes'),
      false,
    ],
    [
      'nonResourceURL prefix',
      { verbs: ['get'], nonResourceURLs: ['/apis/*'] },
      { ...resource('get', ''), isResourceRequest: false, path: '/apis/apps/v1' },
      true,
    ],
  ];
  for (const [name, rule, request, allowed] of cases) {
    it(name, () => assert.equal(ruleAllows(rule, request), allowed));
  }
});

describe('RBAC over HTTP', () => {
  let sim: Simulator;
  let drainer: string;
  before(async () => {
    sim = await startBare();
    sim.store.create(PODS, runningPod('web-1'));
    sim.store.create(
      { ...RBAC, resource: 'clusterroles' },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'drainer' },
        rules: [
          { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
          { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'], resourceNames: ['node-1'] },
        ],
      },
    );
    sim.store.create(
      { ...RBAC, resource: 'clusterrolebindings' },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'drainer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'drainer' },
        subjects: [{ kind: 'ServiceAccount', name: 'drainer', namespace: 'kube-system' }],
      },
    );
    drainer = await sim.tokenFor('kube-system/drainer');
  });
  after(async () => {
    await sim.stop();
  });

  it('rejects an unknown token with 401', async () => {
    const answer = await api(sim, 'GET', '/api/v1/pods', { token: 'not-a-token' });
    assert.equal(answer.status, 401);
    assert.equal(answer.body.reason, 'Unauthorized');
  });

  it('lets a bound ServiceAccount do what its role allows', async () => {
    assert.equal((await api(sim, 'GET', '/api/v1/namespaces/default/pods', { token: drainer })).status, 200);
  });

  it('words a refusal exactly as the apiserver does', async () => {
    const answer = await api(sim, 'POST', '/api/v1/namespaces/default/pods/web-1/eviction', {
      token: drainer,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1', namespace: 'default' } },
    });
    assert.equal(answer.status, 403);
    assert.equal(answer.body.reason, 'Forbidden');
    assert.equal(
      answer.body.message,
      'pods "web-1" is forbidden: User "system:serviceaccount:kube-system:drainer" cannot create resource "pods/eviction" in API group "" in the namespace "default"',
    );
    assert.deepEqual(answer.body.details, { name: 'web-1', kind: 'pods' });
  });

  it('words cluster-scoped refusals "at the cluster scope" and honours resourceNames', async () => {
    assert.equal((await api(sim, 'GET', '/api/v1/nodes/node-1', { token: drainer })).status, 404);
    const answer = await api(sim, 'GET', '/api/v1/nodes/node-2', { token: drainer });
    assert.equal(answer.status, 403);
    assert.equal(
      answer.body.message,
      'nodes "node-2" is forbidden: User "system:serviceaccount:kube-system:drainer" cannot get resource "nodes" in API group "" at the cluster scope',
    );
  });

  it('gives every authenticated user discovery and /version', async () => {
    assert.equal((await api(sim, 'GET', '/apis', { token: drainer })).status, 200);
    assert.equal((await api(sim, 'GET', '/version', { token: drainer })).status, 200);
  });

  it('answers SelfSubjectAccessReview (kubectl auth can-i) for the caller', async () => {
    const review = (verb: string, resourceName: string, subresource = '') => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'default', verb, resource: resourceName, subresource } },
    });
    const yes = await api(sim, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      token: drainer,
      body: review('list', 'pods'),
    });
    assert.equal(yes.status, 201);
    assert.deepEqual(yes.body.status, {
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "drainer" of ClusterRole "drainer" to ServiceAccount "drainer/kube-system"',
    });
    const no = await api(sim, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      token: drainer,
      body: review('create', 'pods', 'eviction'),
    });
    assert.equal((no.body.status as { allowed: boolean }).allowed, false);
  });

  it("lists the caller's rules (SelfSubjectRulesReview, kubectl auth can-i --list)", async () => {
    const answer = await api(sim, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      token: drainer,
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } },
    });
    assert.equal(answer.status, 201);
    const status = answer.body.status as {
      resourceRules: { resources: string[]; verbs: string[] }[];
      incomplete: boolean;
    };
    assert.deepEqual(
      status.resourceRules.find((r) => r.resources.includes('nodes')),
      { verbs: ['get', 'patch'], apiGroups: [''], resources: ['nodes'], resourceNames: ['node-1'] },
    );
    assert.equal(status.incomplete, false);
  });

  it('reports a binding to a missing role in the refusal, as "RBAC: … not found"', async () => {
    sim.store.create(
      { ...RBAC, resource: 'rolebindings' },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'ghost', namespace: 'default' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ghost' },
        subjects: [{ kind: 'ServiceAccount', name: 'drainer', namespace: 'kube-system' }],
      },
    );
    const answer = await api(sim, 'DELETE', '/api/v1/namespaces/default/pods/web-1', { token: drainer });
    assert.equal(answer.status, 403);
    assert.match(
      String(answer.body.message),
      /in the namespace "default": RBAC: role\.rbac\.authorization\.k8s\.io "ghost" not found$/,
    );
  });

  it('impersonates only with the impersonate verb', async () => {
    const headers = { 'impersonate-user': 'system:serviceaccount:kube-system:drainer' };
    const asAdmin = await fetch(`${sim.url}/api/v1/nodes/node-2`, {
      headers: { authorization: `Bearer ${sim.adminToken}`, ...headers },
    });
    assert.equal(asAdmin.status, 403, "the admin acting as the drainer gets the drainer's refusal");
    const asDrainer = await fetch(`${sim.url}/api/v1/nodes`, {
      headers: { authorization: `Bearer ${drainer}`, 'impersonate-user': 'someone' },
    });
    assert.equal(asDrainer.status, 403);
    const body = (await asDrainer.json()) as { message: string };
    assert.match(
      body.message,
      /users "someone" is forbidden: User "system:serviceaccount:kube-system:drainer" cannot impersonate resource "users"/,
    );
  });
});
