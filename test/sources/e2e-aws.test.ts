/**
 * AWS end to end, embedded (issue 10's acceptance), through the packaged state machines on the simulator:
 *  - the node agent through IMDSv2 (the fake refuses a call without a session token, as IMDS does with
 *    IMDSv2 required): a system-reboot 15 simulated minutes ahead → the evacuation starts at the computed
 *    time → node drained → the event completes → Restore;
 *  - `canceled` while the evacuation still waits for its start: Maintenance Ended → Restore leaves a
 *    tombstone → the waiting Evacuate ends without cordoning or evicting anything;
 *  - AWS Health through the normaliser function's handler: an instance-reboot scheduled change →
 *    Maintenance Requested on the bus → evacuation started in time → drained; `closed` → Restore.
 * Time is the simulator's (200× real time), read by the agent, the tasks and the Wait states.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import axios from 'axios';
import { handler as normalizeAwsNotice } from '../../functions/normalize-aws-notice.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { formatEc2ImdsDate } from '../../lib/sources/clouds/dates.ts';
import { noticeRequestId } from '../../lib/sources/clouds/ids.ts';
import { MemoryNoticeMetrics } from '../../lib/sources/clouds/metrics.ts';
import { DEFAULT_NOTICE_POLICY } from '../../lib/sources/clouds/policy.ts';
import { type Ec2ScheduledEvent, FakeEc2Metadata } from '../../sim/metadata/index.ts';
import { lambdaContext } from '../support/lambda-context.ts';
import { waitUntil } from '../support/wait.ts';
import { fixture } from '../unit/sources/fixtures.ts';
import {
  evictionsSince,
  readNodeAsAdmin,
  readRecord,
  startWorkflowSim,
  type WorkflowSim,
} from '../workflow/harness.ts';
import { AWS_NODES, agentKubeOn, runAgent, testConfig, webScenario } from './harness.ts';
import { assertStartedInTime, type BusLog, recordBus } from './timing.ts';

const SCENARIO = webScenario('aws-notices', AWS_NODES, 6);

const SCHEDULED = '/latest/meta-data/events/maintenance/scheduled';

let w: WorkflowSim;
let agentKube: KubeClient;
const bus: BusLog = [];
const simNow = () => w.sim.clock.now();

before(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  w = await startWorkflowSim(SCENARIO, {
    env: { DRAINBRIDGE_MAX_HELD_NODES: '3' },
    runtime: { onBusEvent: recordBus(bus, () => simNow()) },
  });
  agentKube = await agentKubeOn(w.sim);
});
after(async () => {
  await w.stop();
});

function scheduledEvent(id: string, code: string, minutesAhead: number, state = 'active'): Ec2ScheduledEvent {
  const start = new Date(simNow() + minutesAhead * 60_000);
  return {
    NotBefore: formatEc2ImdsDate(start),
    Code: code,
    Description: `scheduled ${code}`,
    EventId: id,
    NotAfter: formatEc2ImdsDate(new Date(start.getTime() + 2 * 3600_000)),
    State: state,
  };
}

async function awsAgent(node: string, fake: FakeEc2Metadata) {
  const config = testConfig({
    DRAINBRIDGE_NODE_NAME: node,
    DRAINBRIDGE_AGENT_PROVIDER: 'aws',
    DRAINBRIDGE_AGENT_AWS_URL: fake.url,
  });
  return runAgent(config, agentKube, {
    publisher: new InProcessPublisher(w.runtime.bus),
    now: () => new Date(simNow()),
  });
}

const phaseOf = async (node: string) => readPhase(await readNodeAsAdmin(w, node));
const isoOf = (imdsDate: string) => new Date(Date.parse(imdsDate)).toISOString();

describe('AWS notices, end to end through the packaged state machines', () => {
  it('IMDSv2: a call without a token is refused; system-reboot 15 min ahead → started in time → drained → completed → restored', async () => {
    const fake = await FakeEc2Metadata.start({ instanceId: 'i-abcd1111' });
    const bare = await axios.get(`${fake.url}${SCHEDULED}`, { validateStatus: () => true, proxy: false });
    assert.equal(bare.status, 401, 'IMDSv2 required: no token, no answer');
    const event = scheduledEvent('instance-event-0d59937288b749b32', 'system-reboot', 15);
    fake.setScheduledEvents([event]);
    const requestId = noticeRequestId('aws-scheduled-events', 'node-1', event.EventId);
    const { agent } = await awsAgent('node-1', fake);
    try {
      await waitUntil('node-1 is drained', async () => (await phaseOf('node-1')) === 'NodeDrained', 30_000);
      assertStartedInTime(bus, requestId, isoOf(event.NotBefore));
      assert.ok(fake.tokensIssued > 0, 'the agent took a session token');
      assert.equal(fake.refused, 1, 'only the bare call above was refused: every agent call carried its token');

      fake.setScheduledEvents([{ ...event, State: 'completed' }]);
      await waitUntil('node-1 is restored', async () => (await phaseOf('node-1')) === 'NodeUncordoned', 30_000);
      assert.notEqual((await readNodeAsAdmin(w, 'node-1')).spec?.unschedulable, true, 'uncordoned');
    } finally {
      await agent.stop();
      await fake.server.stop();
    }
  });

  it('the agent restarts while the request waits for its start, the notice vanishes meanwhile: the new agent ends it', async () => {
    const fake = await FakeEc2Metadata.start({ instanceId: 'i-abcd1111' });
    const event = scheduledEvent('instance-event-0f1e2d3c4b5a69788', 'instance-reboot', 20);
    fake.setScheduledEvents([event]);
    const requestId = noticeRequestId('aws-scheduled-events', 'node-1', event.EventId);
    const first = await awsAgent('node-1', fake);
    let second: Awaited<ReturnType<typeof awsAgent>> | undefined;
    try {
      await waitUntil(
        'the evacuation waits for its start',
        async () => (await readRecord(w, requestId).catch(() => undefined))?.status?.phase === 'MaintenanceScheduled',
        20_000,
      );
      await first.agent.stop();
      // While no agent runs, the notice goes away (IMDS no longer lists it: no "completed" to read).
      fake.setScheduledEvents([]);
      assert.deepEqual(readLedger(await readNodeAsAdmin(w, 'node-1')).holds, {}, 'waiting: no hold to find');
      second = await awsAgent('node-1', fake);
      await waitUntil(
        'the new agent ends the request',
        () => second?.logger.has('maintenance ended', (extra) => extra.requestId === requestId) === true,
        20_000,
      );
      assert.ok(
        second.logger.has('found requests of a previous run', (extra) => String(extra.waiting) === requestId),
        'taken over from the waiting Evacuation record',
      );
      await waitUntil(
        'Restore tombstoned it',
        () => bus.some((e) => e.detailType === 'Node Restored' && e.requestId === requestId),
        20_000,
      );
      const evacuation = w.runtime.executionsFor(requestId).find((e) => e.machine === 'evacuate');
      assert.ok((await evacuation?.outcome)?.ok, 'the waiting Evacuate ended without failing');
      const node = await readNodeAsAdmin(w, 'node-1');
      assert.notEqual(node.spec?.unschedulable, true, 'never cordoned');
      assert.ok(!bus.some((e) => e.requestId === requestId && e.detail.phase === 'NodeCordoned'));
    } finally {
      await first.agent.stop();
      await second?.agent.stop();
      await fake.server.stop();
    }
  });

  it('canceled while the evacuation waits for its start: ended, and the late admission cordons nothing', async () => {
    const fake = await FakeEc2Metadata.start({ instanceId: 'i-abcd2222' });
    const event = scheduledEvent('instance-event-0a1b2c3d4e5f60718', 'instance-reboot', 20);
    fake.setScheduledEvents([event]);
    const requestId = noticeRequestId('aws-scheduled-events', 'node-2', event.EventId);
    const mark = w.sim.requestLog.mark();
    const { agent } = await awsAgent('node-2', fake);
    try {
      await waitUntil(
        'the evacuation announced its start',
        () => bus.some((e) => e.requestId === requestId && e.detail.phase === 'MaintenanceScheduled'),
        20_000,
      );
      fake.setScheduledEvents([{ ...event, State: 'canceled' }]);
      await waitUntil(
        'the maintenance is ended',
        () => bus.some((e) => e.detailType === 'Node Restored' && e.requestId === requestId),
        20_000,
      );
      assert.ok(readLedger(await readNodeAsAdmin(w, 'node-2')).released[requestId], 'a tombstone for the request');
      const evacuation = w.runtime.executionsFor(requestId).find((e) => e.machine === 'evacuate');
      assert.ok(evacuation, 'the Evacuate execution exists');
      const outcome = await evacuation.outcome;
      assert.ok(outcome.ok, 'the waiting Evacuate ended (Skipped), not failed');
      const timing = bus.find((e) => e.requestId === requestId && e.detail.phase === 'MaintenanceScheduled')?.detail
        .timing as { startAt: string };
      assert.ok(simNow() >= Date.parse(timing.startAt), 'it ended after its start time: the admission came late');
      const node = await readNodeAsAdmin(w, 'node-2');
      assert.notEqual(node.spec?.unschedulable, true, 'never cordoned');
      assert.deepEqual(readLedger(node).holds, {}, 'no hold taken');
      assert.ok(!bus.some((e) => e.requestId === requestId && e.detail.phase === 'NodeCordoned'));
      assert.deepEqual(evictionsSince(w, mark), [], 'nothing evicted');
    } finally {
      await agent.stop();
      await fake.server.stop();
    }
  });

  it('less time left than the estimate: starts at once and warns it will likely not finish in time', async () => {
    const fake = await FakeEc2Metadata.start({ instanceId: 'i-abcd2222' });
    // 10 simulated seconds ahead: shorter than any estimate with pods to evict (their grace period alone is 30 s).
    const event = scheduledEvent('instance-event-0ffffffffffffff01', 'system-maintenance', 10 / 60);
    fake.setScheduledEvents([event]);
    const requestId = noticeRequestId('aws-scheduled-events', 'node-2', event.EventId);
    const { agent } = await awsAgent('node-2', fake);
    try {
      await waitUntil(
        'node-2 is drained',
        () => bus.some((e) => e.detailType === 'Evacuation Succeeded' && e.requestId === requestId),
        30_000,
      );
      const scheduled = bus.find((e) => e.requestId === requestId && e.detail.phase === 'MaintenanceScheduled');
      const timing = scheduled?.detail.timing as { late: boolean; warning?: string; startAt: string };
      assert.equal(timing.late, true);
      assert.match(
        timing.warning ?? '',
        /node node-2 is estimated to take \d+ s but only \d+ s are left .* will likely not finish in time/,
      );
      assert.ok(
        Date.parse(timing.startAt) - (scheduled?.at ?? 0) <= 1000,
        'the start is now (rounded up to the second)',
      );
      const record = await readRecord(w, requestId);
      assert.equal(record.status?.start?.late, true, 'the Evacuation record keeps the warning');
      assert.equal(record.status?.start?.warning, timing.warning);
      fake.setScheduledEvents([{ ...event, State: 'completed' }]);
      await waitUntil('node-2 is restored', async () => (await phaseOf('node-2')) === 'NodeUncordoned', 30_000);
    } finally {
      await agent.stop();
      await fake.server.stop();
    }
  });

  it('AWS Health through the normaliser: instance-reboot scheduled → started in time → drained; closed → restored', async () => {
    const arn = 'arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED/E2E-1';
    const health = healthEvent(arn, 'upcoming', 15);
    const run = normalizeAwsNotice.withDeps(
      {
        kube: agentKube,
        publisher: new InProcessPublisher(w.runtime.bus),
        policy: DEFAULT_NOTICE_POLICY,
        metrics: new MemoryNoticeMetrics(),
      },
      () => new Date(simNow()),
    );
    const requestId = noticeRequestId('aws-health', 'node-3', arn);
    assert.deepEqual(await run(health, CONTEXT), { requested: [requestId], ended: [], notNodes: [] });
    await waitUntil('node-3 is drained', async () => (await phaseOf('node-3')) === 'NodeDrained', 30_000);
    const detail = health.detail as { startTime: string };
    assertStartedInTime(bus, requestId, new Date(Date.parse(detail.startTime)).toISOString());

    await run(healthEvent(arn, 'closed', 15), CONTEXT);
    await waitUntil('node-3 is restored', async () => (await phaseOf('node-3')) === 'NodeUncordoned', 30_000);
  });
});

const CONTEXT = lambdaContext('drainbridge-dev-normalizeAwsNotice', {
  region: 'us-west-2',
  requestId: '00000000-0000-4000-8000-000000000002',
});

/** AWS's documented Health event (fixture), for node-3's instance, starting `minutesAhead` on the simulator's clock. */
function healthEvent(arn: string, statusCode: string, minutesAhead: number): Record<string, unknown> {
  const event = structuredClone(fixture<Record<string, unknown>>('aws/health-instance-stop-scheduled.json'));
  const start = new Date(simNow() + minutesAhead * 60_000);
  event.detail = {
    ...(event.detail as Record<string, unknown>),
    eventArn: arn,
    eventTypeCode: 'AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED',
    statusCode,
    startTime: start.toUTCString(),
    endTime: new Date(start.getTime() + 3600_000).toUTCString(),
    affectedEntities: [{ entityValue: 'i-abcd3333' }],
  };
  event.resources = ['i-abcd3333'];
  return event;
}
