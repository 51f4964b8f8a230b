/**
 * The node agent on Alibaba Cloud ECS, against the fake instance metadata service over HTTP
 * (sim/metadata/alibaba.ts), in the cases ECS documents: a Scheduled system event becomes a request with
 * its NotBefore; rescheduled (same eventId, a new notBefore) the request is published again with a later
 * revision; the list emptied (`[]`) or the item gone (404) ends it; Avoided ends it; an unreadable answer
 * ends nothing.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { FakeEcsMetadata } from '../../sim/metadata/alibaba.ts';
import { waitUntil } from '../support/wait.ts';
import { type AgentCluster, runAgent, startAgentCluster, testConfig } from './harness.ts';

const PATH = '/latest/maintenance/active-system-events';
const NODES = [{ name: 'node-1', providerID: 'alicloud://cn-hangzhou/i-bp1ecr0000005go2go' }];

let cluster: AgentCluster;
let fake: FakeEcsMetadata;
let n = 0;

before(async () => {
  cluster = await startAgentCluster(NODES);
});
beforeEach(async () => {
  n += 1;
  await fake?.server.stop();
  fake = await FakeEcsMetadata.start();
});
after(async () => {
  await fake?.server.stop();
  await cluster.stop();
});

const config = () =>
  testConfig({
    DRAINBRIDGE_NODE_NAME: 'node-1',
    DRAINBRIDGE_AGENT_PROVIDER: 'alibaba',
    DRAINBRIDGE_AGENT_ALIBABA_URL: fake.url,
  });

const hoursAhead = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

function reboot() {
  return { eventId: `e-bp11trd00000${n}pqum2`, eventType: 'SystemMaintenance.Reboot', notBefore: hoursAhead(48) };
}

describe('node agent: Alibaba Cloud ECS active system events', () => {
  it('Scheduled → Maintenance Requested (origin alibaba, NotBefore); rescheduled → requested again, later revision; [] → ended', async () => {
    const event = reboot();
    fake.putEvent(event);
    const { agent, publisher, logger } = runAgent(config(), cluster.kube);
    try {
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      const [requested] = publisher.of('Maintenance Requested');
      assert.equal(requested?.requestId, `alibaba:node-1:events:${event.eventId}`);
      assert.equal(requested?.origin, 'alibaba');
      assert.equal(requested?.notBefore, new Date(event.notBefore).toISOString());
      assert.equal((requested?.notice as { eventType?: string } | undefined)?.eventType, 'SystemMaintenance.Reboot');

      const moved = hoursAhead(2);
      fake.reschedule(event.eventId, moved);
      await waitUntil('the reschedule is published', () => publisher.of('Maintenance Requested').length === 2);
      const revised = publisher.of('Maintenance Requested')[1];
      assert.equal(revised?.requestId, requested?.requestId, 'the same request, not a second one');
      assert.equal(revised?.notBefore, new Date(moved).toISOString());
      const [first, second] = [requested, revised].map((r) => (r?.revision as { at?: string } | undefined)?.at);
      assert.ok(Date.parse(second as string) > Date.parse(first as string), 'a later revision');
      assert.ok(logger.has('maintenance rescheduled', (extra) => extra.requestId === requested?.requestId));

      fake.removeEvent(event.eventId);
      assert.equal(await (await fetch(`${fake.url}${PATH}`)).text(), '[]', 'the documented empty answer');
      await waitUntil('the end is published', () => publisher.of('Maintenance Ended').length === 1);
      assert.equal(publisher.of('Maintenance Ended')[0]?.requestId, requested?.requestId);
    } finally {
      await agent.stop();
    }
  });

  it('the item gone (404) ends the request; Avoided ends it too', async () => {
    const first = reboot();
    fake.putEvent(first);
    const { agent, publisher } = runAgent(config(), cluster.kube);
    try {
      await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1);
      fake.gone();
      assert.equal((await fetch(`${fake.url}${PATH}`)).status, 404);
      await waitUntil('ended on a 404', () => publisher.of('Maintenance Ended').length === 1);

      const second = { ...reboot(), eventId: `e-second-${n}` };
      fake.putEvent(second);
      await waitUntil('requested again', () => publisher.of('Maintenance Requested').length === 2);
      fake.setStatus(second.eventId, 'Avoided');
      await waitUntil('ended when Avoided', () => publisher.of('Maintenance Ended').length === 2);
      assert.equal(publisher.of('Maintenance Ended')[1]?.requestId, `alibaba:node-1:events:${second.eventId}`);
    } finally {
      await agent.stop();
    }
  });

  it('an unreadable answer ends nothing and says so', async () => {
    fake.putEvent(reboot());
    const { agent, publisher, logger } = runAgent(config(), cluster.kube);
    try {
      await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1);
      fake.serveRaw('');
      const reads = fake.server.requestsTo(PATH).length;
      await waitUntil('three unreadable reads', () => fake.server.requestsTo(PATH).length >= reads + 3);
      assert.deepEqual(publisher.of('Maintenance Ended'), [], 'an empty body is not "no events"');
      assert.ok(logger.has('notice source unreadable: nothing counts as gone until it is read again'));
    } finally {
      await agent.stop();
    }
  });
});
