/** The HTTP API: version, discovery, verbs, patches, watch, Table, errors, request log, protobuf bodies. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { decodeKubernetesProtobuf } from '../../sim/server/protobuf.ts';
import { StatusError } from '../../sim/store/status.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { api, NODES, PODS, runningPod, startBare } from './helpers.ts';

function node(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] },
    status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.32.4' } },
  };
}

describe('simulator HTTP API', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startBare();
    sim.store.create(NODES, node('node-1'));
    for (const name of ['a', 'b', 'c']) sim.store.create(PODS, runningPod(name));
  });
  after(async () => {
    await sim.stop();
  });

  it('reports Kubernetes v1.32', async () => {
    const answer = await api(sim, 'GET', '/version');
    assert.equal(answer.body.major, '1');
    assert.equal(answer.body.minor, '32');
    assert.match(String(answer.body.gitVersion), /^v1\.32\.\d+$/);
  });

  it('serves aggregated discovery when asked, with subresources such as pods/eviction', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const answer = await api(sim, 'GET', '/api', { accept });
    assert.equal(
      answer.headers.get('content-type'),
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    const core = (
      answer.body.items as {
        versions: { resources: { resource: string; subresources?: { subresource: string }[] }[] }[];
      }[]
    )[0];
    const pods = core?.versions[0]?.resources.find((r) => r.resource === 'pods');
    assert.deepEqual(
      pods?.subresources?.map((s) => s.subresource),
      ['status', 'eviction', 'binding'],
    );
  });

  it('serves legacy discovery documents', async () => {
    const groups = await api(sim, 'GET', '/apis');
    const names = (groups.body.groups as { name: string }[]).map((g) => g.name);
    for (const group of [
      'apps',
      'batch',
      'policy',
      'coordination.k8s.io',
      'rbac.authorization.k8s.io',
      'apiextensions.k8s.io',
    ]) {
      assert.ok(names.includes(group), group);
    }
    const v1 = await api(sim, 'GET', '/api/v1');
    const eviction = (v1.body.resources as { name: string; group?: string; kind: string }[]).find(
      (r) => r.name === 'pods/eviction',
    );
    assert.deepEqual([eviction?.group, eviction?.kind], ['policy', 'Eviction']);
    assert.equal((await api(sim, 'GET', '/apis/nope/v1')).status, 404);
  });

  it('lists with limit/continue and answers Tables for kubectl get', async () => {
    const page = await api(sim, 'GET', '/api/v1/namespaces/default/pods?limit=2');
    assert.equal((page.body.items as unknown[]).length, 2);
    const token = (page.body.metadata as { continue: string }).continue;
    const rest = await api(sim, 'GET', `/api/v1/namespaces/default/pods?limit=2&continue=${encodeURIComponent(token)}`);
    assert.deepEqual(
      (rest.body.items as { metadata: { name: string } }[]).map((p) => p.metadata.name),
      ['c'],
    );
    const table = await api(sim, 'GET', '/api/v1/nodes', {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    assert.equal(table.body.kind, 'Table');
    const rows = table.body.rows as { cells: unknown[] }[];
    assert.deepEqual(rows[0]?.cells.slice(0, 3), ['node-1', 'Ready', '<none>']);
  });

  it('cordons with a strategic merge patch and merges keyed lists (taints)', async () => {
    const answer = await api(sim, 'PATCH', '/api/v1/nodes/node-1', {
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { unschedulable: true, taints: [{ key: 'b', effect: 'NoExecute' }] } },
    });
    assert.equal(answer.status, 200);
    const spec = answer.body.spec as { unschedulable: boolean; taints: { key: string }[] };
    assert.equal(spec.unschedulable, true);
    assert.deepEqual(
      spec.taints.map((t) => t.key),
      ['a', 'b'],
    );
  });

  it('applies JSON patches and merge patches, and refuses strategic merge patches on custom resources', async () => {
    const json = await api(sim, 'PATCH', '/api/v1/nodes/node-1', {
      contentType: 'application/json-patch+json',
      body: [{ op: 'replace', path: '/spec/unschedulable', value: false }],
    });
    // The API server omits `unschedulable: false` (omitempty): an uncordoned node has no such field.
    assert.equal(Object.hasOwn(json.body.spec as object, 'unschedulable'), false);
    const merge = await api(sim, 'PATCH', '/api/v1/nodes/node-1', {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { role: 'x' } } },
    });
    assert.equal((merge.body.metadata as { labels: Record<string, string> }).labels.role, 'x');
    await api(sim, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', kind: 'Widget' },
          versions: [{ name: 'v1', served: true, storage: true }],
        },
      },
    });
    await api(sim, 'POST', '/apis/example.com/v1/namespaces/default/widgets', {
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
    });
    const refused = await api(sim, 'PATCH', '/apis/example.com/v1/namespaces/default/widgets/w', {
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { a: 1 } },
    });
    assert.equal(refused.status, 415);
  });

  it('answers a JSON patch that does not apply as the apiserver does: 422 Invalid, no causes; no patch at all is 400', async () => {
    const mark = sim.requestLog.mark();
    const failed = await api(sim, 'PATCH', '/api/v1/nodes/node-1', {
      contentType: 'application/json-patch+json',
      body: [
        { op: 'test', path: '/spec/unschedulable', value: 'not-what-is-stored' },
        { op: 'replace', path: '/spec/unschedulable', value: true },
      ],
    });
    assert.equal(failed.status, 422);
    assert.equal(failed.body.reason, 'Invalid');
    assert.equal(failed.body.message, 'the server rejected our request due to an error in our request');
    assert.deepEqual(failed.body.details, {});
    const missing = await api(sim, 'PATCH', '/api/v1/nodes/node-1', {
      contentType: 'application/json-patch+json',
      body: [{ op: 'remove', path: '/metadata/annotations/not-there' }],
    });
    assert.equal(missing.status, 422);
    assert.equal(missing.body.message, 'the server rejected our request due to an error in our request');
    const notAPatch = await api(sim, 'PATCH', '/api/v1/nodes/node-1', {
      contentType: 'application/json-patch+json',
      body: { op: 'remove' },
    });
    assert.equal(notAPatch.status, 400);
    assert.deepEqual(sim.requestLog.writes({ since: mark }), []);
  });

  it('answers 409 Conflict on a stale update and 404 with the apiserver wording', async () => {
    const current = await api(sim, 'GET', '/api/v1/namespaces/default/pods/a');
    const stale = { ...current.body, metadata: { ...(current.body.metadata as object), resourceVersion: '1' } };
    const answer = await api(sim, 'PUT', '/api/v1/namespaces/default/pods/a', { body: stale });
    assert.equal(answer.status, 409);
    assert.equal(answer.body.reason, 'Conflict');
    const missing = await api(sim, 'GET', '/apis/apps/v1/namespaces/default/deployments/nope');
    assert.deepEqual(missing.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'deployments.apps "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', group: 'apps', kind: 'deployments' },
      code: 404,
    });
  });

  it('honours dryRun=All on create and records writes in the request log', async () => {
    const mark = sim.requestLog.mark();
    const dry = await api(sim, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } },
    });
    assert.equal(dry.status, 201);
    assert.equal(sim.store.get({ group: '', resource: 'configmaps' }, 'default', 'cm'), undefined);
    assert.deepEqual(sim.requestLog.writes({ since: mark }), []);
    await api(sim, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } },
    });
    const writes = sim.requestLog.writes({ since: mark });
    assert.equal(writes.length, 1);
    assert.deepEqual(
      [writes[0]?.verb, writes[0]?.resource, writes[0]?.name, writes[0]?.user, writes[0]?.status],
      ['create', 'configmaps', '', 'kubernetes-admin', 201],
    );
  });

  it('deletes gracefully over HTTP: a pod answers with itself, other kinds with a Success Status', async () => {
    const pod = await api(sim, 'DELETE', '/api/v1/namespaces/default/pods/c', { body: { gracePeriodSeconds: 5 } });
    assert.equal((pod.body.metadata as { deletionGracePeriodSeconds: number }).deletionGracePeriodSeconds, 5);
    const cm = await api(sim, 'DELETE', '/api/v1/namespaces/default/configmaps/cm');
    assert.equal(cm.body.status, 'Success');
  });

  it('streams watch events and sends 410 Expired as an ERROR event for a compacted version', async () => {
    const controller = new AbortController();
    const response = await fetch(
      `${sim.url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${sim.store.currentResourceVersion()}`,
      {
        headers: { authorization: `Bearer ${sim.adminToken}` },
        signal: controller.signal,
      },
    );
    const reader = response.body?.getReader();
    sim.store.create(PODS, runningPod('watched'));
    const chunk = await reader?.read();
    controller.abort();
    const event = JSON.parse(new TextDecoder().decode(chunk?.value).split('\n')[0] ?? '{}') as {
      type: string;
      object: { metadata: { name: string } };
    };
    assert.deepEqual([event.type, event.object.metadata.name], ['ADDED', 'watched']);

    const small = await startSimulator({ controllers: false, tls: false, historySize: 3 });
    try {
      const first = small.store.currentResourceVersion();
      for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) small.store.create(PODS, runningPod(name));
      const expired = await fetch(`${small.url}/api/v1/pods?watch=1&resourceVersion=${first}`, {
        headers: { authorization: `Bearer ${small.adminToken}` },
      });
      assert.equal(expired.status, 200);
      const line = JSON.parse((await expired.text()).trim()) as {
        type: string;
        object: { code: number; reason: string };
      };
      assert.deepEqual([line.type, line.object.code, line.object.reason], ['ERROR', 410, 'Expired']);
    } finally {
      await small.stop();
    }
  });

  it('answers a watch-list (sendInitialEvents) with the current objects and an initial-events-end bookmark', async () => {
    const controller = new AbortController();
    const response = await fetch(
      `${sim.url}/api/v1/namespaces/default/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Dweb`,
      { headers: { authorization: `Bearer ${sim.adminToken}` }, signal: controller.signal },
    );
    const reader = response.body?.getReader();
    let text = '';
    while (!text.includes('initial-events-end')) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    controller.abort();
    const events = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; object: KubeObject });
    const last = events.at(-1);
    assert.equal(last?.type, 'BOOKMARK');
    assert.equal(last?.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.ok(events.slice(0, -1).every((e) => e.type === 'ADDED'));
    assert.ok(events.length > 1);
  });

  it('decodes protobuf Eviction bodies as kubectl sends them', () => {
    const bytes = protobufEviction('web-1', 'default');
    const decoded = decodeKubernetesProtobuf(bytes);
    assert.deepEqual(decoded, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'web-1', namespace: 'default' },
      deleteOptions: { gracePeriodSeconds: -1, dryRun: ['All'] },
    });
  });

  it("lets an admission hook answer a request before it is applied (KubeVirt's eviction webhook)", async () => {
    sim.store.create(PODS, runningPod('virt-launcher-vm1', { labels: { 'kubevirt.io': 'virt-launcher' } }));
    const remove = sim.store.admission.add({
      name: 'kubevirt-eviction',
      admit: (request) => {
        if (request.subresource !== 'eviction' || !request.name?.startsWith('virt-launcher-')) return undefined;
        return {
          status: new StatusError(429, 'TooManyRequests', 'Eviction triggered evacuation of VMI "default/vm1"'),
        };
      },
    });
    try {
      const body = {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'virt-launcher-vm1', namespace: 'default' },
      };
      const answer = await api(sim, 'POST', '/api/v1/namespaces/default/pods/virt-launcher-vm1/eviction', { body });
      assert.equal(answer.status, 429);
      assert.equal(answer.body.message, 'Eviction triggered evacuation of VMI "default/vm1"');
      assert.equal(sim.store.get(PODS, 'default', 'virt-launcher-vm1')?.metadata.deletionTimestamp, undefined);
    } finally {
      remove();
    }
    const after = await api(sim, 'POST', '/api/v1/namespaces/default/pods/virt-launcher-vm1/eviction', {
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'virt-launcher-vm1', namespace: 'default' },
      },
    });
    assert.equal(after.status, 201, 'without the hook the eviction goes through');
  });

  it('refuses bad bodies naming the field, and stores nothing', async () => {
    const mark = sim.requestLog.mark();
    const wrongVersion = await api(sim, 'POST', '/api/v1/namespaces/default/pods', {
      body: { apiVersion: 'apps/v1', kind: 'Pod', metadata: { name: 'x' } },
    });
    assert.equal(wrongVersion.status, 400);
    assert.equal(
      wrongVersion.body.message,
      'the API version in the data (apps/v1) does not match the expected API version (v1)',
    );
    const noImage = await api(sim, 'POST', '/api/v1/namespaces/default/pods', {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { containers: [{ name: 'c' }] } },
    });
    assert.equal(noImage.status, 422);
    assert.equal(noImage.body.message, 'Pod "x" is invalid: spec.containers[0].image: Required value');
    const noContainers = await api(sim, 'POST', '/api/v1/namespaces/default/pods', {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: {} },
    });
    assert.deepEqual((noContainers.body.details as { causes: unknown[] }).causes, [
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' },
    ]);
    assert.equal(sim.store.get(PODS, 'default', 'x'), undefined);
    assert.deepEqual(sim.requestLog.writes({ since: mark }), []);
  });

  it('fails to start on a port in use, leaving nothing running', async () => {
    const port = Number(new URL(sim.url).port);
    await assert.rejects(startSimulator({ port, tls: false }), /EADDRINUSE/);
  });

  it('answers 404 for resources it does not serve', async () => {
    const answer = await api(sim, 'GET', '/apis/apps/v1/namespaces/default/widgets');
    assert.equal(answer.status, 404);
    assert.equal(answer.body.message, 'the server could not find the requested resource');
  });
});

// A hand-rolled protobuf writer for the test's fixture (strings, sub-messages, varints).
function varint(value: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}
const bytesField = (n: number, bytes: number[]): number[] => [
  ...varint(BigInt((n << 3) | 2)),
  ...varint(BigInt(bytes.length)),
  ...bytes,
];
const stringField = (n: number, text: string): number[] => bytesField(n, [...new TextEncoder().encode(text)]);

function protobufEviction(name: string, namespace: string): Uint8Array {
  const meta = [...stringField(1, name), ...stringField(3, namespace)];
  const deleteOptions = [...varint(BigInt(1 << 3)), ...varint(-1n), ...stringField(5, 'All')];
  const eviction = [...bytesField(1, meta), ...bytesField(2, deleteOptions)];
  const typeMeta = [...stringField(1, 'policy/v1'), ...stringField(2, 'Eviction')];
  return new Uint8Array([0x6b, 0x38, 0x73, 0x00, ...bytesField(1, typeMeta), ...bytesField(2, eviction)]);
}
