/**
 * An unreadable source ends its request, end to end through the node agent and the packaged state
 * machines on the simulator (issue 21 point 3): EC2's scheduled-events path answers 200 with an empty
 * body (not one of the documented empty answers: `[]` or 404 — "Instance metadata categories",
 * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-categories.html), the request
 * stays open until the notice's NotAfter has passed, then the agent ends it naming the first unreadable
 * read; Restore puts a Warning Event on the node, keeps the reason in the Evacuation record, and
 * `drainbridge status` says why it ended. Time is the simulator's (200× real time).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { statusReport } from '../../cli/status/model.ts';
import { renderReport } from '../../cli/status/render.ts';
import { readSnapshot } from '../../cli/status/snapshot.ts';
import { InProcessPublisher } from '../../lib/bus/in-process-publisher.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { readPhase } from '../../lib/node/phase.ts';
import { formatEc2ImdsDate } from '../../lib/sources/clouds/dates.ts';
import { noticeRequestId } from '../../lib/sources/clouds/ids.ts';
import { SCHEDULED_PATH } from '../../sim/metadata/aws.ts';
import { FakeEc2Metadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { fixture } from '../unit/sources/fixtures.ts';
import { readNodeAsAdmin, readRecord, startWorkflowSim, type WorkflowSim } from '../workflow/harness.ts';
import { AWS_NODES, agentKubeOn, runAgent, testConfig, webScenario } from './harness.ts';
import { type BusLog, recordBus } from './timing.ts';

type Ec2Events = Parameters<FakeEc2Metadata['setScheduledEvents']>[0];

const SCENARIO = webScenario('aws-unreadable', AWS_NODES, 3);

let w: WorkflowSim;
let agentKube: KubeClient;
const bus: BusLog = [];
const simNow = () => w.sim.clock.now();

before(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  w = await startWorkflowSim(SCENARIO, { runtime: { onBusEvent: recordBus(bus, () => simNow()) } });
  agentKube = await agentKubeOn(w.sim);
});
after(async () => {
  await w.stop();
});

function nodeEvents(node: string, reason: string): { type?: string; message?: string }[] {
  return w.sim.store
    .list({ group: '', resource: 'events' }, { namespace: 'default' })
    .items.filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === node)
    .filter((e) => (e as { reason?: string }).reason === reason) as { type?: string; message?: string }[];
}

describe('an unreadable source ends its request, end to end', () => {
  it('EC2 200 with an empty body: drained, kept until NotAfter, then restored with a Warning Event and a status line', async () => {
    const fake = await FakeEc2Metadata.start({ instanceId: 'i-abcd1111', now: simNow });
    const [example] = fixture<Ec2Events>('aws/scheduled-system-reboot.json');
    const start = new Date(Math.floor(simNow() / 1000) * 1000 + 10 * 60_000);
    const notAfter = new Date(start.getTime() + 10 * 60_000);
    const event = {
      ...(example as Ec2Events[number]),
      NotBefore: formatEc2ImdsDate(start),
      NotAfter: formatEc2ImdsDate(notAfter),
    };
    fake.setScheduledEvents([event]);
    const requestId = noticeRequestId('aws-scheduled-events', 'node-1', event.EventId);
    const config = testConfig({
      DRAINBRIDGE_NODE_NAME: 'node-1',
      DRAINBRIDGE_AGENT_PROVIDER: 'aws',
      DRAINBRIDGE_AGENT_AWS_URL: fake.url,
    });
    // What the agent puts on the bus, on the simulator's clock (the runtime's onBusEvent sees only its own).
    const onBus = new InProcessPublisher(w.runtime.bus);
    const agentPublisher = {
      publish: async (detailType: Parameters<typeof onBus.publish>[0], detail: Parameters<typeof onBus.publish>[1]) => {
        recordBus(bus, simNow)(detailType, detail);
        await onBus.publish(detailType, detail);
      },
    };
    const { agent, logger, metrics } = runAgent(config, agentKube, {
      publisher: agentPublisher,
      now: () => new Date(simNow()),
    });
    try {
      await waitUntil(
        'node-1 is drained',
        async () => readPhase(await readNodeAsAdmin(w, 'node-1')) === 'NodeDrained',
        30_000,
      );
      fake.serveRaw(SCHEDULED_PATH, '');
      const unreadableAt = simNow();
      await waitUntil('reported unreadable', () =>
        logger.has('notice source unreadable: nothing counts as gone until it is read again'),
      );
      assert.ok(simNow() < notAfter.getTime(), 'checked before NotAfter');
      assert.equal((await readNodeAsAdmin(w, 'node-1')).spec?.unschedulable, true, 'still cordoned before NotAfter');

      await waitUntil(
        'node-1 is restored',
        async () => readPhase(await readNodeAsAdmin(w, 'node-1')) === 'NodeUncordoned',
        30_000,
      );
      const ended = bus.find((e) => e.detailType === 'Maintenance Ended' && e.requestId === requestId);
      assert.ok(ended && ended.at > notAfter.getTime(), 'ended after NotAfter');
      const since = Date.parse(String(ended.detail.unreadableSince));
      assert.ok(since >= unreadableAt && since < notAfter.getTime(), 'it names the first unreadable read');
      assert.equal(metrics.get('unreadableEnds', 'aws-scheduled-events'), 1, 'counted');

      await waitUntil('a Warning Event on node-1', () => nodeEvents('node-1', 'NoticeSourceUnreadable').length === 1);
      const [warning] = nodeEvents('node-1', 'NoticeSourceUnreadable');
      assert.equal(warning?.type, 'Warning');
      assert.match(warning?.message ?? '', /unreadable since .*the maintenance may not be over/);
      const record = await readRecord(w, requestId);
      assert.equal(record.status?.sourceUnreadable?.since, ended.detail.unreadableSince);

      const { deps } = w.runtime;
      const source = {
        client: deps.kube,
        namespace: deps.config.namespace,
        recordTtlHours: deps.config.recordTtlHours,
      };
      const lines = renderReport(statusReport(await readSnapshot(source, 'node-1')), 'table');
      assert.ok(
        lines.some((line) =>
          line.startsWith(`  ended on an unreadable source (unreadable since ${ended.detail.unreadableSince})`),
        ),
        lines.join('\n'),
      );
    } finally {
      await agent.stop();
      await fake.server.stop();
    }
  });
});
