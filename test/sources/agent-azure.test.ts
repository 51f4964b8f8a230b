/**
 * The node agent on Azure, against the fake Scheduled Events service over HTTP and the simulator:
 * notices become requests and ends, and an event is approved only when drainbridge drained every node
 * it lists for it (DrainSafe's rule).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatRfc1123 } from '../../lib/sources/clouds/dates.ts';
import { noticeRequestId } from '../../lib/sources/clouds/ids.ts';
import { type AzureScheduledEvent, FakeAzureMetadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { type AgentCluster, AZURE_NODES, runAgent, startAgentCluster, testConfig } from './harness.ts';

const VMSS_0 = 'aks-pool-12345678-vmss_0';
const VMSS_1 = 'aks-pool-12345678-vmss_1';

let cluster: AgentCluster;
let fake: FakeAzureMetadata;
let eventNumber = 0;

before(async () => {
  cluster = await startAgentCluster(AZURE_NODES);
});
after(async () => {
  await fake?.server.stop();
  await cluster.stop();
});

/** A fresh fake per test, and a fresh event id: tests do not see each other's events or records. */
async function freshFake(): Promise<FakeAzureMetadata> {
  await fake?.server.stop();
  fake = await FakeAzureMetadata.start({ vmName: VMSS_0 });
  return fake;
}

function reboot(resources: string[], change: Partial<AzureScheduledEvent> = {}): AzureScheduledEvent {
  eventNumber += 1;
  return {
    EventId: `602D9444-D2CD-49C7-8624-${String(eventNumber).padStart(12, '0')}`,
    EventStatus: 'Scheduled',
    EventType: 'Reboot',
    ResourceType: 'VirtualMachine',
    Resources: resources,
    NotBefore: formatRfc1123(new Date(Date.now() + 15 * 60_000)),
    Description: 'Host server is undergoing maintenance.',
    EventSource: 'Platform',
    DurationInSeconds: 9,
    ...change,
  };
}

const config = (nodeName: string) =>
  testConfig({
    DRAINBRIDGE_NODE_NAME: nodeName,
    DRAINBRIDGE_AGENT_PROVIDER: 'azure',
    DRAINBRIDGE_AGENT_AZURE_URL: fake.url,
  });
const idOf = (node: string, event: AzureScheduledEvent) =>
  noticeRequestId('azure-scheduled-events', node, event.EventId);
/** GETs of the document the fake answered so far. */
const reads = () => fake.server.requestsTo('/metadata/scheduledevents', 'GET').length;

describe('node agent: Azure Scheduled Events', () => {
  it('DocumentIncarnation: the same incarnation is not handled again (unless a publish failed); a restart handles it in full', async () => {
    await freshFake();
    const first = reboot([VMSS_0]);
    const second = reboot([VMSS_0]);
    fake.putEvent(first);
    let running = runAgent(config('node-1'), cluster.kube);
    try {
      await waitUntil('the first request', () => running.publisher.of('Maintenance Requested').length === 1);
      // A change Azure would announce with a new incarnation, served under the old one: not looked at.
      fake.setEventsKeepingIncarnation([first, second]);
      const before = reads();
      await waitUntil('three more reads', () => reads() >= before + 3);
      assert.deepEqual(
        running.publisher.of('Maintenance Requested').map((e) => e.requestId),
        [idOf('node-1', first)],
        'the same incarnation: nothing planned again',
      );
      // A new incarnation is read again: the second event is requested, the first (gone) ended.
      fake.removeEvent(first.EventId);
      await waitUntil('the second request', () => running.publisher.of('Maintenance Requested').length === 2);
      await waitUntil('the first ended', () => running.publisher.of('Maintenance Ended').length === 1);
      assert.equal(running.publisher.of('Maintenance Ended')[0]?.requestId, idOf('node-1', first));

      // A publish that fails is tried again though the incarnation stays the same.
      running.publisher.failing = true;
      const third = reboot([VMSS_0]);
      fake.putEvent(third);
      await waitUntil('a failed publish', () => running.logger.has('publishing failed; trying again at the next read'));
      const incarnation = fake.incarnation;
      running.publisher.failing = false;
      await waitUntil('the third request', () => running.publisher.of('Maintenance Requested').length === 3);
      assert.equal(fake.incarnation, incarnation, 'published at a later read of the same incarnation');

      // A restarted agent handles the document it finds in full, whatever its incarnation.
      await running.agent.stop();
      running = runAgent(config('node-1'), cluster.kube);
      await waitUntil('requested again', () => running.publisher.of('Maintenance Requested').length === 2);
      assert.deepEqual(
        running.publisher
          .of('Maintenance Requested')
          .map((e) => e.requestId)
          .sort(),
        [idOf('node-1', second), idOf('node-1', third)].sort(),
        'the same ids: duplicates the workflow drops',
      );
    } finally {
      await running.agent.stop();
    }
  });

  it('a Reboot listing this node → one Maintenance Requested; a new incarnation repeats nothing; gone → Maintenance Ended', async () => {
    await freshFake();
    const event = reboot([VMSS_0]);
    fake.putEvent(event);
    const { agent, publisher } = runAgent(config('node-1'), cluster.kube);
    try {
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      const [requested] = publisher.of('Maintenance Requested');
      assert.equal(requested?.requestId, `azure:node-1:se:${event.EventId}`);
      assert.equal(requested?.origin, 'azure');
      assert.deepEqual(requested?.target, { nodeName: 'node-1' });
      assert.equal(requested?.notBefore, new Date(formatRfc1123(new Date(Date.parse(event.NotBefore)))).toISOString());
      assert.equal(requested?.drain, undefined, 'no drain options set: the origin azure decides');
      assert.deepEqual(requested?.notice, {
        provider: 'azure',
        source: 'azure-scheduled-events',
        eventId: event.EventId,
        eventType: 'Reboot',
        action: 'evacuate',
      });
      assert.match(
        String(requested?.reason),
        /Reboot \(Scheduled\) not before .* Host server is undergoing maintenance/,
      );

      const incarnation = fake.incarnation;
      fake.putEvent({ ...event, EventStatus: 'Started', NotBefore: '' });
      assert.equal(fake.incarnation, incarnation + 1);
      const seen = reads();
      await waitUntil('the agent read the new incarnation twice', () => reads() >= seen + 2);
      assert.equal(publisher.events.length, 1, 'the started event is the same request');

      fake.removeEvent(event.EventId);
      await waitUntil('the end is published', () => publisher.of('Maintenance Ended').length === 1);
      const [ended] = publisher.of('Maintenance Ended');
      assert.equal(ended?.requestId, requested?.requestId);
      assert.equal(ended?.origin, 'azure');
      assert.equal(ended?.reason, 'the notice is no longer listed');
      assert.equal(fake.startRequests.length, 0, 'nothing was drained, nothing approved');
    } finally {
      await agent.stop();
    }
  });

  it('an event for another VM of the placement group is not this node’s', async () => {
    await freshFake();
    fake.putEvent(reboot(['some-other-vm']));
    const { agent, publisher } = runAgent(config('node-1'), cluster.kube);
    try {
      await waitUntil('three reads', () => reads() >= 3);
      assert.deepEqual(publisher.events, []);
    } finally {
      await agent.stop();
    }
  });

  it('approves only once drainbridge drained the node for this very event', async () => {
    await freshFake();
    const event = reboot([VMSS_0]);
    fake.putEvent(event);
    const { agent, publisher, logger, metrics } = runAgent(config('node-1'), cluster.kube);
    try {
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      await waitUntil('an approval check found it not drained', () =>
        logger.has('not approving the event yet', (e) =>
          String(e.why).includes(`no evacuation of node-1 for ${idOf('node-1', event)}`),
        ),
      );
      // Drained for another request (a manual one): still not this event's drain.
      cluster.markDrained('node-1', `manual-${eventNumber}`);
      const seen = reads();
      await waitUntil('two more reads', () => reads() >= seen + 2);
      assert.equal(fake.startRequests.length, 0);

      cluster.markDrained('node-1', idOf('node-1', event));
      await waitUntil('the event is approved', () => fake.approved(event.EventId));
      assert.deepEqual(
        fake.startRequests.map((r) => r.eventId),
        [event.EventId],
        'one StartRequest, for this event',
      );
      const post = fake.server.requestsTo('/metadata/scheduledevents', 'POST')[0];
      assert.deepEqual(JSON.parse(post?.body ?? ''), { StartRequests: [{ EventId: event.EventId }] });
      assert.equal(post?.headers.metadata, 'true');
      assert.equal(post?.query['api-version'], '2020-07-01');
      // The fake records the POST before its answer reaches the agent, which counts it then.
      await waitUntil('the approval is counted', () => metrics.get('approved') === 1);
    } finally {
      await agent.stop();
    }
  });

  it('an event listing two nodes is approved only after both are drained', async () => {
    await freshFake();
    const event = reboot([VMSS_0, VMSS_1]);
    fake.putEvent(event);
    const one = runAgent(config('node-1'), cluster.kube);
    const two = runAgent(config('node-2'), cluster.kube);
    try {
      await waitUntil(
        'both nodes requested',
        () =>
          one.publisher.of('Maintenance Requested').length === 1 &&
          two.publisher.of('Maintenance Requested').length === 1,
      );
      assert.equal(two.publisher.of('Maintenance Requested')[0]?.requestId, idOf('node-2', event));
      cluster.markDrained('node-1', idOf('node-1', event));
      await waitUntil('node-1 drained, node-2 not: the check says so', () =>
        one.logger.has('not approving the event yet', (e) => {
          const why = String(e.why);
          return why.includes('node-2') && !why.includes('node-1');
        }),
      );
      assert.equal(fake.startRequests.length, 0);
      cluster.markDrained('node-2', idOf('node-2', event));
      await waitUntil('the event is approved', () => fake.approved(event.EventId));
      assert.ok(fake.startRequests.every((r) => r.eventId === event.EventId));
    } finally {
      await Promise.all([one.agent.stop(), two.agent.stop()]);
    }
  });

  it('never approves an event with a resource that is no node, nor one the policy ignores', async () => {
    await freshFake();
    const mixed = reboot([VMSS_0, 'some-other-vm']);
    const freeze = reboot([VMSS_0], { EventType: 'Freeze', DurationInSeconds: 5 });
    fake.setEvents([mixed, freeze]);
    const { agent, publisher, logger, metrics } = runAgent(config('node-1'), cluster.kube);
    try {
      await waitUntil('the Reboot is requested', () => publisher.of('Maintenance Requested').length === 1);
      assert.equal(publisher.of('Maintenance Requested')[0]?.requestId, idOf('node-1', mixed));
      await waitUntil('the Freeze is reported as ignored', () => logger.has('notice ignored by the policy'));
      assert.equal(metrics.get('ignored'), 1, 'reported once');
      cluster.markDrained('node-1', idOf('node-1', mixed));
      cluster.markDrained('node-3', idOf('node-1', freeze));
      await waitUntil('the check names the unknown resource', () =>
        logger.has('not approving the event yet', (e) => String(e.why).includes('some-other-vm')),
      );
      const seen = reads();
      await waitUntil('two more reads', () => reads() >= seen + 2);
      assert.equal(fake.startRequests.length, 0);
      assert.equal(metrics.get('ignored'), 1, 'still reported once');
    } finally {
      await agent.stop();
    }
  });

  it('restart-safe: a new agent finds the held request and ends it when the notice is gone; a listed one is only repeated', async () => {
    await freshFake();
    const gone = reboot([VMSS_0]);
    const kept = reboot([VMSS_0]);
    fake.setEvents([gone, kept]);
    const first = runAgent(config('node-1'), cluster.kube);
    await waitUntil('both requested', () => first.publisher.of('Maintenance Requested').length === 2);
    await first.agent.stop();
    cluster.markHeld('node-1', idOf('node-1', gone));
    fake.removeEvent(gone.EventId);

    const second = runAgent(config('node-1'), cluster.kube);
    try {
      await waitUntil('the vanished notice is ended', () => second.publisher.of('Maintenance Ended').length === 1);
      assert.equal(second.publisher.of('Maintenance Ended')[0]?.requestId, idOf('node-1', gone));
      assert.deepEqual(
        second.publisher.of('Maintenance Requested').map((d) => d.requestId),
        [idOf('node-1', kept)],
        'the listed notice is requested again under the same id (a duplicate the workflow drops)',
      );
      assert.ok(second.logger.has('found requests of a previous run'));
    } finally {
      await second.agent.stop();
    }
  });

  it('a failed publish is tried again at the next read', async () => {
    await freshFake();
    const event = reboot([VMSS_0]);
    fake.putEvent(event);
    const { agent, publisher, metrics } = runAgent(config('node-1'), cluster.kube);
    publisher.failing = true;
    try {
      await waitUntil('two failed publishes', () => metrics.get('failures') >= 2);
      publisher.failing = false;
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      assert.equal(metrics.get('requested'), 1);
    } finally {
      await agent.stop();
    }
  });

  it('NotBefore moved under one EventId (a new incarnation): the request again, its revision naming the incarnation', async () => {
    await freshFake();
    const event = reboot([VMSS_0]);
    fake.putEvent(event);
    const running = runAgent(config('node-1'), cluster.kube);
    try {
      await waitUntil('requested', () => running.publisher.of('Maintenance Requested').length === 1);
      const firstIncarnation = fake.incarnation;
      const moved = formatRfc1123(new Date(Date.now() + 5 * 60_000));
      fake.setEvents([{ ...event, NotBefore: moved }]);
      await waitUntil('requested again', () => running.publisher.of('Maintenance Requested').length === 2);
      const [first, second] = running.publisher.of('Maintenance Requested') as {
        requestId: string;
        notBefore: string;
        revision: { key: string; at: string };
      }[];
      assert.equal(second?.requestId, first?.requestId, 'the same request, not a second one');
      assert.equal(Date.parse(second?.notBefore ?? ''), Date.parse(moved));
      assert.match(first?.revision.key ?? '', new RegExp(`^DocumentIncarnation ${firstIncarnation}, NotBefore `));
      assert.match(second?.revision.key ?? '', new RegExp(`^DocumentIncarnation ${fake.incarnation}, NotBefore `));
      assert.ok(Date.parse(second?.revision.at ?? '') > Date.parse(first?.revision.at ?? ''), 'a later revision');
      assert.ok(running.logger.has('maintenance rescheduled', (extra) => extra.requestId === first?.requestId));
      assert.equal(running.metrics.get('rescheduled', 'azure-scheduled-events'), 1);
      // Read again unchanged: not published a third time.
      const before = reads();
      await waitUntil('three more reads', () => reads() >= before + 3);
      assert.equal(running.publisher.of('Maintenance Requested').length, 2);
    } finally {
      await running.agent.stop();
    }
  });

  it('stops when its signal aborts: every loop ends', async () => {
    await freshFake();
    const controller = new AbortController();
    const { agent } = runAgent(config('node-1'), cluster.kube, { signal: controller.signal });
    await waitUntil('one read', () => reads() >= 1);
    controller.abort();
    await agent.done;
    assert.deepEqual(agent.sources, ['azure-scheduled-events']);
  });
});
