/**
 * Found by the 60-minute soak (issue 24, seed 2424): a GCE MIGRATE_ON_HOST_MAINTENANCE notice whose
 * "Maintenance Requested" the bus did not take within the agent's patience (the replica the connection
 * reached did not lead; the forwarder's queue kept offering it, and it got through 17 s later) was not
 * counted as published; the maintenance-event read hangs until the value changes, so the agent's next
 * read was the notice's end (NONE) — and it ended nothing: the request waited in line for a maintenance
 * long over, to drain the node when a slot freed. Here the publisher takes the event but answers like the
 * queue ("not on the bus yet; it stays queued"), then the notice ends: "Maintenance Ended" must follow.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DetailByType, DetailType } from '../../lib/bus/contracts/index.ts';
import { TransientError } from '../../lib/errors/index.ts';
import { FakeGceMetadata } from '../../sim/metadata/index.ts';
import {
  type AgentCluster,
  GCP_NODES,
  RecordingPublisher,
  runAgent,
  startAgentCluster,
  testConfig,
} from '../sources/harness.ts';
import { waitUntil } from '../support/wait.ts';

/** Takes every event (it reaches the bus) but answers the first "Maintenance Requested" as the queue does when it is late. */
class LateConfirmingPublisher extends RecordingPublisher {
  late = 1;

  override async publish<T extends DetailType>(detailType: T, detail: DetailByType[T]): Promise<void> {
    await super.publish(detailType, detail);
    if (detailType === 'Maintenance Requested' && this.late > 0) {
      this.late -= 1;
      throw new TransientError(`"${detailType}" ${detail.requestId} is not on the bus yet; it stays queued`);
    }
  }
}

let cluster: AgentCluster;
before(async () => {
  cluster = await startAgentCluster(GCP_NODES);
});
after(() => cluster.stop());

describe('fault injection: a notice request the bus took late', () => {
  it('GCE maintenance-event: Requested confirmed late, then NONE → Maintenance Ended for it', async () => {
    const metadata = await FakeGceMetadata.start();
    const publisher = new LateConfirmingPublisher();
    const { agent, logger } = runAgent(
      testConfig({
        DRAINBRIDGE_NODE_NAME: 'node-1',
        DRAINBRIDGE_AGENT_PROVIDER: 'gcp',
        DRAINBRIDGE_AGENT_GCP_URL: metadata.url,
      }),
      cluster.kube,
      { publisher },
    );
    try {
      metadata.setMaintenanceEvent('MIGRATE_ON_HOST_MAINTENANCE');
      await waitUntil('the late confirmation is logged', () =>
        logger.has('publishing failed; trying again at the next read'),
      );
      const [requested] = publisher.of('Maintenance Requested');
      assert.ok(requested, 'the request reached the bus');
      // The maintenance-event read hangs until the value changes: the next read is the notice's end.
      metadata.setMaintenanceEvent('NONE');
      await waitUntil('Maintenance Ended', () => publisher.of('Maintenance Ended').length > 0, 10_000);
      assert.deepEqual(
        publisher.of('Maintenance Ended').map((e) => e.requestId),
        [requested.requestId],
      );
    } finally {
      await agent.stop();
      await metadata.server.stop();
    }
  });
});
