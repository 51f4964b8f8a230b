/**
 * Rescheduled notices, end to end through the node agent (or the AWS normaliser) and the packaged state
 * machines on the simulator (issue 21 point 2). The fake IMDS moves an event the way EC2's
 * ModifyInstanceEventStartTime does ("Reschedule a scheduled event for an EC2 instance",
 * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/reschedule-event.html: same EventId, new NotBefore
 * at least 60 minutes ahead, only before the event starts):
 *  - moved earlier, 14 days → 61 minutes: the node is drained before the new NotBefore;
 *  - moved later before the start: the node is never cordoned at the old time; the stale execution ends;
 *  - AWS Health resends the same event ARN: unchanged → nothing more; moved after the evacuation started →
 *    one Evacuate only, the node stays drained and the record says so.
 * Time is the simulator's (200× real time), read by the agent, the tasks and the Wait states.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { handler as normalizeAwsNotice } from '../../functions/normalize-aws-notice.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
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
import { type BusLog, progressOf, recordBus } from './timing.ts';

const SCENARIO = webScenario('aws-reschedules', AWS_NODES, 6);

let w: WorkflowSim;
let agentKube: KubeClient;
const bus: BusLog = [];
const simNow = () => w.sim.clock.now();
const MINUTE = 60_000;
/** An instant `ms` from now on the simulator's clock, in whole seconds (the providers' dates have no fractions). */
const ahead = (ms: number) => new Date(Math.floor((simNow() + ms) / 1000) * 1000);

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

function scheduledEvent(id: string, code: string, minutesAhead: number): Ec2ScheduledEvent {
  const start = new Date(simNow() + minutesAhead * MINUTE);
  return {
    NotBefore: formatEc2ImdsDate(start),
    Code: code,
    Description: `scheduled ${code}`,
    EventId: id,
    NotAfter: formatEc2ImdsDate(new Date(start.getTime() + 2 * 3600_000)),
    State: 'active',
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

const isoOf = (imdsDate: string) => new Date(Date.parse(imdsDate)).toISOString();
const phaseOf = async (node: string) => readPhase(await readNodeAsAdmin(w, node));
const scheduledTimings = (requestId: string) =>
  bus
    .filter((e) => e.requestId === requestId && e.detail.phase === 'MaintenanceScheduled')
    .map((e) => e.detail.timing as { notBefore: string; startAt: string });

async function waitForStartPlanned(requestId: string, notBefore: string): Promise<void> {
  await waitUntil(
    `the evacuation waits for its start at ${notBefore}`,
    async () => {
      const record = await readRecord(w, requestId).catch(() => undefined);
      return (
        record?.status?.phase === 'MaintenanceScheduled' &&
        Date.parse(record.status.start?.notBefore ?? '') === Date.parse(notBefore)
      );
    },
    30_000,
  );
}

describe('rescheduled notices, end to end through the packaged state machines', () => {
  it('EC2 event moved from 14 days to 61 minutes ahead: the node is drained before the new NotBefore', async () => {
    const fake = await FakeEc2Metadata.start({ instanceId: 'i-abcd1111', now: simNow });
    const event = scheduledEvent('instance-event-0aaaa1111bbbb2222', 'system-reboot', 14 * 24 * 60);
    fake.setScheduledEvents([event]);
    const requestId = noticeRequestId('aws-scheduled-events', 'node-1', event.EventId);
    const { agent, logger } = await awsAgent('node-1', fake);
    try {
      await waitForStartPlanned(requestId, isoOf(event.NotBefore));
      const moved = ahead(61 * MINUTE);
      fake.rescheduleEvent(event.EventId, moved);
      const newStart = moved.toISOString();

      await waitUntil(
        'node-1 is drained',
        () => bus.some((e) => e.detailType === 'Evacuation Succeeded' && e.requestId === requestId),
        60_000,
      );
      const drainedAt = bus.find((e) => e.detailType === 'Evacuation Succeeded' && e.requestId === requestId)?.at;
      const cordonedAt = progressOf(bus, requestId, 'NodeCordoned')?.at;
      assert.ok(cordonedAt && drainedAt, 'cordoned and drained');
      assert.ok(drainedAt < Date.parse(newStart), 'drained before the new NotBefore');
      const timings = scheduledTimings(requestId);
      assert.equal(Date.parse(timings.at(-1)?.notBefore ?? ''), Date.parse(newStart), 'the start was planned again');
      assert.ok(cordonedAt >= Date.parse(timings.at(-1)?.startAt ?? ''), 'not before the new computed start');

      const record = await readRecord(w, requestId);
      assert.equal(Date.parse(record.spec.notBefore ?? ''), Date.parse(newStart), 'the record has the current start');
      const last = record.status?.reschedules?.at(-1);
      assert.equal(Date.parse(last?.from ?? ''), Date.parse(isoOf(event.NotBefore)), 'and the previous one');
      assert.equal(last?.outcome, 'replanned');
      assert.ok(logger.has('maintenance rescheduled', (extra) => extra.requestId === requestId));
      const evacuations = w.runtime.executionsFor(requestId).filter((e) => e.machine === 'evacuate');
      assert.equal(evacuations.length, 2, 'the first execution still waits for the old start (it ends there)');

      fake.setScheduledEvents([{ ...event, NotBefore: formatEc2ImdsDate(moved), State: 'completed' }]);
      await waitUntil('node-1 is restored', async () => (await phaseOf('node-1')) === 'NodeUncordoned', 30_000);
    } finally {
      await agent.stop();
      await fake.server.stop();
    }
  });

  it('EC2 event moved later before its start: never cordoned at the old time; the stale execution ends', async () => {
    const fake = await FakeEc2Metadata.start({ instanceId: 'i-abcd2222', now: simNow });
    const event = scheduledEvent('instance-event-0cccc3333dddd4444', 'instance-reboot', 40);
    fake.setScheduledEvents([event]);
    const requestId = noticeRequestId('aws-scheduled-events', 'node-2', event.EventId);
    const mark = w.sim.requestLog.mark();
    const { agent } = await awsAgent('node-2', fake);
    try {
      await waitForStartPlanned(requestId, isoOf(event.NotBefore));
      const [first] = w.runtime.executionsFor(requestId).filter((e) => e.machine === 'evacuate');
      assert.ok(first, 'the first Evacuate waits');
      const moved = ahead(3 * 24 * 60 * MINUTE);
      fake.rescheduleEvent(event.EventId, moved);
      await waitForStartPlanned(requestId, moved.toISOString());

      const outcome = await first.outcome;
      assert.ok(outcome.ok, 'the stale execution ended (superseded), it did not fail');
      assert.ok(simNow() >= Date.parse(scheduledTimings(requestId)[0]?.startAt ?? ''), 'it woke at the old start');
      const node = await readNodeAsAdmin(w, 'node-2');
      assert.notEqual(node.spec?.unschedulable, true, 'never cordoned');
      assert.ok(!progressOf(bus, requestId, 'NodeCordoned'), 'no NodeCordoned');
      assert.deepEqual(evictionsSince(w, mark), [], 'nothing evicted');
      const record = await readRecord(w, requestId);
      assert.equal(record.status?.phase, 'MaintenanceScheduled', 'the request waits for its new start');
      assert.equal(Date.parse(record.status?.start?.notBefore ?? ''), moved.getTime());
      assert.equal(record.status?.reschedules?.at(-1)?.outcome, 'replanned');
    } finally {
      await agent.stop();
      await fake.server.stop();
    }
  });

  it('AWS Health resends one event ARN: unchanged → nothing more; moved after the start → one Evacuate, kept drained', async () => {
    const arn = 'arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED/RESEND-1';
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
    const start = ahead(15 * MINUTE);
    await run(healthEvent(arn, start, new Date(simNow())), CONTEXT);
    await waitForStartPlanned(requestId, start.toISOString());
    // The same event again (EventBridge delivers at least once; Health resends on updates): nothing moves.
    await run(healthEvent(arn, start, new Date(simNow())), CONTEXT);
    await waitUntil('node-3 is drained', async () => (await phaseOf('node-3')) === 'NodeDrained', 30_000);
    const evacuations = () => w.runtime.executionsFor(requestId).filter((e) => e.machine === 'evacuate');
    assert.equal(evacuations().length, 2);
    assert.ok((await evacuations()[1]?.outcome)?.ok, 'the resend ended at once');

    const later = ahead(2 * 24 * 60 * MINUTE);
    await run(healthEvent(arn, later, new Date(simNow())), CONTEXT);
    await waitUntil('the move is recorded', async () => {
      const record = await readRecord(w, requestId);
      return record.status?.reschedules?.some((r) => r.outcome === 'kept') === true;
    });
    const record = await readRecord(w, requestId);
    const kept = record.status?.reschedules?.at(-1);
    assert.equal(Date.parse(kept?.to ?? ''), later.getTime());
    assert.match(kept?.message ?? '', /the node stays drained until the maintenance ends/);
    assert.ok((await evacuations()[2]?.outcome)?.ok, 'the resend ended without a second evacuation');
    assert.equal(bus.filter((e) => e.requestId === requestId && e.detail.phase === 'NodeCordoned').length, 1);
    assert.equal((await readNodeAsAdmin(w, 'node-3')).spec?.unschedulable, true, 'kept drained');

    await run(healthEvent(arn, later, new Date(simNow()), 'closed'), CONTEXT);
    await waitUntil('node-3 is restored', async () => (await phaseOf('node-3')) === 'NodeUncordoned', 30_000);
  });
});

const CONTEXT = lambdaContext('drainbridge-dev-normalizeAwsNotice', {
  region: 'us-west-2',
  requestId: '00000000-0000-4000-8000-000000000003',
});

/** AWS's documented Health event (fixture) for node-3's instance, starting at `start`, sent at `sent`. */
function healthEvent(arn: string, start: Date, sent: Date, statusCode = 'upcoming'): Record<string, unknown> {
  const event = structuredClone(fixture<Record<string, unknown>>('aws/health-instance-stop-scheduled.json'));
  event.time = sent.toISOString().replace(/\.\d{3}Z$/, 'Z');
  event.detail = {
    ...(event.detail as Record<string, unknown>),
    eventArn: arn,
    eventTypeCode: 'AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED',
    statusCode,
    startTime: start.toUTCString(),
    endTime: new Date(start.getTime() + 3 * 24 * 3600_000).toUTCString(),
    affectedEntities: [{ entityValue: 'i-abcd3333' }],
  };
  event.resources = ['i-abcd3333'];
  return event;
}
