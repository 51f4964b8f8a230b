/**
 * The node agent on GCE, against the fake metadata server over HTTP: maintenance-event read with
 * hanging requests (wait_for_change, last_etag), upcoming-maintenance polled.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import axios from 'axios';
import { evacuationName } from '../../lib/clients/kube/paths.ts';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import type { KubeObject } from '../../sim/index.ts';
import { FakeGceMetadata } from '../../sim/metadata/index.ts';
import { waitUntil } from '../support/wait.ts';
import { type AgentCluster, GCP_NODES, runAgent, startAgentCluster, testConfig } from './harness.ts';

const EVENT = '/computeMetadata/v1/instance/maintenance-event';
const UPCOMING = '/computeMetadata/v1/instance/upcoming-maintenance';

let cluster: AgentCluster;
let fake: FakeGceMetadata;

before(async () => {
  cluster = await startAgentCluster(GCP_NODES);
});
beforeEach(async () => {
  await fake?.server.stop();
  fake = await FakeGceMetadata.start();
});
after(async () => {
  await fake?.server.stop();
  await cluster.stop();
});

const config = (extra: Record<string, string> = {}) =>
  testConfig({
    DRAINBRIDGE_NODE_NAME: 'node-1',
    DRAINBRIDGE_AGENT_PROVIDER: 'gcp',
    DRAINBRIDGE_AGENT_GCP_URL: fake.url,
    DRAINBRIDGE_AGENT_GCP_UPCOMING: 'false',
    ...extra,
  });

/** Stops `running` and starts a new agent, once it has read the metadata twice (settled on what it found). */
async function restartSettled(running: ReturnType<typeof runAgent>): Promise<ReturnType<typeof runAgent>> {
  await running.agent.stop();
  const next = runAgent(config(), cluster.kube);
  const reads = fake.server.requestsTo(EVENT).length;
  await waitUntil('the new agent reads again', () => fake.server.requestsTo(EVENT).length >= reads + 2);
  return next;
}

describe('node agent: GCE metadata', () => {
  it('the fake refuses requests without Metadata-Flavor: Google', async () => {
    const bare = await axios.get(`${fake.url}${EVENT}`, { validateStatus: () => true, proxy: false });
    assert.equal(bare.status, 403);
  });

  it('MIGRATE_ON_HOST_MAINTENANCE while the agent waits → requested at once; back to NONE → ended', async () => {
    const { agent, publisher } = runAgent(config(), cluster.kube);
    try {
      await waitUntil('the agent waits for a change', () => fake.waiting === 1);
      const waiting = fake.server.requestsTo(EVENT).at(-1);
      assert.equal(waiting?.query.wait_for_change, 'true');
      assert.equal(waiting?.query.last_etag, fake.etag, 'it waits from the version it saw');
      assert.equal(waiting?.headers['metadata-flavor'], 'Google');

      const etag = () => fake.etag;
      fake.setMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE');
      const migrating = etag();
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      const [requested] = publisher.of('Maintenance Requested');
      assert.equal(requested?.requestId, `gcp:node-1:maintenance-event:maintenance-event-${migrating}-1`);
      assert.equal(requested?.origin, 'gcp');
      assert.equal(requested?.notBefore, undefined, 'a 60-second notice starts at once');
      assert.equal((requested?.notice as { eventType?: string } | undefined)?.eventType, 'MIGRATE_ON_HOST_MAINTENANCE');

      await waitUntil('the agent waits again', () => fake.waiting === 1);
      fake.setMaintenanceEvent('NONE');
      await waitUntil('the end is published', () => publisher.of('Maintenance Ended').length === 1);
      assert.equal(publisher.of('Maintenance Ended')[0]?.requestId, requested?.requestId);
      assert.equal(publisher.events.length, 2);
    } finally {
      await agent.stop();
    }
  });

  it('the same value again later (same ETag, as a hash of the value) is a new request; a restart keeps the number', async () => {
    /** The node's ledger as the workflow leaves it: these requests hold the node, those were released. */
    const setLedger = (holds: string[], released: string[]) =>
      cluster.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-1' }, (node: KubeObject) => {
        const since = new Date().toISOString();
        node.metadata.annotations = {
          ...node.metadata.annotations,
          [LEDGER_ANNOTATION]: JSON.stringify({
            holds: Object.fromEntries(holds.map((id) => [id, { requester: 'test', origin: 'gcp', since }])),
            released: Object.fromEntries(released.map((id) => [id, since])),
          }),
        };
        return undefined;
      });
    const prefix = 'gcp:node-1:maintenance-event:maintenance-event-';
    let running = runAgent(config(), cluster.kube);
    try {
      await waitUntil('the agent waits for a change', () => fake.waiting === 1);
      fake.setMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE');
      const migrateEtag = fake.etag;
      await waitUntil('the first request', () => running.publisher.of('Maintenance Requested').length === 1);
      const first = running.publisher.of('Maintenance Requested')[0]?.requestId as string;
      assert.equal(first, `${prefix}${migrateEtag}-1`);
      setLedger([first], []); // admitted
      await waitUntil('the agent waits again', () => fake.waiting === 1);
      fake.setMaintenanceEvent('NONE');
      await waitUntil('the first is ended', () => running.publisher.of('Maintenance Ended').length === 1);
      setLedger([], [first]); // restored: a tombstone, which would drop a repeat of the same id

      await waitUntil('the agent waits again', () => fake.waiting === 1);
      fake.setMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE');
      assert.equal(fake.etag, migrateEtag, 'the second migration carries the first one’s ETag');
      await waitUntil('the second request', () => running.publisher.of('Maintenance Requested').length === 2);
      const second = running.publisher.of('Maintenance Requested')[1]?.requestId as string;
      assert.equal(second, `${prefix}${migrateEtag}-2`, 'a new occurrence, not a duplicate of the first');

      // Restart while the second is on its way (nothing in the cluster yet): the same id again.
      await running.agent.stop();
      running = runAgent(config(), cluster.kube);
      await waitUntil('republished', () => running.publisher.of('Maintenance Requested').length === 1);
      assert.equal(running.publisher.of('Maintenance Requested')[0]?.requestId, second);

      // Restart once it holds the node: taken over, not published again; NONE ends it.
      setLedger([second], [first]);
      running = await restartSettled(running);
      assert.deepEqual(running.publisher.events, []);
      assert.ok(running.logger.has('found requests of a previous run', (extra) => String(extra.held) === second));
      fake.setMaintenanceEvent('NONE');
      await waitUntil('the second is ended', () => running.publisher.of('Maintenance Ended').length === 1);
      assert.equal(running.publisher.of('Maintenance Ended')[0]?.requestId, second);
    } finally {
      await running.agent.stop();
      setLedger([], []);
    }
  });

  it('a restart while its request waits in line keeps the number, and the end of the notice ends it', async () => {
    // Killed while its maintenance-event request waited in line (a record, no phase, no hold), the agent
    // numbered the same migration anew; the old request waited in line for ever (soak seed 342527).
    const prefix = 'gcp:node-1:maintenance-event:maintenance-event-';
    let running = runAgent(config(), cluster.kube);
    const record = { group: 'drainbridge.io', resource: 'evacuations' };
    let requestId = '';
    try {
      await waitUntil('the agent waits for a change', () => fake.waiting === 1);
      fake.setMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE');
      await waitUntil('the request', () => running.publisher.of('Maintenance Requested').length === 1);
      requestId = running.publisher.of('Maintenance Requested')[0]?.requestId as string;
      assert.ok(requestId.startsWith(prefix));
      // What the workflow leaves of a request waiting in line: its record, labelled with its node, no phase.
      cluster.sim.store.create(record, {
        apiVersion: 'drainbridge.io/v1alpha1',
        kind: 'Evacuation',
        metadata: { name: evacuationName(requestId), labels: { 'drainbridge.io/node': 'node-1' } },
        spec: { requestId, nodeName: 'node-1' },
      } as KubeObject);
      running = await restartSettled(running);
      assert.deepEqual(running.publisher.events, [], 'taken over, not numbered anew');
      assert.ok(running.logger.has('found requests of a previous run', (extra) => String(extra.waiting) === requestId));
      fake.setMaintenanceEvent('NONE');
      await waitUntil('ended', () => running.publisher.of('Maintenance Ended').length === 1);
      assert.equal(running.publisher.of('Maintenance Ended')[0]?.requestId, requestId);
    } finally {
      await running.agent.stop();
      if (requestId) cluster.sim.store.delete(record, { name: evacuationName(requestId) });
    }
  });

  it('a hanging read that times out unchanged publishes nothing and waits again', async () => {
    const { agent, publisher } = runAgent(config({ DRAINBRIDGE_AGENT_GCP_WAIT_SECONDS: '1' }), cluster.kube);
    try {
      await waitUntil('a read timed out and another waits', () => fake.server.requestsTo(EVENT).length >= 3, 5_000);
      assert.deepEqual(publisher.events, []);
    } finally {
      await agent.stop();
    }
  });

  it('upcoming-maintenance → requested for the window (notBefore start, deadline end); gone → ended', async () => {
    const start = new Date(Date.now() + 86_400_000);
    start.setMilliseconds(0);
    const end = new Date(start.getTime() + 7_200_000);
    fake.setUpcomingMaintenance({
      can_reschedule: 'true',
      latest_window_start_time: start.toISOString(),
      maintenance_reasons: ['PLANNED_UPDATE'],
      maintenance_status: 'PENDING',
      type: 'SCHEDULED',
      window_end_time: end.toISOString(),
      window_start_time: start.toISOString(),
    });
    const { agent, publisher } = runAgent(
      {
        ...config({ DRAINBRIDGE_AGENT_GCP_UPCOMING: 'true' }),
        gcp: { ...config().gcp, upcoming: true, upcomingPollSeconds: 0.05 },
      },
      cluster.kube,
    );
    try {
      await waitUntil('the request is published', () => publisher.of('Maintenance Requested').length === 1);
      const [requested] = publisher.of('Maintenance Requested');
      assert.equal(requested?.notBefore, start.toISOString());
      assert.equal(requested?.deadline, end.toISOString());
      assert.equal(fake.server.requestsTo(UPCOMING)[0]?.query.alt, 'json');
      fake.setUpcomingMaintenance({});
      await waitUntil('the end is published', () => publisher.of('Maintenance Ended').length === 1);
    } finally {
      await agent.stop();
    }
  });
});
