/**
 * The alertmanager gate against a real Alertmanager (the Debian package prometheus-alertmanager 0.25), no
 * cluster: a real Prometheus's rule fires `NodeUnhealthy{node="node-7"}` from a loopback exporter's metric
 * and sends it to Alertmanager through `alerting.alertmanagers`, as in production. The gate blocks naming
 * the alert, through the same name filter and label matchers as the prometheus-alerts gate; a silence made
 * through Alertmanager's API opens it — while the prometheus-alerts gate, reading Prometheus, still blocks.
 * An Alertmanager that does not answer closes the gate, saying so.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkGates } from '../../lib/admission/gates/index.ts';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { gateSpecs } from '../../lib/model/gate-spec.ts';
import {
  ALERTMANAGER_MISSING,
  findAlertmanager,
  type RealAlertmanager,
  startAlertmanager,
} from '../support/alertmanager.ts';
import {
  findPrometheus,
  freePort,
  PROMETHEUS_MISSING,
  type RealPrometheus,
  startPrometheus,
} from '../support/prometheus.ts';
import { waitUntil } from '../support/wait.ts';

const PROMETHEUS = findPrometheus();
const ALERTMANAGER = findAlertmanager();
const MISSING = !PROMETHEUS ? PROMETHEUS_MISSING : !ALERTMANAGER ? ALERTMANAGER_MISSING : undefined;

if (MISSING && process.env.CI === 'true') {
  it('Prometheus and Alertmanager are present in CI', () =>
    assert.fail(`${MISSING} — and CI=true: .ci/run installs them`));
}

describe('the alertmanager gate on a real Alertmanager fed by a real Prometheus', { skip: MISSING ?? false }, () => {
  let alertmanager: RealAlertmanager;
  let prometheus: RealPrometheus;
  // The alert gates read no cluster.
  const context = { client: {} as KubeClient, node: { metadata: { name: 'node-1' } }, now: new Date() };
  const verdicts = (specs: Record<string, unknown>[]) => checkGates(gateSpecs.parse(specs), context);

  before(async () => {
    alertmanager = await startAlertmanager(ALERTMANAGER ?? '');
    prometheus = await startPrometheus(PROMETHEUS ?? '', { alertmanager: alertmanager.address });
    prometheus.exporter.values.set('node-7', 1);
    prometheus.exporter.values.set('node-8', 0);
    await prometheus.waitForAlert('node-7', 'firing');
    await alertmanager.waitForAlert('NodeUnhealthy', 'node-7', 'active');
  });
  after(async () => {
    await prometheus?.stop();
    await alertmanager?.stop();
  });

  it('an active alert blocks, named with its labels; the name filter and matchers let it through', async () => {
    const url = alertmanager.url;
    const [fires, filtered, matchOnly, otherNode] = await verdicts([
      { kind: 'alertmanager', name: 'all', url },
      { kind: 'alertmanager', name: 'filtered', url, alertFilterRegexp: '^NodeUnhealthy$' },
      { kind: 'alertmanager', name: 'match-only', url, alertFilterRegexp: '^Kube', alertFilterMatchOnly: true },
      { kind: 'alertmanager', name: 'node-8', url, matchers: ['node=node-8', 'severity=critical'] },
    ]);
    assert.deepEqual(fires, {
      gate: 'all',
      open: false,
      why: `blocked by alert NodeUnhealthy{instance="127.0.0.1:${prometheus.exporter.port}",job="fleet",node="node-7",severity="critical"}`,
    });
    assert.equal(filtered?.open, true, filtered?.why);
    assert.equal(matchOnly?.open, true, matchOnly?.why);
    assert.equal(otherNode?.open, true, otherNode?.why);
  });

  it("a silence made through Alertmanager's API opens it; the prometheus-alerts gate still blocks", async () => {
    const gates = [
      { kind: 'alertmanager', url: alertmanager.url, matchers: ['severity=critical'] },
      { kind: 'prometheus-alerts', url: prometheus.url, matchers: ['severity=critical'] },
    ];
    const [before] = await verdicts(gates);
    assert.equal(before?.open, false, 'blocked before the silence');
    await alertmanager.silence('node', 'node-7');
    await alertmanager.waitForAlert('NodeUnhealthy', 'node-7', 'suppressed');
    const [silenced, prometheusGate] = await waitUntil('the alertmanager gate opens', async () => {
      const answer = await verdicts(gates);
      return answer[0]?.open === true ? answer : undefined;
    });
    assert.deepEqual(silenced, { gate: 'alertmanager', open: true, why: 'no matching unsilenced alert' });
    assert.equal(prometheusGate?.open, false, 'Prometheus knows nothing of silences: that gate still blocks');
    assert.match(prometheusGate?.why ?? '', /blocked by alert NodeUnhealthy\{[^}]*node="node-7"/);
  });

  it('an Alertmanager that does not answer closes the gate, saying so', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const [closed] = await verdicts([{ kind: 'alertmanager', url: nobody, timeout: '2s' }]);
    assert.equal(closed?.open, false);
    assert.match(closed?.why ?? '', /^could not be evaluated/);
  });
});
