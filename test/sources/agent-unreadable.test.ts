/**
 * "No events", "unreadable" and "gone", through the real agent over HTTP (issue 21, item 3): an EC2
 * scheduled-events path answering 200 with an empty body and a GCE upcoming-maintenance with
 * `maintenance_status: COMPLETE` (GCE documents PENDING and ONGOING only) are unreadable — nothing is
 * taken as gone, the source is reported unreadable once — until the notice's end has passed, or, for a
 * notice without an end, the configured limit: then its request is ended, logged and counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatEc2ImdsDate } from '../../lib/sources/clouds/dates.ts';
import { FakeEc2Metadata, FakeGceMetadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { fixture } from '../unit/sources/fixtures.ts';
import { type AgentCluster, AWS_NODES, GCP_NODES, runAgent, startAgentCluster, testConfig } from './harness.ts';

const SCHEDULED = '/latest/meta-data/events/maintenance/scheduled';
type Ec2Events = Parameters<FakeEc2Metadata['setScheduledEvents']>[0];

let cluster: AgentCluster;
before(async () => {
  cluster = await startAgentCluster([...AWS_NODES, ...GCP_NODES.map((n) => ({ ...n, name: 'gce-1' }))]);
});
after(() => cluster.stop());

describe('node agent: an unreadable source ends nothing until the notice’s end or the limit', () => {
  it('EC2: 200 with an empty body is unreadable; the request ends once NotAfter has passed', async () => {
    const imds = await FakeEc2Metadata.start({ instanceId: 'i-abcd1111' });
    // The IMDS example event, its end three seconds from now (the IMDS form has whole seconds).
    const [example] = fixture<Ec2Events>('aws/scheduled-system-reboot.json');
    const notAfter = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_000);
    imds.setScheduledEvents([{ ...(example as Ec2Events[number]), NotAfter: formatEc2ImdsDate(notAfter) }]);
    const { agent, publisher, logger, metrics } = runAgent(
      testConfig({
        DRAINBRIDGE_NODE_NAME: 'node-1',
        DRAINBRIDGE_AGENT_PROVIDER: 'aws',
        DRAINBRIDGE_AGENT_AWS_URL: imds.url,
      }),
      cluster.kube,
    );
    try {
      await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1);
      imds.serveRaw(SCHEDULED, '');
      await waitUntil('reported unreadable', () =>
        logger.has('notice source unreadable: nothing counts as gone until it is read again'),
      );
      assert.ok(
        logger.has('malformed document: nothing published', (e) =>
          /is empty: unreadable, not "no events"/.test(String(e.reason)),
        ),
      );
      assert.deepEqual(publisher.of('Maintenance Ended'), [], 'an empty body is not "no events"');
      assert.ok(Date.now() < notAfter.getTime(), 'checked before NotAfter');

      await waitUntil('ended after NotAfter', () => publisher.of('Maintenance Ended').length === 1, 10_000);
      assert.ok(Date.now() >= notAfter.getTime());
      const [ended] = publisher.of('Maintenance Ended');
      assert.equal(ended?.requestId, 'aws:node-1:scheduled:instance-event-0d59937288b749b32');
      assert.match(String(ended?.reason), /unreadable since .* and the notice's end \(.*\) has passed/);
      assert.equal(metrics.get('unreadableEnds', 'aws-scheduled-events'), 1);
      assert.ok(logger.has('notice source unreadable past the notice’s end: ending its request'));
      assert.equal(
        logger.lines.filter((l) => l.message.startsWith('notice source unreadable: nothing counts')).length,
        1,
        'reported once while it lasts',
      );

      imds.serveRaw(SCHEDULED, undefined);
      await waitUntil('readable again', () => logger.has('notice source readable again'));
    } finally {
      await agent.stop();
      await imds.server.stop();
    }
  });

  it('EC2: a notice without NotAfter on a source unreadable longer than DRAINBRIDGE_AGENT_UNREADABLE_LIMIT_SECONDS', async () => {
    const imds = await FakeEc2Metadata.start({ instanceId: 'i-abcd2222' });
    imds.setScheduledEvents(fixture<Ec2Events>('aws/scheduled-instance-stop-no-end.json'));
    const { agent, publisher } = runAgent(
      testConfig({
        DRAINBRIDGE_NODE_NAME: 'node-2',
        DRAINBRIDGE_AGENT_PROVIDER: 'aws',
        DRAINBRIDGE_AGENT_AWS_URL: imds.url,
        DRAINBRIDGE_AGENT_UNREADABLE_LIMIT_SECONDS: '2',
      }),
      cluster.kube,
    );
    try {
      await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1);
      const unreadableAt = Date.now();
      imds.serveRaw(SCHEDULED, '<html>504 Gateway Timeout</html>');
      await waitUntil('ended past the limit', () => publisher.of('Maintenance Ended').length === 1, 10_000);
      assert.ok(Date.now() - unreadableAt >= 2_000, 'not before the limit');
      assert.match(
        String(publisher.of('Maintenance Ended')[0]?.reason),
        /longer than 2 s, and the notice gives no end/,
      );
    } finally {
      await agent.stop();
      await imds.server.stop();
    }
  });

  it('GCE: upcoming-maintenance with maintenance_status COMPLETE is unreadable, naming the field; ended once window_end_time passed', async () => {
    const metadata = await FakeGceMetadata.start();
    const example = fixture<Record<string, string>>('gcp/upcoming-maintenance.json');
    const start = new Date(Math.ceil(Date.now() / 1000) * 1000 - 60_000);
    const end = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_000);
    const window = {
      window_start_time: start.toISOString(),
      latest_window_start_time: start.toISOString(),
      window_end_time: end.toISOString(),
    };
    metadata.setUpcomingMaintenance({ ...example, ...window });
    const config = testConfig({
      DRAINBRIDGE_NODE_NAME: 'gce-1',
      DRAINBRIDGE_AGENT_PROVIDER: 'gcp',
      DRAINBRIDGE_AGENT_GCP_URL: metadata.url,
    });
    const { agent, publisher, logger } = runAgent(
      { ...config, gcp: { ...config.gcp, upcomingPollSeconds: 0.05 } },
      cluster.kube,
    );
    try {
      await waitUntil('requested', () => publisher.of('Maintenance Requested').length === 1);
      metadata.serveRawUpcoming(JSON.stringify({ ...example, ...window, maintenance_status: 'COMPLETE' }));
      await waitUntil('reported', () =>
        logger.has('malformed document: nothing published', (e) =>
          /maintenance_status: must be one of PENDING, ONGOING \(got "COMPLETE"\)/.test(String(e.reason)),
        ),
      );
      assert.deepEqual(publisher.of('Maintenance Ended'), [], 'COMPLETE is not a documented status: not taken as gone');
      await waitUntil('ended after window_end_time', () => publisher.of('Maintenance Ended').length === 1, 10_000);
      assert.ok(Date.now() >= end.getTime());
      assert.match(String(publisher.of('Maintenance Ended')[0]?.reason), /has passed/);
    } finally {
      await agent.stop();
      await metadata.server.stop();
    }
  });
});
