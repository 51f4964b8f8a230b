/**
 * The control loops driven through the real store: deployments and replica sets replace lost pods on
 * other nodes, DaemonSets come back on cordoned nodes, StatefulSets keep their ordinal names, Jobs
 * complete, the scheduler explains what it cannot place.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { KubeObject } from '../../../sim/store/types.ts';
import { waitUntil } from '../../support/wait.ts';
import {
  cordon,
  DEPLOYMENTS,
  DS,
  EVENTS,
  isReady,
  JOBS,
  NODES,
  node,
  nodeNameOf,
  PODS,
  phase,
  pods,
  RS,
  type Sim,
  STS,
  startSim,
  template,
  workload,
} from './harness.ts';

let sim: Sim;

beforeEach(() => {
  sim = startSim(200);
  for (const name of ['n1', 'n2', 'n3']) sim.store.create(NODES, node(name));
});

afterEach(() => sim.close());

const live = (list: KubeObject[]): KubeObject[] => list.filter((p) => p.metadata.deletionTimestamp === undefined);

describe('Deployment and ReplicaSet', () => {
  it('runs the replicas through a ReplicaSet with a pod-template-hash, owned by controller references', async () => {
    const { store } = sim;
    store.create(
      DEPLOYMENTS,
      workload('Deployment', 'web', {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: template({ app: 'web' }),
      }),
    );
    const ready = await waitUntil('3 ready web pods', () => {
      const list = pods(store, 'app=web');
      return list.length === 3 && list.every(isReady) && list;
    });
    const [rs] = store.list(RS).items;
    assert.ok(rs);
    const hash = rs.metadata.labels?.['pod-template-hash'];
    assert.equal(rs.metadata.name, `web-${hash}`);
    assert.equal(rs.metadata.ownerReferences?.[0]?.kind, 'Deployment');
    assert.equal(rs.metadata.ownerReferences?.[0]?.controller, true);
    for (const pod of ready) {
      assert.equal(pod.metadata.labels?.['pod-template-hash'], hash);
      assert.equal(pod.metadata.ownerReferences?.[0]?.uid, rs.metadata.uid);
      assert.equal(phase(pod), 'Running');
    }
    // Least-loaded placement spreads three pods over three empty nodes.
    assert.deepEqual(new Set(ready.map(nodeNameOf)), new Set(['n1', 'n2', 'n3']));
    const status = await waitUntil('deployment status', () => {
      const s = store.get(DEPLOYMENTS, 'default', 'web')?.status as
        | { readyReplicas?: number; availableReplicas?: number }
        | undefined;
      return s?.readyReplicas === 3 && s;
    });
    assert.equal(status.availableReplicas, 3);
  });

  it('replaces deleted pods of a cordoned node on the other nodes', async () => {
    const { store } = sim;
    store.create(
      DEPLOYMENTS,
      workload('Deployment', 'web', {
        replicas: 6,
        selector: { matchLabels: { app: 'web' } },
        template: template({ app: 'web' }),
      }),
    );
    await waitUntil('6 ready pods', () => pods(store, 'app=web').filter(isReady).length === 6);
    cordon(store, 'n1');
    const initialNames = new Set(pods(store, 'app=web').map((p) => p.metadata.name));
    const onN1 = pods(store, 'app=web').filter((p) => nodeNameOf(p) === 'n1');
    assert.ok(onN1.length > 0);
    for (const pod of onN1) store.delete(PODS, { namespace: 'default', name: pod.metadata.name ?? '' });
    const replaced = await waitUntil('6 live ready pods off n1', () => {
      const list = live(pods(store, 'app=web')).filter((p) => nodeNameOf(p) !== 'n1' && isReady(p));
      return list.length === 6 && list;
    });
    const replacements = replaced.filter((p) => !initialNames.has(p.metadata.name));
    assert.equal(replacements.length, onN1.length);
    assert.equal(live(pods(store, 'app=web')).filter((p) => nodeNameOf(p) === 'n1').length, 0);
  });

  it('removes the pods of a deleted node and replaces them elsewhere', async () => {
    const { store } = sim;
    store.create(
      DEPLOYMENTS,
      workload('Deployment', 'web', {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: template({ app: 'web' }),
      }),
    );
    await waitUntil('3 ready pods', () => pods(store, 'app=web').filter(isReady).length === 3);
    store.delete(NODES, { name: 'n3' });
    const after = await waitUntil('3 ready pods on n1 and n2', () => {
      const list = pods(store, 'app=web');
      return list.length === 3 && list.every((p) => isReady(p) && nodeNameOf(p) !== 'n3') && list;
    });
    assert.deepEqual(new Set(after.map(nodeNameOf)), new Set(['n1', 'n2']));
  });

  it('lets the store collect the ReplicaSet and pods of a deleted Deployment, and does not recreate them', async () => {
    const { store } = sim;
    store.create(
      DEPLOYMENTS,
      workload('Deployment', 'web', {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: template({ app: 'web' }),
      }),
    );
    await waitUntil('2 ready pods', () => pods(store, 'app=web').filter(isReady).length === 2);
    store.delete(DEPLOYMENTS, { namespace: 'default', name: 'web' });
    await waitUntil('ReplicaSet gone', () => store.list(RS).items.length === 0);
    await waitUntil('pods gone', () => pods(store, 'app=web').length === 0);
    // A witness instead of a sleep (issue 12 item 7): another Deployment created now is reconciled by the
    // same loops to ready pods; by then they have run past any recreation of web's pods.
    store.create(
      DEPLOYMENTS,
      workload('Deployment', 'witness', {
        replicas: 1,
        selector: { matchLabels: { app: 'witness' } },
        template: template({ app: 'witness' }),
      }),
    );
    await waitUntil('the witness is ready', () => pods(store, 'app=witness').filter(isReady).length === 1);
    assert.equal(pods(store, 'app=web').length, 0);
    assert.equal(store.list(RS).items.filter((rs) => rs.metadata.name?.startsWith('web')).length, 0);
  });

  it('scales down, deleting the surplus', async () => {
    const { store } = sim;
    store.create(
      DEPLOYMENTS,
      workload('Deployment', 'web', {
        replicas: 4,
        selector: { matchLabels: { app: 'web' } },
        template: template({ app: 'web' }),
      }),
    );
    await waitUntil('4 ready pods', () => pods(store, 'app=web').filter(isReady).length === 4);
    store.mutate(DEPLOYMENTS, { namespace: 'default', name: 'web' }, (copy) => {
      (copy.spec as { replicas: number }).replicas = 1;
      return copy;
    });
    await waitUntil('1 pod left', () => pods(store, 'app=web').length === 1);
    const events = store.list(EVENTS).items.map((e) => e.reason);
    assert.ok(events.includes('ScalingReplicaSet'));
    assert.ok(events.includes('SuccessfulDelete'));
  });
});

describe('DaemonSet', () => {
  it('runs one pod per node with the DaemonSet tolerations, and brings it back on a cordoned node', async () => {
    const { store } = sim;
    store.create(
      DS,
      workload('DaemonSet', 'agent', {
        selector: { matchLabels: { app: 'agent' } },
        template: template({ app: 'agent' }),
      }),
    );
    const first = await waitUntil('3 ready agents', () => {
      const list = pods(store, 'app=agent');
      return list.length === 3 && list.every(isReady) && list;
    });
    assert.deepEqual(new Set(first.map(nodeNameOf)), new Set(['n1', 'n2', 'n3']));
    const tolerations = (first[0]!.spec as { tolerations?: { key?: string; effect?: string }[] }).tolerations ?? [];
    assert.ok(tolerations.some((t) => t.key === 'node.kubernetes.io/unschedulable' && t.effect === 'NoSchedule'));
    cordon(store, 'n2');
    const old = first.find((p) => nodeNameOf(p) === 'n2');
    store.delete(PODS, { namespace: 'default', name: old?.metadata.name ?? '' }, { gracePeriodSeconds: 0 });
    const back = await waitUntil('a new ready agent on n2', () =>
      pods(store, 'app=agent').find(
        (p) => nodeNameOf(p) === 'n2' && p.metadata.name !== old?.metadata.name && isReady(p),
      ),
    );
    assert.equal(back.metadata.ownerReferences?.[0]?.kind, 'DaemonSet');
    const status = await waitUntil('DaemonSet status', () => {
      const s = store.get(DS, 'default', 'agent')?.status as
        | { numberReady?: number; desiredNumberScheduled?: number }
        | undefined;
      return s?.numberReady === 3 && s;
    });
    assert.equal(status.desiredNumberScheduled, 3);
  });

  it('skips nodes whose taints the pods do not tolerate', async () => {
    const { store } = sim;
    store.mutate(NODES, { name: 'n3' }, (copy) => {
      (copy.spec as Record<string, unknown>).taints = [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }];
      return copy;
    });
    store.create(
      DS,
      workload('DaemonSet', 'agent', {
        selector: { matchLabels: { app: 'agent' } },
        template: template({ app: 'agent' }),
      }),
    );
    await waitUntil(
      'desiredNumberScheduled 2',
      () =>
        (store.get(DS, 'default', 'agent')?.status as { desiredNumberScheduled?: number } | undefined)
          ?.desiredNumberScheduled === 2,
    );
    assert.deepEqual(new Set(pods(store, 'app=agent').map(nodeNameOf)), new Set(['n1', 'n2']));
  });
});

describe('StatefulSet', () => {
  it('creates ordinal pods one at a time and recreates a deleted one under the same name', async () => {
    const { store } = sim;
    const seen: string[] = [];
    const watch = store.watch(PODS, { labelSelector: 'app=db' }, (event) => {
      if (event.type === 'ADDED') seen.push(event.object.metadata.name ?? '');
    });
    store.create(
      STS,
      workload('StatefulSet', 'db', {
        replicas: 3,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: template({ app: 'db' }),
      }),
    );
    await waitUntil('3 ready db pods', () => pods(store, 'app=db').filter(isReady).length === 3);
    watch.stop();
    assert.deepEqual(seen, ['db-0', 'db-1', 'db-2']);
    const before = store.get(PODS, 'default', 'db-1');
    store.delete(PODS, { namespace: 'default', name: 'db-1' }, { gracePeriodSeconds: 1 });
    const again = await waitUntil('db-1 recreated', () => {
      const pod = store.get(PODS, 'default', 'db-1');
      return pod && pod.metadata.uid !== before?.metadata.uid && isReady(pod) && pod;
    });
    assert.equal(again.metadata.labels?.['statefulset.kubernetes.io/pod-name'], 'db-1');
    assert.equal((again.spec as { hostname?: string }).hostname, 'db-1');
  });
});

describe('Job', () => {
  it('runs its pod to Succeeded and completes', async () => {
    const { store } = sim;
    store.create(JOBS, workload('Job', 'once', { template: template({ task: 'once' }, { restartPolicy: 'Never' }) }));
    const status = await waitUntil('job complete', () => {
      const s = store.get(JOBS, 'default', 'once')?.status as
        | { succeeded?: number; conditions?: { type: string; status: string }[]; completionTime?: string }
        | undefined;
      return s?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') && s;
    });
    assert.equal(status.succeeded, 1);
    assert.ok(status.completionTime);
    const [pod] = pods(store, 'job-name=once');
    assert.equal(phase(pod as KubeObject), 'Succeeded');
  });
});

describe('scheduler', () => {
  it('leaves a pod no node takes Pending with PodScheduled=False and a FailedScheduling event, then binds it when a node frees up', async () => {
    const { store } = sim;
    for (const name of ['n1', 'n2', 'n3']) cordon(store, name);
    store.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'lonely', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const condition = await waitUntil('PodScheduled=False', () => {
      const status = store.get(PODS, 'default', 'lonely')?.status as
        | { conditions?: { type: string; status: string; reason?: string; message?: string }[] }
        | undefined;
      return status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    });
    assert.equal(condition.reason, 'Unschedulable');
    assert.match(condition.message ?? '', /^0\/3 nodes are available: 3 node\(s\) were unschedulable\./);
    const event = store.list(EVENTS, { fieldSelector: 'involvedObject.name=lonely,reason=FailedScheduling' }).items[0];
    assert.equal(event?.type, 'Warning');
    store.mutate(NODES, { name: 'n2' }, (copy) => {
      (copy.spec as Record<string, unknown>).unschedulable = false;
      return copy;
    });
    const bound = await waitUntil('bound and ready', () => {
      const pod = store.get(PODS, 'default', 'lonely');
      return pod && isReady(pod) && pod;
    });
    assert.equal(nodeNameOf(bound), 'n2');
  });
});
