/**
 * The forwarder's informers (lib/sources/informer.ts, list + watch on the lean client lib/clients/kube/http)
 * against the simulator's watch faults, as the forwarder's ServiceAccount: a dropped connection, the API
 * answering 500 for a while, a 410 on resume — with changes made during each outage, all published after
 * recovery (and a change that nets out during the outage publishing nothing); and bookmarks keeping a
 * quiet watch's resourceVersion fresh, so a resume after heavy unrelated churn needs no re-list.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import { createLogger } from '../../lib/log/logger.ts';
import { Forwarder } from '../../lib/sources/forwarder/forwarder.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { waitUntil } from '../support/wait.ts';
import { connectForwarderKube } from './connect.ts';
import { FORWARDER_USER, metric, spreadScenario, startTestCluster, type TestCluster } from './harness.ts';

const NODES = { resources: ['nodes'] };

describe('forwarder informers under watch faults', () => {
  let cluster: TestCluster;
  let bus: InProcessBus;
  let forwarder: Forwarder;
  const user = FORWARDER_USER;

  const published = (detailType: string, node: string): number =>
    bus.accepted.filter(
      (e) => e['detail-type'] === detailType && (e.detail.target as { nodeName?: string }).nodeName === node,
    ).length;
  const restarts = async (reason: string): Promise<number> =>
    metric(await forwarder.metrics.registry.metrics(), 'drainbridge_forwarder_watch_restarts_total', {
      resource: 'nodes',
      reason,
    });

  before(async () => {
    // A short watch history: a stale resourceVersion is compacted (410) after 300 changes.
    cluster = await startTestCluster({ ...spreadScenario(6, { replicas: 2 }), speed: 50 }, { historySize: 300 });
    bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    forwarder = new Forwarder({
      ...(await connectForwarderKube(await cluster.kubeconfigFor('drainbridge-forwarder'))),
      settings: loadForwarderSettings({
        DRAINBRIDGE_CORDON_EVACUATES: 'all',
        DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '3',
      }),
      namespace: 'drainbridge',
      sink: new InProcessPublisher(bus),
      logger: createLogger('forwarder-test', 'ERROR'),
      serveOps: false,
    });
    await forwarder.start();
    await waitUntil('leading and synced', () => forwarder.isLeader && forwarder.notReady().length === 0);
  });
  after(async () => {
    await forwarder?.stop(1000);
    await cluster?.stop();
  });

  it('a dropped watch connection: the change made meanwhile is published', async () => {
    const before = (await restarts('closed')) + (await restarts('error'));
    const expiredBefore = await restarts('expired');
    assert.ok(cluster.sim.faults.dropWatches({ user, ...NODES }) >= 1);
    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    await waitUntil('node-1 cordon published', () => published('Node Cordoned', 'node-1') === 1);
    const after = (await restarts('closed')) + (await restarts('error'));
    assert.equal(after - before, 1, 'one restart');
    assert.equal((await restarts('expired')) - expiredBefore, 0, 'resumed from the last resourceVersion, no re-list');
  });

  it('500 for a while, then 410 on resume: every change made during the outage is published after recovery', async () => {
    const erroredBefore = await restarts('error');
    const expiredBefore = await restarts('expired');
    const injectedBefore = cluster.sim.faults.injected;
    const heal = cluster.sim.faults.failRequests({ user, resources: ['nodes'] });
    cluster.sim.faults.dropWatches({ user, ...NODES });
    await waitUntil('the forwarder hit the 500s', () => cluster.sim.faults.injected >= injectedBefore + 2);
    // Changes during the outage: a new cordon, an uncordon, another cordon, and a cordon and uncordon
    // that nets out (node-5 ends as it began: nothing to publish for it).
    for (const args of [
      ['cordon', 'node-2'],
      ['uncordon', 'node-1'],
      ['cordon', 'node-3'],
      ['cordon', 'node-5'],
      ['uncordon', 'node-5'],
    ]) {
      assert.equal((await cluster.kubectl.run(args)).code, 0);
    }
    // The history the forwarder would resume from is compacted meanwhile: the resume gets 410 Expired.
    cluster.sim.faults.expireWatches({ user, ...NODES });
    heal();
    await waitUntil(
      'every change of the outage published',
      () =>
        published('Node Cordoned', 'node-2') === 1 &&
        published('Node Uncordoned', 'node-1') === 1 &&
        published('Node Cordoned', 'node-3') === 1,
      20_000,
    );
    assert.ok((await restarts('error')) > erroredBefore, 'the 500s restarted the watch with backoff');
    assert.ok((await restarts('expired')) > expiredBefore, 'the 410 led to a re-list');
    assert.equal(published('Node Cordoned', 'node-1'), 1, 'nothing published twice');
    // node-5's cordon and uncordon both happened while the forwarder could not see: the re-list found it
    // schedulable, as it was. An event for it would have been offered in the same re-list as node-2's and
    // node-3's (one synchronous pass, one batch), so it would be on the bus by now.
    assert.equal(published('Node Cordoned', 'node-5'), 0, 'a change that netted out publishes nothing');
    assert.equal(published('Node Uncordoned', 'node-5'), 0);
  });

  it('bookmarks keep a quiet watch resumable: after 400 unrelated changes a dropped node watch resumes without a re-list', async () => {
    let churned = 0;
    for (let i = 0; i < 400; i++) {
      const created = cluster.sim.store.create(
        { group: '', resource: 'configmaps' },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `churn-${i}`, namespace: 'default' } },
      );
      churned = Number(created.metadata.resourceVersion);
    }
    // The sim sends a bookmark every 10 simulated seconds: wait until the node watch has seen one past the churn.
    await waitUntil(
      'a bookmark past the churn reached the node informer',
      () => Number(forwarder.nodes.lastSeenResourceVersion ?? 0) >= churned,
    );
    // Counted from here: the watch is live and past the churn (a restart left over from the previous case is not this one's).
    const mark = cluster.sim.requestLog.mark();
    cluster.sim.faults.dropWatches({ user, ...NODES });
    assert.equal((await cluster.kubectl.run(['cordon', 'node-4'])).code, 0);
    await waitUntil('node-4 cordon published', () => published('Node Cordoned', 'node-4') === 1);
    const lists = cluster.sim.requestLog
      .all({ since: mark })
      .filter((r) => r.user === user && r.resource === 'nodes' && r.verb === 'list');
    assert.deepEqual(lists, [], 'no 410 and no re-list of nodes: the bookmarks moved the resourceVersion on');
  });
});
