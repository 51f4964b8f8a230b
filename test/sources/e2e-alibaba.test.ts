/**
 * Alibaba Cloud ECS end to end, embedded, through the packaged state machines on the simulator (issue 21:
 * the fourth provider from its documented payload): the node agent reads the fake ECS metadata service
 * (sim/metadata/alibaba.ts); a SystemMaintenance.Reboot 15 simulated minutes ahead → the evacuation starts at
 * the computed time → node drained → the event leaves the active list (`[]`) → Restore.
 * A second event rescheduled from 14 days to 61 minutes ahead has its node drained before the new start.
 * Time is the simulator's (200× real time), read by the agent, the tasks and the Wait states.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { noticeRequestId } from '../../lib/sources/clouds/ids.ts';
import { FakeEcsMetadata } from '../../sim/metadata/alibaba.ts';
import { waitUntil } from '../support/wait.ts';
import { readNodeAsAdmin } from '../workflow/harness.ts';
import { type NoticeE2e, startNoticeE2e } from './e2e-cluster.ts';
import { runAgent, testConfig } from './harness.ts';
import { assertStartedInTime } from './timing.ts';

const NODES = [
  { name: 'node-1', providerID: 'alicloud://cn-hangzhou/i-bp1ecr0000001' },
  { name: 'node-2', providerID: 'alicloud://cn-hangzhou/i-bp1ecr0000002' },
  { name: 'node-3', providerID: 'alicloud://cn-hangzhou/i-bp1ecr0000003' },
];

let e2e: NoticeE2e;
const simNow = () => e2e.simNow();

before(async () => {
  e2e = await startNoticeE2e('alibaba-notices', NODES, 6);
});
after(async () => {
  await e2e.w.stop();
});

/** ECS writes times as ISO 8601 UTC to the second (`2019-04-12T01:01:01Z`). */
const ecsTime = (minutesAhead: number) =>
  new Date(simNow() + minutesAhead * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

async function ecsAgent(node: string, fake: FakeEcsMetadata) {
  const config = testConfig({
    DRAINBRIDGE_NODE_NAME: node,
    DRAINBRIDGE_AGENT_PROVIDER: 'alibaba',
    DRAINBRIDGE_AGENT_ALIBABA_URL: fake.url,
  });
  return runAgent(config, e2e.agentKube, {
    publisher: new InProcessPublisher(e2e.w.runtime.bus),
    now: () => new Date(simNow()),
  });
}

/** When (simulated) the evacuation of `requestId` succeeded: the node drained. */
const drainedAt = (requestId: string) =>
  e2e.bus.find((e) => e.detailType === 'Evacuation Succeeded' && e.requestId === requestId)?.at;

const phaseOf = async (node: string) => readPhase(await readNodeAsAdmin(e2e.w, node));

describe('Alibaba Cloud ECS notices, end to end through the packaged state machines', () => {
  it('SystemMaintenance.Reboot 15 min ahead → started in time → drained → [] → restored', async () => {
    const fake = await FakeEcsMetadata.start({ instanceId: 'i-bp1ecr0000001' });
    const event = { eventId: 'e-bp11trd0000001pqum2', eventType: 'SystemMaintenance.Reboot', notBefore: ecsTime(15) };
    fake.putEvent(event);
    const requestId = noticeRequestId('alibaba-system-events', 'node-1', event.eventId);
    const { agent } = await ecsAgent('node-1', fake);
    try {
      await waitUntil('node-1 is drained', () => drainedAt(requestId) !== undefined, 30_000);
      assertStartedInTime(e2e.bus, requestId, event.notBefore);
      fake.removeEvent(event.eventId);
      await waitUntil('node-1 is restored', async () => (await phaseOf('node-1')) === 'NodeUncordoned', 30_000);
      assert.notEqual((await readNodeAsAdmin(e2e.w, 'node-1')).spec?.unschedulable, true, 'uncordoned');
    } finally {
      await agent.stop();
      await fake.server.stop();
    }
  });

  it('rescheduled from 14 days to 61 minutes ahead: the node is drained before the new NotBefore', async () => {
    const fake = await FakeEcsMetadata.start({ instanceId: 'i-bp1ecr0000002' });
    const event = {
      eventId: 'e-bp11trd0000002pqum2',
      eventType: 'SystemMaintenance.Redeploy',
      notBefore: ecsTime(14 * 24 * 60),
    };
    fake.putEvent(event);
    const requestId = noticeRequestId('alibaba-system-events', 'node-2', event.eventId);
    const { agent } = await ecsAgent('node-2', fake);
    try {
      await waitUntil(
        'the evacuation waits for its start',
        () => e2e.bus.some((e) => e.requestId === requestId && e.detail.phase === 'MaintenanceScheduled'),
        20_000,
      );
      const moved = ecsTime(61);
      fake.reschedule(event.eventId, moved);
      await waitUntil('node-2 is drained', () => drainedAt(requestId) !== undefined, 60_000);
      assert.ok((drainedAt(requestId) as number) < Date.parse(moved), 'drained before the new NotBefore');
      assert.equal((await readNodeAsAdmin(e2e.w, 'node-2')).spec?.unschedulable, true, 'cordoned and drained');
    } finally {
      await agent.stop();
      await fake.server.stop();
    }
  });
});
