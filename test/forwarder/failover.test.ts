/**
 * Two forwarder replicas (real child processes) publishing through the real AWS SDK to a PutEvents
 * endpoint backed by the in-process bus, whose rules start the embedded state machines here: exactly one
 * replica publishes; SIGKILL of the leader during a burst of 20 kubectl cordons → the other takes over
 * within what leader election guarantees (lease duration + retry period, lib/sources/forwarder/leader.ts), every
 * cordon reaches the bus at least once, and none starts two evacuations (one requestId per node on the
 * bus, one Evacuation record and one hold per node).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EmbeddedRuntime } from '../../embedded/runtime.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { electionTimings, takeoverBoundMs } from '../../lib/sources/forwarder/leader.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import { waitUntil } from '../support/wait.ts';
import { DrainbridgeProcess, metric, scrape, spreadScenario, startTestCluster, type TestCluster } from './harness.ts';

const CORDONED = Array.from({ length: 20 }, (_, i) => `node-${i + 1}`);
const LEASE_SECONDS = 4;
/** What leader election guarantees: a dead leader is replaced within lease duration + retry period. */
const TAKEOVER_BOUND_MS = takeoverBoundMs(electionTimings(LEASE_SECONDS * 1000));
/** Beyond the bound: the takeover's read and write, and the follower's log line, on a shared machine. */
const TAKEOVER_SLACK_MS = 1500;

describe('two forwarder replicas, the leader SIGKILLed during 20 cordons', () => {
  let cluster: TestCluster;
  let runtime: EmbeddedRuntime;
  let endpoint: EventBridgeEndpoint;
  const replicas: DrainbridgeProcess[] = [];

  before(async () => {
    cluster = await startTestCluster(spreadScenario(23, { replicas: 10 }));
    const config = loadConfig({
      KUBECONFIG: await cluster.kubeconfigFor('drainbridge'),
      DRAINBRIDGE_MAX_HELD_NODES: '20',
    });
    runtime = await EmbeddedRuntime.create({ config, retryIntervalMs: 50, waitMs: 0 });
    endpoint = await startEventBridgeEndpoint(runtime.bus);
    const kubeconfig = await cluster.kubeconfigFor('drainbridge-forwarder');
    for (const identity of ['fwd-a', 'fwd-b']) {
      replicas.push(
        new DrainbridgeProcess(
          [
            'forwarder',
            '--kubeconfig',
            kubeconfig,
            '--cordon-evacuates',
            'all',
            '--metrics-address',
            '127.0.0.1:0',
            '--identity',
            identity,
          ],
          {
            AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
            AWS_REGION: 'eu-west-1',
            AWS_ACCESS_KEY_ID: 'AKIDTEST',
            AWS_SECRET_ACCESS_KEY: 'test-secret',
            DRAINBRIDGE_FORWARDER_LEASE_SECONDS: String(LEASE_SECONDS),
          },
        ),
      );
    }
  });
  after(async () => {
    for (const replica of replicas) replica.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    runtime?.stop();
    await endpoint?.close();
    await cluster?.stop();
  });

  it('exactly one publishes; the other takes over; every cordon on the bus; one evacuation per node', async () => {
    const urls = await Promise.all(replicas.map((r) => r.opsUrl()));
    await waitUntil('a replica leads', () =>
      replicas.some((r) => r.logs('leader election: this replica leads').length > 0),
    );
    const leaderIndex = replicas.findIndex((r) => r.logs('leader election: this replica leads').length > 0);
    const leader = replicas[leaderIndex] as DrainbridgeProcess;
    const follower = replicas[1 - leaderIndex] as DrainbridgeProcess;
    const followerUrl = urls[1 - leaderIndex] as string;
    await waitUntil('both replicas are ready', async () => {
      const answers = await Promise.all(urls.map((url) => fetch(`${url}/readyz`).then((r) => r.status)));
      return answers.every((status) => status === 200);
    });

    const cordonedOnBus = () =>
      runtime.bus.accepted
        .filter((e) => e['detail-type'] === 'Node Cordoned')
        .map((e) => e.detail as { requestId: string; target: { nodeName: string } });
    const cordon = async (node: string): Promise<void> => {
      const result = await cluster.kubectl.run(['cordon', node]);
      assert.equal(result.code, 0, result.stderr);
    };
    // The first six cordons of the burst, published by the leader.
    const [firstSix, rest] = [CORDONED.slice(0, 6), CORDONED.slice(6)];
    for (const node of firstSix) await cordon(node);
    await waitUntil('the first six cordons are on the bus', () => {
      const nodes = new Set(cordonedOnBus().map((d) => d.target.nodeName));
      return firstSix.every((node) => nodes.has(node));
    });
    // Exactly one publishes: the follower has published none of them.
    const before = await scrape(followerUrl);
    assert.equal(metric(before, 'drainbridge_forwarder_events_published_total'), 0, 'the follower publishes nothing');
    assert.equal(metric(before, 'drainbridge_forwarder_leader'), 0);
    // The seventh cordon, then the leader killed before it is known to be published, then the other 13.
    await cordon(rest[0] as string);
    leader.kill('SIGKILL');
    const killedAt = Date.now();
    for (const node of rest.slice(1)) await cordon(node);
    await leader.exited;
    await follower.waitForLog('leader election: this replica leads', {}, TAKEOVER_BOUND_MS + 10_000);
    const takeoverMs =
      Date.parse(String(follower.logs('leader election: this replica leads')[0]?.timestamp)) - killedAt;
    assert.ok(
      takeoverMs <= TAKEOVER_BOUND_MS + TAKEOVER_SLACK_MS,
      `takeover after ${takeoverMs} ms (bound: lease duration + retry period = ${TAKEOVER_BOUND_MS} ms)`,
    );
    await waitUntil(
      'every cordon is on the bus',
      () => new Set(cordonedOnBus().map((d) => d.target.nodeName)).size === 20,
      30_000,
    );
    const idsByNode = new Map<string, Set<string>>();
    for (const detail of cordonedOnBus()) {
      const ids = idsByNode.get(detail.target.nodeName) ?? new Set();
      ids.add(detail.requestId);
      idsByNode.set(detail.target.nodeName, ids);
    }
    for (const node of CORDONED) assert.equal(idsByNode.get(node)?.size, 1, `${node}: one requestId on the bus`);

    await waitUntil(
      'every cordoned node is drained',
      async () =>
        (await cluster.admin.listEvacuations()).filter((r) => r.status?.phase === 'NodeDrained').length === 20,
      120_000,
    );
    const records = await cluster.admin.listEvacuations();
    for (const node of CORDONED) {
      const mine = records.filter((r) => r.spec.nodeName === node);
      assert.equal(mine.length, 1, `${node}: one Evacuation record`);
      assert.equal(mine[0]?.spec.requestId, [...(idsByNode.get(node) ?? [])][0]);
      const holds = Object.keys(readLedger(await cluster.admin.getNode(node)).holds);
      assert.deepEqual(holds, [mine[0]?.spec.requestId], `${node}: one hold`);
    }
    const survivor = await scrape(followerUrl);
    assert.equal(metric(survivor, 'drainbridge_forwarder_leader'), 1);
    assert.ok(metric(survivor, 'drainbridge_forwarder_events_published_total', { detail_type: 'Node Cordoned' }) >= 1);
    const duplicates = cordonedOnBus().length - 20;
    console.log(
      `takeover ${takeoverMs} ms; ${cordonedOnBus().length} Node Cordoned on the bus for 20 cordons (${duplicates} repeats, same requestIds)`,
    );
  });
});
