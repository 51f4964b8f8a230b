/**
 * The node agent on EC2, against the fake IMDS with IMDSv2 required over HTTP: a call without a session
 * token is refused; the agent's calls carry one (renewed after IMDS forgets it); scheduled events become
 * requests and their cancellation or completion an end; spot and rebalance notices are opt-in.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import axios from 'axios';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { formatEc2ImdsDate } from '../../lib/sources/clouds/dates.ts';
import { type Ec2ScheduledEvent, FakeEc2Metadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { type AgentCluster, AWS_NODES, runAgent, startAgentCluster, testConfig } from './harness.ts';

const SCHEDULED = '/latest/meta-data/events/maintenance/scheduled';

let cluster: AgentCluster;
let fake: FakeEc2Metadata;
let n = 0;

before(async () => {
  cluster = await startAgentCluster(AWS_NODES);
});
beforeEach(async () => {
  await fake?.server.stop();
  fake = await FakeEc2Metadata.start({ instanceId: 'i-abcd1111' });
});
after(async () => {
  await fake?.server.stop();
  await cluster.stop();
});

function systemReboot(state = 'active'): Ec2ScheduledEvent {
  const start = new Date(Date.now() + 3600_000);
  return {
    NotBefore: formatEc2ImdsDate(start),
    Code: 'system-reboot',
    Description: 'scheduled reboot',
    EventId: `instance-event-0d59937288b749b${String(n).padStart(2, '0')}`,
    NotAfter: formatEc2ImdsDate(new Date(start.getTime() + 1000_000)),
    State: state,
  };
}

const config = (extra: Record<string, string> = {}) =>
  testConfig({
    DRAINBRIDGE_NODE_NAME: 'node-1',
    DRAINBRIDGE_AGENT_PROVIDER: 'aws',
    DRAINBRIDGE_AGENT_AWS_URL: fake.url,
    ...extra,
  });

describe('node agent: EC2 instance metadata (IMDSv2)', () => {
  beforeEach(() => {
    n += 1;
  });

  it('the fake refuses a read without a session token, as IMDS does with IMDSv2 required', async () => {
    const bare = await axios.get(`${fake.url}${SCHEDULED}`, { validateStatus: () => true, proxy: false });
    assert.equal(bare.status, 401);
    const badTtl = await axios.put(`${fake.url}/latest/api/token`, '', { validateStatus: () => true, proxy: false });
    assert.equal(badTtl.status, 400, 'a token request without a TTL header is refused');
    const token = await axios.put(`${fake.url}/latest/api/token`, '', {
      headers: { 'X-aws-ec2-metadata-token-ttl-seconds': '60' },
      proxy: false,
    });
    const withToken = await axios.get(`${fake.url}${SCHEDULED}`, {
      headers: { 'X-aws-ec2-metadata-token': token.data },
      proxy: false,
    });
    assert.equal(withToken.status, 200);
    assert.equal(fake.refused, 1);
  });

  it('an active system-reboot → Maintenance Requested (notBefore, deadline NotAfter); canceled → Maintenance Ended, nothing more', async () => {
    const event = systemReboot();
    fake.setScheduledEvents([event]);
    const { agent, publisher } = runAgent(config(), cluster.kube);
    try {
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      const [requested] = publisher.of('Maintenance Requested');
      assert.equal(requested?.requestId, `aws:node-1:scheduled:${event.EventId}`);
      assert.equal(requested?.origin, 'aws');
      assert.equal(requested?.notBefore, new Date(Date.parse(event.NotBefore)).toISOString());
      assert.equal(requested?.deadline, new Date(Date.parse(event.NotAfter as string)).toISOString());
      assert.equal((requested?.notice as { eventType?: string } | undefined)?.eventType, 'system-reboot');

      fake.setScheduledEvents([{ ...event, State: 'canceled', Description: `[Canceled] ${event.Description}` }]);
      await waitUntil('the end is published', () => publisher.of('Maintenance Ended').length === 1);
      const [ended] = publisher.of('Maintenance Ended');
      assert.equal(ended?.requestId, requested?.requestId);
      assert.equal(ended?.reason, 'system-reboot canceled');
      const reads = fake.server.requestsTo(SCHEDULED).length;
      await waitUntil(
        'three more reads of the canceled event',
        () => fake.server.requestsTo(SCHEDULED).length >= reads + 3,
      );
      assert.equal(publisher.events.length, 2, 'a canceled event listed on is ended once, and not requested again');

      const calls = fake.server.requests.filter((r) => r.path !== '/latest/api/token');
      assert.ok(calls.length > 0 && calls.every((r) => r.headers['x-aws-ec2-metadata-token'] && r.status === 200));
      const put = fake.server.requestsTo('/latest/api/token', 'PUT')[0];
      assert.equal(put?.headers['x-aws-ec2-metadata-token-ttl-seconds'], '3600');
    } finally {
      await agent.stop();
    }
  });

  it('a completed event ends the request; an event seen only as completed is ended once too', async () => {
    const event = systemReboot('completed');
    fake.setScheduledEvents([event]);
    const { agent, publisher } = runAgent(config(), cluster.kube);
    try {
      await waitUntil('the end is published', () => publisher.of('Maintenance Ended').length === 1);
      assert.deepEqual(publisher.of('Maintenance Requested'), []);
      assert.equal(publisher.of('Maintenance Ended')[0]?.reason, 'system-reboot completed');
    } finally {
      await agent.stop();
    }
  });

  it('renews the token when IMDS forgets it (401) and goes on', async () => {
    const { agent, publisher, logger } = runAgent(config(), cluster.kube);
    try {
      await waitUntil('a first read', () => fake.server.requestsTo(SCHEDULED).some((r) => r.status === 200));
      fake.revokeTokens();
      const event = systemReboot();
      fake.setScheduledEvents([event]);
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      assert.equal(fake.tokensIssued, 2);
      assert.ok(
        fake.server.requestsTo(SCHEDULED).some((r) => r.status === 401),
        'the old token was refused',
      );
      assert.ok(!logger.has('reading the notices failed; trying again'), 'the renewal is not a failure');
    } finally {
      await agent.stop();
    }
  });

  it('spot instance-action and rebalance recommendation: not read unless enabled', async () => {
    fake.setSpotInstanceAction({ action: 'terminate', time: new Date(Date.now() + 120_000).toISOString() });
    const { agent, publisher } = runAgent(config(), cluster.kube);
    try {
      await waitUntil('three reads', () => fake.server.requestsTo(SCHEDULED).length >= 3);
      assert.deepEqual(agent.sources, ['aws-scheduled-events']);
      assert.deepEqual(fake.server.requestsTo('/latest/meta-data/spot/instance-action'), []);
      assert.deepEqual(publisher.events, []);
    } finally {
      await agent.stop();
    }
  });

  it('spot instance-action when enabled → a request that starts at once and gives up at the action time', async () => {
    const time = new Date(Date.now() + 120_000);
    time.setMilliseconds(0);
    const { agent, publisher } = runAgent(
      config({ DRAINBRIDGE_AGENT_AWS_SPOT: 'true', DRAINBRIDGE_AGENT_AWS_REBALANCE: 'true' }),
      cluster.kube,
    );
    try {
      await waitUntil('both sources read (404: no notice yet)', () =>
        fake.server.requestsTo('/latest/meta-data/events/recommendations/rebalance').some((r) => r.status === 404),
      );
      assert.deepEqual(publisher.events, []);
      fake.setSpotInstanceAction({ action: 'stop', time: time.toISOString().replace('.000Z', 'Z') });
      fake.setRebalance({ noticeTime: new Date().toISOString() });
      await waitUntil('both requested', () => publisher.of('Maintenance Requested').length === 2);
      const spot = publisher.of('Maintenance Requested').find((d) => String(d.requestId).includes(':spot:'));
      assert.equal(spot?.notBefore, undefined, 'starts at once');
      assert.equal(spot?.deadline, time.toISOString());
      assert.equal(spot?.drain, undefined, 'no drain options set: the origin aws decides');
      assert.ok(publisher.of('Maintenance Requested').some((d) => String(d.requestId).includes(':rebalance:')));
    } finally {
      await agent.stop();
    }
  });

  it('an end the cluster never carried out is published again a minute later, until the request is released', async () => {
    // The end a drainbridge run replica took just before it lost its leadership (an API outage) never became
    // a Restore; the request then held its node for 46 minutes of a maintenance long over (soak seed 71945).
    const event = systemReboot();
    const requestId = `aws:node-1:scheduled:${event.EventId}`;
    fake.setScheduledEvents([event]);
    let skewMs = 0;
    const now = () => new Date(Date.now() + skewMs);
    const { agent, publisher, logger } = runAgent(config(), cluster.kube, { now });
    try {
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      cluster.markHeld('node-1', requestId);
      fake.setScheduledEvents([]);
      await waitUntil('the end is published', () => publisher.of('Maintenance Ended').length === 1);
      const reads = fake.server.requestsTo(SCHEDULED).length;
      await waitUntil('three more reads', () => fake.server.requestsTo(SCHEDULED).length >= reads + 3);
      assert.equal(publisher.of('Maintenance Ended').length, 1, 'not again within the minute');

      skewMs = 61_000;
      await waitUntil('the end is published again', () => publisher.of('Maintenance Ended').length === 2);
      assert.equal(publisher.of('Maintenance Ended')[1]?.requestId, requestId);
      assert.ok(
        logger.has('ended requests are still open in the cluster: publishing their end again', (extra) =>
          (extra.requestIds as string[]).includes(requestId),
        ),
      );

      // The Restore took this time: the ledger shows the request released. No third end.
      await cluster.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-1' }, (node) => {
        const released = { holds: {}, released: { [requestId]: new Date().toISOString() } };
        node.metadata.annotations = { ...node.metadata.annotations, [LEDGER_ANNOTATION]: JSON.stringify(released) };
        return undefined;
      });
      skewMs = 200_000;
      const later = fake.server.requestsTo(SCHEDULED).length;
      await waitUntil('three more reads', () => fake.server.requestsTo(SCHEDULED).length >= later + 3);
      skewMs = 400_000;
      const last = fake.server.requestsTo(SCHEDULED).length;
      await waitUntil('three more reads', () => fake.server.requestsTo(SCHEDULED).length >= last + 3);
      assert.equal(publisher.of('Maintenance Ended').length, 2, 'a released request is not ended again');
    } finally {
      await agent.stop();
    }
  });
});
