/**
 * The notice policy's restore gap (DRAINBRIDGE_NOTICE_RESTORE_GAP_SECONDS, issue 21 point 2's policy
 * choice), end to end through the AWS normaliser (AWS Health resends an event, same ARN, when its start
 * changes) and the packaged state machines on the simulator: a notice moved later after its node was drained, more than the gap away, has the node
 * restored (only what drainbridge changed: a person's cordon stays) and drained again before the new
 * start, under the same request; moved later but within the gap, the node stays drained. (Not through
 * the node agent's EC2 IMDS: with the default 300 s start margin the node is drained within the last
 * minutes before NotBefore, when the fake IMDS, as EC2, no longer lets the event be rescheduled.)
 * With the policy off (the default) a drained node stays drained: test/sources/e2e-reschedule.test.ts.
 * Time is the simulator's (200× real time), read by the agent, the tasks and the Wait states.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { handler as normalizeAwsNotice } from '../../functions/normalize-aws-notice.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { noticeRequestId } from '../../lib/sources/clouds/ids.ts';
import { MemoryNoticeMetrics } from '../../lib/sources/clouds/metrics.ts';
import { DEFAULT_NOTICE_POLICY } from '../../lib/sources/clouds/policy.ts';
import { lambdaContext } from '../support/lambda-context.ts';
import { waitUntil } from '../support/wait.ts';
import { fixture } from '../unit/sources/fixtures.ts';
import { readNodeAsAdmin, readRecord, startWorkflowSim, type WorkflowSim } from '../workflow/harness.ts';
import { AWS_NODES, agentKubeOn, webScenario } from './harness.ts';
import { type BusLog, recordBus } from './timing.ts';

const SCENARIO = webScenario('aws-reschedule-restore', AWS_NODES, 6);
/** The gap this cluster is configured with: 30 minutes. */
const GAP_SECONDS = 1800;

let w: WorkflowSim;
let agentKube: KubeClient;
const bus: BusLog = [];
const simNow = () => w.sim.clock.now();
const MINUTE = 60_000;
const ahead = (ms: number) => new Date(Math.floor((simNow() + ms) / 1000) * 1000);

before(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  w = await startWorkflowSim(SCENARIO, {
    env: { DRAINBRIDGE_MAX_HELD_NODES: '3', DRAINBRIDGE_NOTICE_RESTORE_GAP_SECONDS: String(GAP_SECONDS) },
    runtime: { onBusEvent: recordBus(bus, () => simNow()) },
  });
  agentKube = await agentKubeOn(w.sim);
});
after(async () => {
  await w.stop();
});

const phaseOf = async (node: string) => readPhase(await readNodeAsAdmin(w, node));
const succeeded = (requestId: string) =>
  bus.filter((e) => e.detailType === 'Evacuation Succeeded' && e.requestId === requestId);
const cordons = (requestId: string) =>
  bus.filter((e) => e.requestId === requestId && e.detail.phase === 'NodeCordoned');

describe('a notice moved far after its node was drained (DRAINBRIDGE_NOTICE_RESTORE_GAP_SECONDS set)', () => {
  it('AWS Health moves the start later by more than the gap: restored, then drained again before the new start', async () => {
    const arn = 'arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED/RESTORE-GAP-0';
    const requestId = noticeRequestId('aws-health', 'node-1', arn);
    const start = ahead(10 * MINUTE);
    await health(healthEvent(arn, 'i-abcd1111', start));
    await waitUntil('node-1 is drained', () => succeeded(requestId).length === 1, 60_000);
    assert.equal((await readNodeAsAdmin(w, 'node-1')).spec?.unschedulable, true);

    const moved = ahead(70 * MINUTE);
    await health(healthEvent(arn, 'i-abcd1111', moved));
    await waitUntil('node-1 is restored', async () => (await phaseOf('node-1')) === 'NodeUncordoned', 30_000);
    const restoredAt = simNow();
    const restored = await readNodeAsAdmin(w, 'node-1');
    assert.notEqual(restored.spec?.unschedulable, true, 'uncordoned');
    assert.equal(Object.hasOwn(readLedger(restored).released, requestId), false, 'no tombstone: the request goes on');
    const record = await readRecord(w, requestId);
    const last = record.status?.reschedules?.at(-1);
    assert.equal(last?.outcome, 'restored');
    assert.equal(Date.parse(last?.from ?? ''), start.getTime(), 'the previous start');
    assert.equal(Date.parse(last?.to ?? ''), moved.getTime(), 'the current start');
    assert.equal(Date.parse(record.spec.notBefore ?? ''), moved.getTime());
    assert.match(
      last?.message ?? '',
      new RegExp(
        `^restored: maintenance moved to ${moved.toISOString()} \\(> ${GAP_SECONDS} s away\\); evacuating again from`,
      ),
    );

    const told = bus.filter((e) => e.detailType === 'Node Restored' && e.requestId === requestId);
    assert.equal(told.length, 1, 'the restore for the new start is told as a Node Restored');
    assert.equal(told[0]?.detail.uncordoned, true);
    assert.ok(
      ((told[0]?.detail.leftAlone ?? []) as string[]).some((line) =>
        line.startsWith('restored until its rescheduled start'),
      ),
      JSON.stringify(told[0]?.detail),
    );

    await waitUntil('node-1 is drained again', () => succeeded(requestId).length === 2, 90_000);
    const again = succeeded(requestId)[1]?.at ?? Number.POSITIVE_INFINITY;
    assert.ok(again < moved.getTime(), 'drained again before the new start');
    const recordon = cordons(requestId).at(-1)?.at ?? 0;
    assert.ok(recordon > restoredAt, 'cordoned again after the restore');
    assert.ok(recordon > moved.getTime() - 60 * MINUTE, 'not at once: at the new start less the estimate and margin');
    assert.equal((await readNodeAsAdmin(w, 'node-1')).spec?.unschedulable, true);
    const evacuations = w.runtime.executionsFor(requestId).filter((e) => e.machine === 'evacuate');
    assert.equal(evacuations.length, 2, 'the first evacuation and the one for the new start, nothing more');

    await health(healthEvent(arn, 'i-abcd1111', moved, 'closed'));
    await waitUntil(
      'node-1 is restored at the end',
      async () => (await phaseOf('node-1')) === 'NodeUncordoned',
      30_000,
    );
  });

  it('AWS Health moves the start later, within the gap: kept drained, and said so', async () => {
    const arn = 'arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED/RESTORE-GAP-1';
    const requestId = noticeRequestId('aws-health', 'node-3', arn);
    const start = ahead(10 * MINUTE);
    await health(healthEvent(arn, 'i-abcd3333', start));
    await waitUntil('node-3 is drained', () => succeeded(requestId).length === 1, 60_000);

    const later = new Date(start.getTime() + 15 * MINUTE);
    await health(healthEvent(arn, 'i-abcd3333', later));
    await waitUntil('the move is recorded', async () => {
      const record = await readRecord(w, requestId);
      return record.status?.reschedules?.some((r) => r.outcome === 'kept') === true;
    });
    const kept = (await readRecord(w, requestId)).status?.reschedules?.at(-1);
    assert.match(kept?.message ?? '', /the node stays drained until the maintenance ends/);
    assert.equal((await readNodeAsAdmin(w, 'node-3')).spec?.unschedulable, true, 'kept drained');
    assert.equal(cordons(requestId).length, 1, 'one evacuation');

    await health(healthEvent(arn, 'i-abcd3333', later, 'closed'));
    await waitUntil('node-3 is restored', async () => (await phaseOf('node-3')) === 'NodeUncordoned', 30_000);
  });
});

const CONTEXT = lambdaContext('drainbridge-dev-normalizeAwsNotice', {
  region: 'us-west-2',
  requestId: '00000000-0000-4000-8000-000000000004',
});

/** The AWS normaliser (the Lambda's task) run on `event`. */
async function health(event: Record<string, unknown>): Promise<void> {
  const run = normalizeAwsNotice.withDeps(
    {
      kube: agentKube,
      publisher: new InProcessPublisher(w.runtime.bus),
      policy: DEFAULT_NOTICE_POLICY,
      metrics: new MemoryNoticeMetrics(),
    },
    () => new Date(simNow()),
  );
  await run(event, CONTEXT);
}

/** AWS's documented Health event (fixture) for `instance`, starting at `start`, sent now. */
function healthEvent(arn: string, instance: string, start: Date, statusCode = 'upcoming'): Record<string, unknown> {
  const event = structuredClone(fixture<Record<string, unknown>>('aws/health-instance-stop-scheduled.json'));
  event.time = new Date(simNow()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  event.detail = {
    ...(event.detail as Record<string, unknown>),
    eventArn: arn,
    eventTypeCode: 'AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED',
    statusCode,
    startTime: start.toUTCString(),
    endTime: new Date(start.getTime() + 3 * 24 * 3600_000).toUTCString(),
    affectedEntities: [{ entityValue: instance }],
  };
  event.resources = [instance];
  return event;
}
