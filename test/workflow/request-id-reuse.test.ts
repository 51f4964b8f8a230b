/**
 * One request id names one node (lib/workflow/request-node.ts, issue 24): `drainbridge evacuate node-3
 * --request-id REUSE` while REUSE holds node-2 is refused at once with exit 5 naming node-2, and a
 * Maintenance Requested reusing the id for another node (a source's mistake) is refused at the first
 * step — neither waits in line behind its namesake, and neither writes anything.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { readLedger } from '../../lib/node/ledger.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { assertNoNoise, runCli } from '../cli/run-cli.ts';
import {
  failureOf,
  maintenanceRequested,
  openSpareNodes,
  readNodeAsAdmin,
  startWorkflowSim,
  type WorkflowSim,
  writesSince,
} from './harness.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

describe('a request id reused for another node', () => {
  describe('through the bus (the workflow)', () => {
    let w: WorkflowSim | undefined;
    afterEach(async () => {
      await w?.stop();
      w = undefined;
    });

    it('is refused at ResolveTarget naming the node the id names; nothing written', async () => {
      const sim = await startWorkflowSim(WORKFLOW_SCENARIO);
      w = sim;
      await openSpareNodes(sim);
      await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { requestId: 'REUSE' }));
      const [first] = sim.runtime.executionsFor('REUSE');
      assert.ok(first);
      const firstOutcome = await first.outcome;
      assert.equal(firstOutcome.ok, true, `${failureOf(firstOutcome).name}: ${failureOf(firstOutcome).message}`);

      const mark = sim.sim.requestLog.mark();
      const startedAt = Date.now();
      await sim.runtime.put('Maintenance Requested', maintenanceRequested('node-3', { requestId: 'REUSE' }));
      const second = sim.runtime.executionsFor('REUSE')[1];
      assert.ok(second, 'the bus started a second execution');
      const outcome = await second.outcome;
      assert.equal(outcome.ok, false);
      const failure = failureOf(outcome);
      assert.equal(failure.name, 'SkipEvent');
      assert.match(
        failure.message,
        /request REUSE already names node node-1 .*not node-3: one request id names one node/,
      );
      assert.ok(Date.now() - startedAt < 10_000, 'refused at once, not after waiting in line');
      const steps = sim.taskCalls.filter((c) => c.executionId === second.id).map((c) => c.functionKey);
      assert.deepEqual(steps, ['resolveTarget'], 'nothing after the first step');
      assert.deepEqual(writesSince(sim, mark), [], 'nothing written');
      assert.deepEqual(Object.keys(readLedger(await readNodeAsAdmin(sim, 'node-1')).holds), ['REUSE']);
    });
  });

  describe('from the CLI', () => {
    let cluster: DrainbridgeCluster;
    before(async () => {
      cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 50 });
    });
    after(async () => {
      await cluster?.stop();
    });

    it('evacuate node-3 --request-id REUSE while REUSE holds node-2: exit 5 at once, naming node-2, no write', async () => {
      const args = ['--ignore-daemonsets', '--request-id', 'REUSE', '--kubeconfig', cluster.kubeconfigPath];
      const first = await runCli(['evacuate', 'node-2', ...args]);
      assert.equal(first.code, 0, first.stdout + first.stderr);
      const mark = cluster.sim.requestLog.mark();
      const startedAt = Date.now();
      const reused = await runCli(['evacuate', 'node-3', ...args]);
      assert.equal(reused.code, 5, reused.stdout + reused.stderr);
      assert.match(
        reused.stderr,
        /drainbridge evacuate: refused: request REUSE already names node node-2 .*not node-3: one request id names one node; use another id\. Nothing was done\./,
      );
      assert.equal(assertNoNoise(reused.stdout + reused.stderr), undefined);
      assert.ok(Date.now() - startedAt < 20_000, `refused at once (${Date.now() - startedAt} ms)`);
      assert.deepEqual(
        cluster.sim.requestLog.writes({ since: mark }).map((r) => `${r.verb} ${r.path}`),
        [],
        'nothing written',
      );
      const restore = await runCli(['restore', 'node-2', '--kubeconfig', cluster.kubeconfigPath]);
      assert.equal(restore.code, 0, restore.stdout + restore.stderr);
    });
  });
});
