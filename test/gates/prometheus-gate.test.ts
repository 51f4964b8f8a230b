/**
 * Issue 22's acceptance for health gates, with a real Prometheus (the Debian package): its rule fires
 * `NodeUnhealthy{node="node-2"}` from a metric a loopback exporter serves. `drainbridge run
 * --cordon-evacuates all` with a prometheus-alerts gate on that server: `kubectl cordon node-2` is not
 * admitted while the alert fires — `drainbridge status` and the Evacuation record name the alert,
 * `drainbridge plan` shows the gate closed — and once the alert clears the node is drained without anyone
 * asking again. run's /metrics says each time what the gate said: `drainbridge_gate_open` 0, then 1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { runCli } from '../cli/run-cli.ts';
import {
  type DrainbridgeProcess,
  metric,
  scrape,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { ledgerHolds } from '../support/invariants.ts';
import { findPrometheus, PROMETHEUS_MISSING, type RealPrometheus, startPrometheus } from '../support/prometheus.ts';
import { waitUntil } from '../support/wait.ts';

const PROMETHEUS = findPrometheus();
const NODES = { group: '', resource: 'nodes' };

if (!PROMETHEUS && process.env.CI === 'true') {
  it('Prometheus is present in CI', () => assert.fail('prometheus not found and CI=true: .ci/run installs it'));
}

async function recordOf(cluster: TestCluster, node: string): Promise<EvacuationObject | undefined> {
  return (await cluster.admin.listEvacuations()).find((record) => record.spec.nodeName === node);
}

describe('a prometheus-alerts gate on a real Prometheus', { skip: PROMETHEUS ? false : PROMETHEUS_MISSING }, () => {
  let prometheus: RealPrometheus;
  let cluster: TestCluster;
  let run: DrainbridgeProcess;
  let kubeconfig = '';
  let gates = '';

  before(async () => {
    prometheus = await startPrometheus(PROMETHEUS ?? '');
    prometheus.exporter.values.set('node-2', 1);
    prometheus.exporter.values.set('node-3', 0);
    cluster = await startTestCluster(spreadScenario(3));
    kubeconfig = await cluster.kubeconfigFor('drainbridge');
    // What a kured user writes: firing alerts only, Watchdog-style noise filtered out, critical ones.
    gates = JSON.stringify([
      {
        kind: 'prometheus-alerts',
        url: prometheus.url,
        firingOnly: true,
        alertFilterRegexp: '^Watchdog$',
        matchers: ['severity=critical'],
        timeout: '5s',
      },
    ]);
    run = await startRun(cluster, { identity: 'run-gates', cordonEvacuates: 'all', env: { DRAINBRIDGE_GATES: gates } });
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await cluster?.stop();
    await prometheus?.stop();
  });

  it('a cordon waits while the alert fires, status names it; the node is drained once it clears', async () => {
    await prometheus.waitForAlert('node-2', 'firing');
    // --ignore-daemonsets: as the cordon's drain does (DaemonSet pods are skipped for every origin).
    const plan = await runCli(['plan', 'node-2', '--ignore-daemonsets', '--kubeconfig', kubeconfig], {
      DRAINBRIDGE_GATES: gates,
    });
    assert.equal(plan.code, 0, `${plan.stdout}\n${plan.stderr}`);
    assert.match(
      plan.stdout,
      /Admission now: would wait \(health gate prometheus-alerts: blocked by alert NodeUnhealthy/,
    );
    assert.match(plan.stdout, /gate prometheus-alerts: CLOSED \(blocked by alert NodeUnhealthy\{[^}]*node="node-2"/);

    assert.equal((await cluster.kubectl.run(['cordon', 'node-2'])).code, 0);
    let status = '';
    await waitUntil(
      'drainbridge status names the alert',
      async () => {
        const result = await runCli(['status', '--kubeconfig', kubeconfig]);
        status = result.stdout;
        return /waiting: health gate prometheus-alerts: blocked by alert NodeUnhealthy\{[^}]*node="node-2"/.test(
          status,
        );
      },
      90_000,
      { everyMs: 1000, context: () => status },
    );
    const node = cluster.sim.store.list(NODES).items.find((n) => n.metadata.name === 'node-2');
    assert.ok(node);
    assert.equal(ledgerHolds(node), 'none', 'drainbridge took no hold on node-2 while the alert fired');
    assert.equal((await recordOf(cluster, 'node-2'))?.status?.phase, undefined, 'node-2 was not admitted');
    // The Evacuation record says it too (a NodeMaintenance's lastError comes from it).
    await waitUntil('the record says why node-2 waits', async () =>
      /^health gate prometheus-alerts: blocked by alert NodeUnhealthy\{[^}]*node="node-2"/.test(
        (await recordOf(cluster, 'node-2'))?.status?.waiting ?? '',
      ),
    );
    const evictions = cluster.sim.requestLog.writes({ resource: 'pods' }).filter((r) => r.subresource === 'eviction');
    assert.deepEqual(evictions, [], 'no pod was evicted while the gate was closed');
    const gate = { gate: 'prometheus-alerts' };
    const closedMetrics = await scrape(await run.opsUrl());
    assert.match(closedMetrics, /^drainbridge_gate_open\{gate="prometheus-alerts"\} 0$/m, 'the metric: closed');
    assert.equal(metric(closedMetrics, 'drainbridge_gate_evaluation_errors_total', gate), 0, 'it answered');
    const evaluatedAt = metric(closedMetrics, 'drainbridge_gate_last_evaluated_timestamp_seconds', gate);
    assert.ok(Math.abs(evaluatedAt - Date.now() / 1000) < 60, `evaluated lately (${evaluatedAt})`);

    // The alert clears: nobody asks again, the waiting request goes on.
    prometheus.exporter.values.set('node-2', 0);
    await prometheus.waitForAlert('node-2', 'absent');
    await waitUntil(
      'node-2 drained after the alert cleared',
      async () => (await recordOf(cluster, 'node-2'))?.status?.phase === 'NodeDrained',
      120_000,
      { everyMs: 500 },
    );
    assert.equal((await recordOf(cluster, 'node-2'))?.status?.waiting, undefined, 'admitted: no reason to wait');
    assert.equal(metric(await scrape(await run.opsUrl()), 'drainbridge_gate_open', gate), 1, 'the metric: open');
    const open = await runCli(['plan', 'node-3', '--ignore-daemonsets', '--kubeconfig', kubeconfig], {
      DRAINBRIDGE_GATES: gates,
    });
    assert.match(open.stdout, /gate prometheus-alerts: open \(no matching alert\)/);
  });
});
