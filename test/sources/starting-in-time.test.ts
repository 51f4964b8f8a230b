/**
 * Starting in time, on the simulator through the packaged state machines:
 *  - the seconds per VM the start-time estimate uses (lib/workflow/estimate-observe.ts): before any
 *    evacuation on the cluster the configured default (DRAINBRIDGE_MIGRATION_SECONDS, "nothing observed
 *    yet"); after a real evacuation migrated VMs (KubeVirt), the seconds per VM that evacuation recorded;
 *  - `drainbridge plan` (the CLI, a separate process) lists a request waiting for its computed start:
 *    "Scheduled: request … starts at … for a maintenance at …" (lib/workflow/plan-timing.ts).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { buildKubeConfig, type Config, loadConfig } from '../../lib/config/index.ts';
import { secondsPerItem } from '../../lib/model/estimate.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';
import { estimateNode } from '../../lib/workflow/estimate-observe.ts';
import { waitUntil } from '../support/wait.ts';
import {
  maintenanceRequested,
  readRecord,
  simInstant,
  startWorkflowSim,
  type WorkflowSim,
} from '../workflow/harness.ts';
import { kubeVirtScenario, vmis } from '../workflow/kubevirt-scenario.ts';

const BIN = new URL('../../bin/drainbridge.js', import.meta.url).pathname;

function drainbridge(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { timeout: 60_000, env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR' } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const OPTIONS = { ...KUBECTL_DRAIN_DEFAULTS, ignoreDaemonSets: true };

describe('the VM estimate: configured default, then what this cluster observed', () => {
  let w: WorkflowSim;
  let config: Config;
  let kube: KubeClient;
  let kubeconfig: string;

  before(async () => {
    w = await startWorkflowSim(
      kubeVirtScenario({
        vms: [
          { name: 'app-1', strategy: 'LiveMigrate' },
          { name: 'app-2', strategy: 'LiveMigrate' },
          { name: 'app-3', strategy: 'LiveMigrate' },
        ],
      }),
      { env: { DRAINBRIDGE_MIGRATION_SECONDS: '123' } },
    );
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-estimate-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/drainbridge')));
    config = loadConfig({ KUBECONFIG: kubeconfig, DRAINBRIDGE_MIGRATION_SECONDS: '123' });
    kube = new KubeClient(await buildKubeConfig(config));
  });
  after(async () => {
    await w?.stop();
  });

  const kubevirtOf = async (node: string) => {
    const estimate = await estimateNode(config, kube, { name: node, options: { ...OPTIONS } });
    return estimate.branches.find((branch) => branch.branch === 'kubevirt');
  };

  it('nothing observed yet: count × DRAINBRIDGE_MIGRATION_SECONDS, said so', async () => {
    const kubevirt = await kubevirtOf('node-1');
    assert.equal(kubevirt?.seconds, 3 * 123);
    assert.match(kubevirt?.basis ?? '', /3 VM\(s\) × 123 s \(configured default, nothing observed yet\)/);
  });

  it('after a real evacuation migrated them, the next estimate uses the seconds per VM it recorded', async () => {
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: { ignoreDaemonSets: true } }));
    await waitUntil(
      'node-1 evacuated',
      async () =>
        (await readRecord(w, 'req-node-1').catch(() => undefined))?.status?.branches?.kubevirt?.finishedAt !==
        undefined,
      60_000,
    );
    const recorded = (await readRecord(w, 'req-node-1')).status?.branches?.kubevirt;
    assert.equal(recorded?.moved, 3);
    const observed = secondsPerItem(recorded ?? {});
    assert.ok(observed !== undefined && observed > 0, 'the record holds the evacuation’s seconds per VM');

    // The VMs now run elsewhere: the estimate for the node holding the most of them.
    const where = new Map<string, number>();
    for (const vmi of (await vmis(w)).values()) where.set(vmi.nodeName ?? '', (where.get(vmi.nodeName ?? '') ?? 0) + 1);
    const [node, count] = [...where.entries()].sort((a, b) => b[1] - a[1])[0] as [string, number];
    assert.notEqual(node, 'node-1');
    const kubevirt = await kubevirtOf(node);
    assert.equal(kubevirt?.seconds, Math.round(count * observed));
    assert.match(kubevirt?.basis ?? '', /observed on this cluster/);
    assert.doesNotMatch(kubevirt?.basis ?? '', /× 123 s/);
  });

  it('drainbridge plan shows the request waiting for its computed start', async () => {
    const notBefore = simInstant(w, 10 * 3600);
    const requestId = 'aws:node-3:scheduled:instance-event-0123456789abcdef0';
    await w.runtime.put(
      'Maintenance Requested',
      maintenanceRequested('node-3', { requestId, origin: 'aws', notBefore, drain: { ignoreDaemonSets: true } }),
    );
    await waitUntil(
      'the request waits for its start',
      async () => (await readRecord(w, requestId).catch(() => undefined))?.status?.phase === 'MaintenanceScheduled',
      30_000,
    );
    const start = (await readRecord(w, requestId)).status?.start;
    assert.ok(start, 'the record keeps the computed start');
    const result = await drainbridge(['plan', 'node-3', '--ignore-daemonsets', '--kubeconfig', kubeconfig]);
    assert.equal(result.code, 0, result.stderr);
    const line = `Scheduled: request ${requestId} starts at ${start.startAt} for a maintenance at ${notBefore} (estimate ${start.estimateSeconds} s)`;
    assert.ok(result.stdout.includes(line), `expected the line\n  ${line}\nin\n${result.stdout}`);
    assert.ok(Date.parse(start.startAt) < Date.parse(notBefore));
  });
});
