/** The object store's apiserver semantics, used directly as the control loops use it. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { type ClosableStore, createStore } from '../../sim/store/memory-store.ts';
import { StatusError } from '../../sim/store/status.ts';
import type { KubeObject, WatchEvent } from '../../sim/store/types.ts';
import { waitUntil } from '../support/wait.ts';
import { NAMESPACES, PODS, runningPod } from './helpers.ts';

const DEPLOYMENTS = { group: 'apps', resource: 'deployments' };
const REPLICASETS = { group: 'apps', resource: 'replicasets' };
const CRDS = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' };

function deployment(name: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: { replicas: 1, selector: { matchLabels: { app: name } } },
  };
}

function statusOf(error: unknown): { code: number; reason: string; message: string } {
  assert.ok(error instanceof StatusError, `expected a StatusError, got ${String(error)}`);
  return { code: error.code, reason: error.reason, message: error.message };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('object store', () => {
  let store: ClosableStore;
  beforeEach(() => {
    store = createStore({ speed: 1, historySize: 50 });
  });
  afterEach(() => store.close());

  it('fills uid, resourceVersion, creationTimestamp and generation on create', () => {
    const created = store.create(DEPLOYMENTS, deployment('web'));
    assert.match(created.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(created.metadata.generation, 1);
    assert.match(created.metadata.creationTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Number(created.metadata.resourceVersion) > 0);
  });

  it('honours generateName and refuses invalid or missing names with 422', () => {
    const generated = store.create(PODS, {
      ...runningPod('x'),
      metadata: { generateName: 'web-', namespace: 'default' },
    });
    assert.match(generated.metadata.name ?? '', /^web-[a-z0-9]{5}$/);
    assert.deepEqual(
      statusOf(catchError(() => store.create(PODS, { ...runningPod('x'), metadata: { namespace: 'default' } }))),
      {
        code: 422,
        reason: 'Invalid',
        message: 'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
      },
    );
    const badName = catchError(() => store.create(PODS, runningPod('Bad_Name')));
    assert.equal(statusOf(badName).code, 422);
    // metav1.StatusCause serialises its Type as "reason".
    assert.deepEqual((badName as StatusError).details?.causes?.[0]?.reason, 'FieldValueInvalid');
    assert.equal((badName as StatusError).details?.causes?.[0]?.field, 'metadata.name');
  });

  it('refuses a duplicate with 409 AlreadyExists and a missing namespace with 404', () => {
    store.create(PODS, runningPod('a'));
    assert.deepEqual(statusOf(catchError(() => store.create(PODS, runningPod('a')))), {
      code: 409,
      reason: 'AlreadyExists',
      message: 'pods "a" already exists',
    });
    assert.equal(
      statusOf(catchError(() => store.create(PODS, runningPod('b', { namespace: 'nowhere' })))).message,
      'namespaces "nowhere" not found',
    );
  });

  it('rejects an update carrying a stale resourceVersion with 409 Conflict', () => {
    const first = store.create(DEPLOYMENTS, deployment('web'));
    store.update(DEPLOYMENTS, { ...first, spec: { replicas: 2 } });
    assert.deepEqual(statusOf(catchError(() => store.update(DEPLOYMENTS, { ...first, spec: { replicas: 3 } }))), {
      code: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('bumps generation on spec changes only and skips no-op writes', () => {
    const created = store.create(DEPLOYMENTS, deployment('web'));
    const labelled = store.mutate(DEPLOYMENTS, { namespace: 'default', name: 'web' }, (d) => {
      d.metadata.labels = { a: 'b' };
      return d;
    });
    assert.equal(labelled.metadata.generation, 1);
    const scaled = store.mutate(DEPLOYMENTS, { namespace: 'default', name: 'web' }, (d) => {
      (d.spec as { replicas: number }).replicas = 5;
      return d;
    });
    assert.equal(scaled.metadata.generation, 2);
    const same = store.mutate(DEPLOYMENTS, { namespace: 'default', name: 'web' }, () => undefined);
    assert.equal(same.metadata.resourceVersion, scaled.metadata.resourceVersion);
    assert.notEqual(created.metadata.resourceVersion, scaled.metadata.resourceVersion);
  });

  it('keeps .status on a main-resource update and writes only .status through the subresource', () => {
    const created = store.create(DEPLOYMENTS, { ...deployment('web'), status: { replicas: 1 } });
    const updated = store.update(DEPLOYMENTS, { ...created, status: { replicas: 9 } });
    assert.deepEqual(updated.status, { replicas: 1 });
    const status = store.update(
      DEPLOYMENTS,
      { ...updated, spec: { replicas: 7 }, status: { replicas: 2 } },
      { subresource: 'status' },
    );
    assert.deepEqual(status.status, { replicas: 2 });
    assert.deepEqual(status.spec, created.spec);
  });

  it('deletes a bound running pod gracefully; a later delete may only shorten the grace period', () => {
    store.create(PODS, runningPod('a'));
    const first = store.delete(PODS, { namespace: 'default', name: 'a' });
    assert.equal(first.removed, false);
    assert.equal(first.object.metadata.deletionGracePeriodSeconds, 30);
    const longer = store.delete(PODS, { namespace: 'default', name: 'a' }, { gracePeriodSeconds: 60 });
    assert.equal(longer.object.metadata.deletionGracePeriodSeconds, 30);
    const now = store.delete(PODS, { namespace: 'default', name: 'a' }, { gracePeriodSeconds: 0 });
    assert.equal(now.removed, true);
    assert.equal(store.get(PODS, 'default', 'a'), undefined);
  });

  it('removes unbound and finished pods at once', () => {
    store.create(PODS, { ...runningPod('pending'), spec: { containers: [] } });
    store.create(PODS, runningPod('done', { phase: 'Succeeded' }));
    assert.equal(store.delete(PODS, { namespace: 'default', name: 'pending' }).removed, true);
    assert.equal(store.delete(PODS, { namespace: 'default', name: 'done' }).removed, true);
  });

  it('checks uid and resourceVersion preconditions on delete', () => {
    const pod = store.create(PODS, runningPod('a', { phase: 'Succeeded' }));
    assert.equal(
      statusOf(
        catchError(() => store.delete(PODS, { namespace: 'default', name: 'a' }, { preconditions: { uid: 'x' } })),
      ).message,
      // BeforeDelete's wording, which names the kind (its check runs before the storage's own).
      `Operation cannot be fulfilled on Pod "a": the UID in the precondition (x) does not match the UID in record (${pod.metadata.uid}). The object might have been deleted and then recreated`,
    );
    assert.deepEqual(
      statusOf(
        catchError(() =>
          store.delete(PODS, { namespace: 'default', name: 'a' }, { preconditions: { resourceVersion: '1' } }),
        ),
      ),
      {
        code: 409,
        reason: 'Conflict',
        message: `Operation cannot be fulfilled on Pod "a": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${pod.metadata.resourceVersion}). The object might have been modified`,
      },
    );
    store.create(DEPLOYMENTS, deployment('web'));
    assert.match(
      statusOf(
        catchError(() =>
          store.delete(DEPLOYMENTS, { namespace: 'default', name: 'web' }, { preconditions: { uid: 'x' } }),
        ),
      ).message,
      /^Operation cannot be fulfilled on Deployment\.apps "web": the UID in the precondition \(x\)/,
    );
    assert.ok(store.get(PODS, 'default', 'a'), 'a refused delete removes nothing');
  });

  it('holds an object with finalizers until the last one is removed', () => {
    store.create(DEPLOYMENTS, {
      ...deployment('web'),
      metadata: { name: 'web', namespace: 'default', finalizers: ['x/y'] },
    });
    const marked = store.delete(DEPLOYMENTS, { namespace: 'default', name: 'web' });
    assert.equal(marked.removed, false);
    assert.ok(marked.object.metadata.deletionTimestamp);
    store.mutate(DEPLOYMENTS, { namespace: 'default', name: 'web' }, (d) => {
      d.metadata.finalizers = [];
      return d;
    });
    assert.equal(store.get(DEPLOYMENTS, 'default', 'web'), undefined);
  });

  it('collects dependents by owner uid, or orphans them with propagationPolicy Orphan', () => {
    const owner = store.create(DEPLOYMENTS, deployment('web'));
    const ownerRef = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'web',
      uid: owner.metadata.uid ?? '',
      controller: true,
    };
    store.create(REPLICASETS, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-1', namespace: 'default', ownerReferences: [ownerRef] },
    });
    store.delete(DEPLOYMENTS, { namespace: 'default', name: 'web' });
    assert.equal(store.get(REPLICASETS, 'default', 'web-1'), undefined);

    const owner2 = store.create(DEPLOYMENTS, deployment('api'));
    const ref2 = { ...ownerRef, name: 'api', uid: owner2.metadata.uid ?? '' };
    store.create(REPLICASETS, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'api-1', namespace: 'default', ownerReferences: [ref2] },
    });
    store.delete(DEPLOYMENTS, { namespace: 'default', name: 'api' }, { propagationPolicy: 'Orphan' });
    assert.deepEqual(store.get(REPLICASETS, 'default', 'api-1')?.metadata.ownerReferences, []);
  });

  it('terminates a namespace: Terminating, content deleted, gone when empty', () => {
    store.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    store.create(PODS, runningPod('a', { namespace: 'shop' }));
    const result = store.delete(NAMESPACES, { name: 'shop' });
    assert.equal(result.removed, false);
    assert.equal((store.mustGet(NAMESPACES, undefined, 'shop').status as { phase: string }).phase, 'Terminating');
    assert.equal(statusOf(catchError(() => store.create(PODS, runningPod('b', { namespace: 'shop' })))).code, 403);
    store.delete(PODS, { namespace: 'shop', name: 'a' }, { gracePeriodSeconds: 0 });
    assert.equal(store.get(NAMESPACES, undefined, 'shop'), undefined);
  });

  it('lists with label and field selectors and pages with limit/continue', () => {
    for (const name of ['a', 'b', 'c', 'd'])
      store.create(PODS, runningPod(name, { node: name === 'd' ? 'node-2' : 'node-1' }));
    assert.deepEqual(
      store.list(PODS, { fieldSelector: 'spec.nodeName=node-1,metadata.name!=b' }).items.map((p) => p.metadata.name),
      ['a', 'c'],
    );
    assert.equal(store.list(PODS, { labelSelector: 'app in (web)' }).items.length, 4);
    const first = store.list(PODS, { namespace: 'default', limit: 3 });
    assert.deepEqual(
      first.items.map((p) => p.metadata.name),
      ['a', 'b', 'c'],
    );
    assert.equal(first.remainingItemCount, 1);
    const second = store.list(PODS, { namespace: 'default', limit: 3, continue: first.continue });
    assert.deepEqual(
      second.items.map((p) => p.metadata.name),
      ['d'],
    );
    assert.equal(second.continue, undefined);
    assert.equal(second.resourceVersion, first.resourceVersion);
  });

  it('answers node and owner selections from indexes kept in step with every write', () => {
    const namesOf = (items: readonly KubeObject[]): (string | undefined)[] => items.map((p) => p.metadata.name);
    const onNode = (node: string): (string | undefined)[] =>
      namesOf(store.list(PODS, { fieldSelector: `spec.nodeName=${node}` }).items);
    const owner = store.create(DEPLOYMENTS, deployment('web'));
    const uid = owner.metadata.uid ?? '';
    const ownerRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid, controller: true };
    for (const name of ['e', 'b', 'd', 'a', 'c']) {
      const pod = runningPod(name, { node: name === 'c' ? 'node-2' : 'node-1' });
      if (name !== 'a') pod.metadata.ownerReferences = [ownerRef];
      store.create(PODS, pod);
    }
    assert.deepEqual(onNode('node-1'), ['a', 'b', 'd', 'e']);
    assert.deepEqual(namesOf(store.scan(PODS, { ownerUid: uid })), ['b', 'c', 'd', 'e']);
    // A pod moved to another node (an unbound one bound) leaves the old node's entry and joins the new one's.
    store.mutate(PODS, { namespace: 'default', name: 'b' }, (copy) => {
      (copy.spec as { nodeName: string }).nodeName = 'node-2';
      return copy;
    });
    assert.deepEqual(onNode('node-1'), ['a', 'd', 'e']);
    assert.deepEqual(onNode('node-2'), ['b', 'c']);
    // An owner reference dropped or added moves the pod in the owner index.
    store.mutate(PODS, { namespace: 'default', name: 'd' }, (copy) => {
      copy.metadata.ownerReferences = [];
      return copy;
    });
    store.mutate(PODS, { namespace: 'default', name: 'a' }, (copy) => {
      copy.metadata.ownerReferences = [ownerRef];
      return copy;
    });
    assert.deepEqual(namesOf(store.scan(PODS, { ownerUid: uid, fieldSelector: 'spec.nodeName=node-1' })), ['a', 'e']);
    store.delete(PODS, { namespace: 'default', name: 'e' }, { gracePeriodSeconds: 0 });
    assert.deepEqual(onNode('node-1'), ['a', 'd']);
    assert.deepEqual(namesOf(store.scan(PODS, { ownerUid: uid })), ['a', 'b', 'c']);
    assert.deepEqual(onNode('node-9'), []);
    // The unbound are not indexed by node: `spec.nodeName=` still tests every pod.
    store.create(PODS, { ...runningPod('f'), spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    assert.deepEqual(namesOf(store.list(PODS, { fieldSelector: 'spec.nodeName=' }).items), ['f']);
    // The garbage collector reads the owner index: the owned (bound, running) pods start terminating, the others not.
    store.delete(DEPLOYMENTS, { namespace: 'default', name: 'web' });
    const terminating = store.list(PODS).items.filter((pod) => pod.metadata.deletionTimestamp);
    assert.deepEqual(namesOf(terminating), ['a', 'b', 'c']);
  });

  it('watches: initial ADDED, live events in order, selector transitions', async () => {
    store.create(PODS, runningPod('a'));
    const events: string[] = [];
    const watch = store.watch(PODS, { fieldSelector: 'spec.nodeName=node-1' }, (e: WatchEvent) =>
      events.push(`${e.type} ${e.object.metadata.name}`),
    );
    store.create(PODS, runningPod('b', { node: 'node-2' }));
    store.mutate(PODS, { namespace: 'default', name: 'b' }, (p) => {
      (p.spec as { nodeName: string }).nodeName = 'node-1';
      return p;
    });
    store.mutate(PODS, { namespace: 'default', name: 'a' }, (p) => {
      (p.spec as { nodeName: string }).nodeName = 'node-3';
      return p;
    });
    await flush();
    watch.stop();
    assert.deepEqual(events, ['ADDED a', 'ADDED b', 'DELETED a']);
  });

  it('resumes a watch from a resourceVersion and answers 410 for one older than the history', async () => {
    const a = store.create(PODS, runningPod('a'));
    store.create(PODS, runningPod('b'));
    const seen: string[] = [];
    const watch = store.watch(PODS, { resourceVersion: a.metadata.resourceVersion }, (e) =>
      seen.push(e.object.metadata.name ?? ''),
    );
    await flush();
    watch.stop();
    assert.deepEqual(seen, ['b']);
    for (let i = 0; i < 60; i++) store.create(PODS, runningPod(`p${i}`));
    const error = catchError(() => store.watch(PODS, { resourceVersion: a.metadata.resourceVersion }, () => {}));
    assert.equal(statusOf(error).code, 410);
    assert.equal(statusOf(error).reason, 'Expired');
  });

  it('sends bookmarks when asked', async () => {
    const fast = createStore({ speed: 1000 });
    try {
      const types: string[] = [];
      const watch = fast.watch(
        PODS,
        { resourceVersion: fast.currentResourceVersion(), allowBookmarks: true, bookmarkIntervalMs: 1000 },
        (e) => types.push(e.type),
      );
      // 1000 ms of the simulator's time is 1 ms at speed 1000: wait for the event, not for a guessed time.
      await waitUntil('a BOOKMARK on the watch', () => types.includes('BOOKMARK'), 5_000);
      watch.stop();
    } finally {
      fast.close();
    }
  });

  it("serves a CRD's resource as soon as the CRD is created, and drops it when deleted", () => {
    store.create(CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'nodemaintenances.nodemaintenance.medik8s.io' },
      spec: {
        group: 'nodemaintenance.medik8s.io',
        scope: 'Cluster',
        names: { plural: 'nodemaintenances', singular: 'nodemaintenance', kind: 'NodeMaintenance', shortNames: ['nm'] },
        versions: [{ name: 'v1beta1', served: true, storage: true, subresources: { status: {} } }],
      },
    });
    const type = store.registry.lookup('nodemaintenance.medik8s.io', 'v1beta1', 'nodemaintenances');
    assert.equal(type?.namespaced, false);
    assert.deepEqual(type?.subresources, ['status']);
    const ref = { group: 'nodemaintenance.medik8s.io', resource: 'nodemaintenances' };
    store.create(ref, {
      apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
      kind: 'NodeMaintenance',
      metadata: { name: 'nm-1' },
    });
    assert.equal(store.list(ref).items.length, 1);
    store.delete(CRDS, { name: 'nodemaintenances.nodemaintenance.medik8s.io' });
    assert.equal(store.registry.get(ref), undefined);
  });

  it('refuses a CRD whose name does not match its names and group', () => {
    const error = catchError(() =>
      store.create(CRDS, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'wrong' },
        spec: {
          group: 'x.io',
          scope: 'Namespaced',
          names: { plural: 'things', kind: 'Thing' },
          versions: [{ name: 'v1', served: true, storage: true }],
        },
      }),
    );
    assert.equal(statusOf(error).code, 422);
    assert.match(
      statusOf(error).message,
      /metadata\.name: Invalid value: "wrong": must be spec\.names\.plural\+"\."\+spec\.group/,
    );
    assert.deepEqual((error as StatusError).details?.causes, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "wrong": must be spec.names.plural+"."+spec.group',
        field: 'metadata.name',
      },
    ]);
  });

  it('names each bad CRD field with the cause reason its message starts with', () => {
    const error = catchError(() =>
      store.create(CRDS, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'things.x.io' },
        spec: { group: 'x.io', scope: 'Global', names: { plural: 'things' }, versions: [] },
      }),
    );
    assert.equal(statusOf(error).code, 422);
    assert.deepEqual(
      (error as StatusError).details?.causes?.map((c) => [c.field, c.reason]),
      [
        ['spec.names.kind', 'FieldValueRequired'],
        ['spec.scope', 'FieldValueNotSupported'],
        ['spec.versions', 'FieldValueRequired'],
      ],
    );
    assert.match(
      statusOf(error).message,
      /spec\.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"/,
    );
    assert.equal(store.get(CRDS, undefined, 'things.x.io'), undefined);
  });

  it('dry runs change nothing', () => {
    const rv = store.currentResourceVersion();
    store.create(PODS, runningPod('a'), { dryRun: true });
    assert.equal(store.get(PODS, 'default', 'a'), undefined);
    assert.equal(store.currentResourceVersion(), rv);
  });
});

function catchError(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}
