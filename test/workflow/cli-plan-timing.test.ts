/**
 * `drainbridge plan` as a user runs it (a separate process, against a simulated cluster): the estimated
 * evacuation time, when an evacuation for a maintenance at --not-before would start, and the cloud
 * notice policy (--notice-policy, with DRAINBRIDGE_NOTICE_POLICY applied).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';

const BIN = new URL('../../bin/drainbridge.js', import.meta.url).pathname;

function drainbridge(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { timeout: 60_000, env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR', ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('drainbridge plan: start time, estimate, notice policy', () => {
  let cluster: DrainbridgeCluster;
  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 100 });
  });
  after(async () => {
    await cluster?.stop();
  });

  it('shows the estimate and when a maintenance at --not-before would start; changes nothing', async () => {
    const mark = cluster.sim.requestLog.mark();
    const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600_000);
    const args = ['plan', 'node-1', '--ignore-daemonsets', '--kubeconfig', cluster.kubeconfigPath];
    const result = await drainbridge([...args, '--not-before', notBefore.toISOString(), '--json']);
    assert.equal(result.code, 3, result.stderr); // the demo's bare pod blocks
    const json = JSON.parse(result.stdout) as {
      timing: {
        estimate: { seconds: number; branches: { basis: string }[] };
        marginSeconds: number;
        start: { startAt: string; late: boolean };
      };
    };
    const { estimate, marginSeconds, start } = json.timing;
    assert.ok(estimate.seconds > 0);
    assert.ok(
      estimate.branches.some((b) => /under PDB shop\/web/.test(b.basis)),
      'the PDB paces the estimate',
    );
    assert.equal(marginSeconds, 300);
    assert.equal(Date.parse(start.startAt), notBefore.getTime() - (estimate.seconds + marginSeconds) * 1000);
    assert.equal(start.late, false);

    const text = await drainbridge([...args, '--not-before', new Date(Date.now() + 10_000).toISOString()]);
    assert.match(text.stdout, /Estimated evacuation time: \d+ s/);
    assert.match(text.stdout, /A maintenance at .* starts the evacuation at /);
    assert.match(
      text.stdout,
      /WARNING: the evacuation of node node-1 is estimated to take \d+ s but only \d+ s are left/,
    );
    assert.deepEqual(cluster.sim.requestLog.writes({ since: mark }), [], 'plan writes nothing');
  });

  it('--notice-policy prints every provider and notice type, with the overrides applied', async () => {
    const result = await drainbridge(['plan', '--notice-policy'], {
      DRAINBRIDGE_NOTICE_POLICY: '{"azure":{"Freeze":{"action":"evacuate"}}}',
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /azure Freeze: evacuate \(starts in time for the notice's start\)/);
    assert.match(
      result.stdout,
      /azure Reboot: evacuate .*; approves the event once drained; drain ignoreDaemonSets=true, deleteEmptyDirData=true, force=true/,
    );
    assert.match(result.stdout, /aws spot-interruption: evacuate \(starts at once\)/);
    assert.match(result.stdout, /gcp MIGRATE_ON_HOST_MAINTENANCE: evacuate \(starts at once\)/);
    const json = await drainbridge(['plan', '--notice-policy', '--json']);
    const rows = (JSON.parse(json.stdout) as { noticePolicy: { provider: string; type: string; action: string }[] })
      .noticePolicy;
    assert.equal(rows.find((r) => r.provider === 'azure' && r.type === 'Freeze')?.action, 'ignore');
    // Azure 5, AWS 7, GCE 4 (its preemption notice among them, opt-in at the agent but always in the policy),
    // Alibaba Cloud ECS 12 (its system event codes).
    const perProvider = Object.fromEntries(
      ['azure', 'aws', 'gcp', 'alibaba'].map((p) => [p, rows.filter((r) => r.provider === p).length]),
    );
    assert.deepEqual(perProvider, { azure: 5, aws: 7, gcp: 4, alibaba: 12 });
    assert.equal(rows.length, 28, 'no provider beyond the four');
    assert.ok(rows.some((r) => r.provider === 'gcp' && r.type === 'preempted'));
    assert.ok(rows.some((r) => r.provider === 'alibaba' && r.type === 'SystemMaintenance.Reboot'));
    for (const asked of [['-o', 'json'], ['--output=json']]) {
      const same = await drainbridge(['plan', '--notice-policy', ...asked]);
      assert.deepEqual(JSON.parse(same.stdout), JSON.parse(json.stdout), `${asked.join(' ')} is --json`);
    }
    const yaml = parseYaml((await drainbridge(['plan', '--notice-policy', '-o', 'yaml'])).stdout);
    assert.deepEqual(yaml, JSON.parse(json.stdout), '-o yaml: the same document');
    const bad = await drainbridge(['plan', '--notice-policy'], {
      DRAINBRIDGE_NOTICE_POLICY: '{"azure":{"Frezze":{}}}',
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /DRAINBRIDGE_NOTICE_POLICY\.azure\.Frezze/);
  });
});
