/**
 * The Prometheus gates against a real Prometheus (the Debian package), no cluster: the alerts gate reads
 * the server's `/api/v1/alerts` through kured's filters and the label matchers, the PromQL gate its
 * `/api/v1/query`, and a query Prometheus refuses closes the gate with Prometheus's own words.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkGates } from '../../lib/admission/gates/index.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { gateSpecs } from '../../lib/model/gate-spec.ts';
import { findPrometheus, PROMETHEUS_MISSING, type RealPrometheus, startPrometheus } from '../support/prometheus.ts';

const PROMETHEUS = findPrometheus();

if (!PROMETHEUS && process.env.CI === 'true') {
  it('Prometheus is present in CI', () => assert.fail('prometheus not found and CI=true: .ci/run installs it'));
}

describe('Prometheus gates on a real server', { skip: PROMETHEUS ? false : PROMETHEUS_MISSING }, () => {
  let prometheus: RealPrometheus;
  // The Prometheus gates read no cluster.
  const context = { client: {} as KubeClient, node: { metadata: { name: 'node-1' } }, now: new Date() };
  const verdicts = (specs: Record<string, unknown>[]) => checkGates(gateSpecs.parse(specs), context);

  before(async () => {
    prometheus = await startPrometheus(PROMETHEUS ?? '');
    prometheus.exporter.values.set('node-7', 1);
    prometheus.exporter.values.set('node-8', 0);
    await prometheus.waitForAlert('node-7', 'firing');
  });
  after(async () => {
    await prometheus?.stop();
  });

  it('the alerts gate: a firing alert blocks, named with its labels; filters and matchers let it through', async () => {
    const url = prometheus.url;
    const [fires, filtered, matchOnly, otherNode] = await verdicts([
      { kind: 'prometheus-alerts', name: 'all', url },
      { kind: 'prometheus-alerts', name: 'filtered', url, alertFilterRegexp: '^NodeUnhealthy$' },
      { kind: 'prometheus-alerts', name: 'match-only', url, alertFilterRegexp: '^Kube', alertFilterMatchOnly: true },
      { kind: 'prometheus-alerts', name: 'node-8', url, matchers: ['node=node-8'] },
    ]);
    assert.deepEqual(fires, {
      gate: 'all',
      open: false,
      why:
        'blocked by alert NodeUnhealthy{instance="127.0.0.1:' +
        prometheus.exporter.port +
        '",job="fleet",node="node-7",severity="critical"}',
    });
    assert.equal(filtered?.open, true, filtered?.why);
    assert.equal(matchOnly?.open, true, matchOnly?.why);
    assert.equal(otherNode?.open, true, otherNode?.why);
  });

  it('the PromQL gate: a non-zero sample blocks, zero or empty lets through', async () => {
    const url = prometheus.url;
    const [nonZero, zero, empty] = await verdicts([
      { kind: 'promql', name: 'sum', url, expr: 'sum(fleet_node_unhealthy)' },
      { kind: 'promql', name: 'node-8', url, expr: 'fleet_node_unhealthy{node="node-8"}' },
      { kind: 'promql', name: 'none', url, expr: 'fleet_node_unhealthy > 5' },
    ]);
    assert.deepEqual(nonZero, {
      gate: 'sum',
      open: false,
      why: 'sum(fleet_node_unhealthy) returned 1 (must be 0 or empty)',
    });
    assert.equal(zero?.open, true, zero?.why);
    assert.equal(empty?.open, true, empty?.why);
  });

  it('a query Prometheus refuses closes the gate with its error', async () => {
    const [refused] = await verdicts([{ kind: 'promql', url: prometheus.url, expr: 'sum(' }]);
    assert.equal(refused?.open, false);
    assert.match(refused?.why ?? '', /could not be evaluated \(fails closed\): .*answered 400: .*parse error/);
  });
});
