/**
 * Each round of gate verdicts reaches the metrics: `drainbridge run`'s /metrics (drainbridge_gate_open,
 * drainbridge_gate_evaluation_errors_total, drainbridge_gate_last_evaluated_timestamp_seconds by gate) and,
 * on Lambda, one EMF line per gate (GateOpen, GateEvaluationErrors with the dimension gate). A gate that
 * throws or outlasts its timeout counts as an evaluation error and as closed.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Registry } from 'prom-client';
import { createRunMetrics } from '../../../embedded/run/metrics.ts';
import { blocked, type Gate, open, runGates } from '../../../lib/admission/gates/gate.ts';
import { type GateObservation, onGateVerdicts } from '../../../lib/admission/index.ts';
import type { KubeClient } from '../../../lib/clients/kube/client.ts';
import { gateVerdictsToEmf } from '../../../lib/lambda/gate-metrics.ts';
import { metric } from '../../forwarder/harness.ts';

const context = { client: {} as KubeClient, node: { metadata: { name: 'node-1' } }, now: new Date() };

const GATES: Gate[] = [
  { name: 'go', timeoutSeconds: 1, check: async () => open('fine') },
  { name: 'alerts', timeoutSeconds: 1, check: async () => blocked('blocked by alert X') },
  {
    name: 'broken',
    timeoutSeconds: 1,
    check: async () => {
      throw new Error('connection refused');
    },
  },
  { name: 'slow', timeoutSeconds: 1, check: () => new Promise(() => undefined) },
];

describe('gate verdicts as metrics', () => {
  const removals: (() => void)[] = [];
  after(() => {
    for (const remove of removals) remove();
  });

  it('run: open 1/0 per gate, failures counted, when last evaluated', async () => {
    const registry = new Registry();
    createRunMetrics(registry, () => 0);
    const heard: GateObservation[] = [];
    removals.push(onGateVerdicts((observations) => heard.push(...observations)));
    const before = Date.now() / 1000;
    await runGates(GATES, context);
    const text = await registry.metrics();
    const value = (name: string, gate: string) => metric(text, name, { gate });
    assert.deepEqual(
      heard.map(({ gate, open, failed }) => [gate, open, failed]),
      [
        ['go', true, false],
        ['alerts', false, false],
        ['broken', false, true],
        ['slow', false, true],
      ],
    );
    assert.match(text, /^drainbridge_gate_open\{gate="go"\} 1$/m);
    for (const gate of ['alerts', 'broken', 'slow'])
      assert.match(text, new RegExp(`^drainbridge_gate_open\\{gate="${gate}"\\} 0$`, 'm'));
    assert.equal(value('drainbridge_gate_evaluation_errors_total', 'go'), 0);
    assert.equal(value('drainbridge_gate_evaluation_errors_total', 'alerts'), 0);
    assert.equal(value('drainbridge_gate_evaluation_errors_total', 'broken'), 1);
    assert.equal(value('drainbridge_gate_evaluation_errors_total', 'slow'), 1);
    assert.ok(value('drainbridge_gate_last_evaluated_timestamp_seconds', 'go') >= Math.floor(before));
  });

  it('Lambda: one EMF line per gate, GateOpen and GateEvaluationErrors by gate', async () => {
    const lines: string[] = [];
    const metrics = new Metrics({ namespace: 'drainbridge', serviceName: 'drainbridge' });
    // Powertools prints EMF with its `console` (lib/log/sink.ts reroutes it the same way).
    Object.assign(metrics, {
      console: { log: (line: string) => lines.push(line), debug() {}, info() {}, warn() {}, error() {} },
    });
    removals.push(onGateVerdicts(gateVerdictsToEmf(metrics)));
    await runGates(GATES.slice(0, 3), context);
    const emf = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      emf.map((doc) => [doc.gate, doc.GateOpen, doc.GateEvaluationErrors]),
      [
        ['go', 1, 0],
        ['alerts', 0, 0],
        ['broken', 0, 1],
      ],
    );
    const aws = emf[0]?._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] };
    assert.equal(aws.CloudWatchMetrics[0]?.Namespace, 'drainbridge');
    assert.ok(aws.CloudWatchMetrics[0]?.Dimensions[0]?.includes('gate'));
  });
});
