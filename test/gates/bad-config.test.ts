/**
 * Bad gate configuration is refused before anything starts: `drainbridge run` with a DRAINBRIDGE_GATES
 * mistake exits with the usage status, naming the field, and writes nothing to the cluster (not even its
 * run Lease).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DrainbridgeProcess, spreadScenario, startTestCluster, type TestCluster } from '../forwarder/harness.ts';

describe('drainbridge run refuses bad gate configuration before it starts', () => {
  let cluster: TestCluster;
  before(async () => {
    cluster = await startTestCluster(spreadScenario(2));
  });
  after(async () => {
    await cluster?.stop();
  });

  it('names the field, exits 2, writes nothing', async () => {
    const writesBefore = cluster.sim.requestLog.writes({}).length;
    const run = new DrainbridgeProcess(
      ['run', '--kubeconfig', await cluster.kubeconfigFor('drainbridge-run'), '--cordon-evacuates', 'all'],
      {
        DRAINBRIDGE_GATES: JSON.stringify([
          { kind: 'not-ready-nodes', max: 1 },
          { kind: 'prometheus-alerts', url: 'prometheus.monitoring:9090' },
        ]),
      },
    );
    const exit = await run.exited;
    const output = run.output.join('\n');
    assert.equal(exit.code, 2, output);
    assert.match(output, /DRAINBRIDGE_GATES\[1\]\.url: must be an http:\/\/ or https:\/\/ URL/);
    assert.equal(cluster.sim.requestLog.writes({}).length, writesBefore, 'no write reached the cluster');
  });
});
