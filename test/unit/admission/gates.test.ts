/**
 * Health gates, piece by piece: label matchers, kured's alert filters, PromQL verdicts, the cluster's
 * verdicts, the configuration's refusals naming the field, and every way a gate can fail to answer —
 * a 5xx, garbage, an API error, a refused connection, a timeout — closing it (fails closed) with the reason.
 * The HTTP failures come from a real server on loopback.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { planAdmission } from '../../../lib/admission/decision.ts';
import { blockingAlerts, describeBlocking } from '../../../lib/admission/gates/alerts.ts';
import { failureDomainVerdict, notReadyVerdict, pdbVerdict } from '../../../lib/admission/gates/cluster.ts';
import { blockingReason } from '../../../lib/admission/gates/gate.ts';
import { checkGates } from '../../../lib/admission/gates/index.ts';
import type { PrometheusAlert } from '../../../lib/admission/gates/prometheus-api.ts';
import { promqlVerdict } from '../../../lib/admission/gates/promql.ts';
import type { KubeClient } from '../../../lib/clients/kube/client.ts';
import type { EvacuationObject } from '../../../lib/clients/kube/paths.ts';
import { loadConfig } from '../../../lib/config/index.ts';
import { ConfigError } from '../../../lib/errors/index.ts';
import { gateSpecs } from '../../../lib/model/gate-spec.ts';
import { matchesLabels, parseMatcher } from '../../../lib/model/label-matchers.ts';
import { statusFromRecord, WAITING_FOR_SLOT } from '../../../lib/sources/node-maintenance/status.ts';

const alert = (labels: Record<string, string>, state: PrometheusAlert['state'] = 'firing'): PrometheusAlert => ({
  labels,
  state,
});

describe('label matchers', () => {
  const cases: [string, Record<string, string>, boolean][] = [
    ['severity=critical', { severity: 'critical' }, true],
    ['severity=critical', { severity: 'warning' }, false],
    ['severity!=info', { severity: 'critical' }, true],
    ['severity!=info', {}, true],
    ['node=~"node-.*"', { node: 'node-7' }, true],
    ['node=~node-1', { node: 'node-12' }, false],
    ['namespace!~kube-.*', { namespace: 'kube-system' }, false],
    ['namespace!~kube-.*', { namespace: 'shop' }, true],
    ['team=', {}, true],
  ];
  for (const [text, labels, expected] of cases) {
    it(`${text} on ${JSON.stringify(labels)} is ${expected}`, () => {
      const matcher = parseMatcher(text);
      assert.ok(typeof matcher !== 'string', String(matcher));
      assert.equal(matchesLabels(matcher, labels), expected);
    });
  }
  it('refuses what is not a matcher, and a bad regex', () => {
    assert.match(String(parseMatcher('severity')), /must be a label matcher/);
    assert.match(String(parseMatcher('node=~(')), /not a valid regular expression/);
  });
});

describe('the alerts gate filters as kured does', () => {
  const alerts = [
    alert({ alertname: 'Watchdog' }),
    alert({ alertname: 'KubeNodeNotReady', node: 'node-7', severity: 'critical' }),
    alert({ alertname: 'DiskFilling', severity: 'warning' }, 'pending'),
  ];
  const names = (spec: Parameters<typeof blockingAlerts>[1]) =>
    blockingAlerts(alerts, spec).map((a) => a.labels.alertname);

  it('every active alert blocks by default, pending ones too', () => {
    assert.deepEqual(names({}), ['Watchdog', 'KubeNodeNotReady', 'DiskFilling']);
  });
  it('alertFilterRegexp ignores the names it matches', () => {
    assert.deepEqual(names({ alertFilterRegexp: '^(Watchdog|DiskFilling)$' }), ['KubeNodeNotReady']);
  });
  it('alertFilterMatchOnly counts only the names it matches', () => {
    assert.deepEqual(names({ alertFilterRegexp: '^Kube', alertFilterMatchOnly: true }), ['KubeNodeNotReady']);
  });
  it('firingOnly leaves pending alerts out', () => {
    assert.deepEqual(names({ firingOnly: true }), ['Watchdog', 'KubeNodeNotReady']);
  });
  it('label matchers must all hold', () => {
    const critical = parseMatcher('severity=critical');
    const node = parseMatcher('node=~"node-[0-9]+"');
    assert.ok(typeof critical !== 'string' && typeof node !== 'string');
    assert.deepEqual(names({ matchers: [critical, node] }), ['KubeNodeNotReady']);
    assert.deepEqual(names({ matchers: [critical], alertFilterRegexp: 'NotReady' }), []);
  });
  it('names the first blocking alert with its labels', () => {
    assert.equal(
      describeBlocking(blockingAlerts(alerts, { alertFilterRegexp: 'Watchdog' })),
      'blocked by alert KubeNodeNotReady{node="node-7",severity="critical"} and 1 more alert(s)',
    );
  });
});

describe('PromQL verdicts: empty or zero goes', () => {
  it('an empty vector and zero samples go', () => {
    assert.equal(promqlVerdict('x', { resultType: 'vector', result: [] }).open, true);
    assert.equal(promqlVerdict('x', { resultType: 'vector', result: [{ metric: {}, value: [1, '0'] }] }).open, true);
    assert.equal(promqlVerdict('x', { resultType: 'scalar', result: [1, '0'] }).open, true);
  });
  it('a non-zero sample blocks, naming its series', () => {
    const verdict = promqlVerdict('burn > 2', {
      resultType: 'vector',
      result: [
        { metric: { __name__: 'burn', slo: 'checkout' }, value: [1, '3.5'] },
        { metric: { slo: 'search' }, value: [1, '0'] },
      ],
    });
    assert.deepEqual(verdict, {
      open: false,
      why: 'burn > 2 returned 3.5 for burn{slo="checkout"} (must be 0 or empty)',
    });
    assert.equal(promqlVerdict('x', { resultType: 'scalar', result: [1, '1'] }).open, false);
    assert.equal(promqlVerdict('x', { resultType: 'vector', result: [{ metric: {}, value: [1, 'NaN'] }] }).open, false);
  });
  it('a range vector fails closed', () => {
    assert.match(promqlVerdict('x[5m]', { resultType: 'matrix', result: [] }).why, /matrix.*fails closed/);
  });
});

const node = (name: string, ready: boolean, labels: Record<string, string> = {}): V1Node => ({
  metadata: { name, labels },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe('the cluster gates', () => {
  it('not-ready-nodes counts the other nodes only', () => {
    const nodes = [node('node-1', false), node('node-2', false), node('node-3', true)];
    assert.equal(notReadyVerdict(nodes, 'node-1', 1).open, true);
    assert.deepEqual(notReadyVerdict(nodes, 'node-3', 1), {
      open: false,
      why: '2 other node(s) NotReady (node-1, node-2); at most 1',
    });
  });

  const pdb = (name: string, allowed: number, since: string | undefined, app: string): V1PodDisruptionBudget => ({
    metadata: { name, namespace: 'shop' },
    spec: { selector: { matchLabels: { app } } },
    status: {
      currentHealthy: 1,
      desiredHealthy: 1,
      expectedPods: 1,
      disruptionsAllowed: allowed,
      ...(since
        ? {
            conditions: [
              {
                type: 'DisruptionAllowed',
                status: allowed > 0 ? 'True' : 'False',
                lastTransitionTime: new Date(since),
                message: '',
                reason: 'InsufficientPods',
              },
            ],
          }
        : {}),
    },
  });
  const pod: V1Pod = { metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web' } } };
  const now = new Date('2026-11-28T12:00:00Z');

  it('pdbs-at-zero: a budget at zero longer than T blocks, unless it covers the node’s own pods', () => {
    const old = '2026-11-28T11:00:00Z';
    assert.equal(pdbVerdict([pdb('web', 0, old, 'web')], [pod], { now, forSeconds: 600 }).open, true);
    assert.deepEqual(pdbVerdict([pdb('db', 0, old, 'db')], [pod], { now, forSeconds: 600 }), {
      open: false,
      why: 'PodDisruptionBudget shop/db (since 2026-11-28T11:00:00.000Z) allows no disruption for longer than 600s',
    });
    assert.equal(pdbVerdict([pdb('db', 0, '2026-11-28T11:55:00Z', 'db')], [pod], { now, forSeconds: 600 }).open, true);
    assert.equal(pdbVerdict([pdb('db', 1, old, 'db')], [pod], { now, forSeconds: 600 }).open, true);
  });
  it('pdbs-at-zero: a budget with no condition to tell since when blocks (fails closed)', () => {
    assert.match(pdbVerdict([pdb('db', 0, undefined, 'db')], [], { now, forSeconds: 600 }).why, /unknown time/);
  });

  it('failure-domain: another NotReady node of the same zone blocks', () => {
    const zone = 'topology.kubernetes.io/zone';
    const me = node('node-1', true, { [zone]: 'a' });
    const nodes = [me, node('node-2', false, { [zone]: 'a' }), node('node-3', false, { [zone]: 'b' })];
    assert.deepEqual(failureDomainVerdict(nodes, me, zone), {
      open: false,
      why: 'topology.kubernetes.io/zone=a has NotReady node(s) node-2',
    });
    assert.equal(failureDomainVerdict(nodes, node('node-4', true, { [zone]: 'b' }), zone).open, false);
    assert.equal(failureDomainVerdict(nodes, node('node-5', true, { [zone]: 'c' }), zone).open, true);
    assert.equal(failureDomainVerdict(nodes, node('node-6', true), zone).open, true);
  });
});

describe('DRAINBRIDGE_GATES is refused before anything starts, naming the field', () => {
  const problems = (text: string) => {
    try {
      loadConfig({ DRAINBRIDGE_GATES: text });
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.problems.filter((p) => p.path.startsWith('DRAINBRIDGE_GATES'));
    }
    return [];
  };
  const cases: [string, string, RegExp][] = [
    ['- kind: prometheus-alerts\n  url: prometheus:9090', 'DRAINBRIDGE_GATES[0].url', /http:\/\/ or https:\/\//],
    ['[{kind: promql, url: "http://p:9090"}]', 'DRAINBRIDGE_GATES[0].expr', /required/],
    ['[{kind: not-ready-nodes, max: 1, timout: 5s}]', 'DRAINBRIDGE_GATES[0].timout', /unknown field/],
    ['[{kind: http, url: "http://x", timeout: 5 minutes}]', 'DRAINBRIDGE_GATES[0].timeout', /at most 30s/],
    ['[{kind: alerts, url: "http://x"}]', 'DRAINBRIDGE_GATES[0].kind', /kind must be one of/],
    [
      '[{kind: prometheus-alerts, url: "http://x", alertFilterRegexp: "("}]',
      'DRAINBRIDGE_GATES[0].alertFilterRegexp',
      /regular expression/,
    ],
    [
      '[{kind: prometheus-alerts, url: "http://x", matchers: [severity]}]',
      'DRAINBRIDGE_GATES[0].matchers[0]',
      /label matcher/,
    ],
    [
      '[{kind: not-ready-nodes, max: 1}, {kind: not-ready-nodes, max: 2}]',
      'DRAINBRIDGE_GATES[1].name',
      /names two gates/,
    ],
    // Alertmanager holds no pending alerts: kured's --alert-firing-only has no meaning there.
    [
      '[{kind: alertmanager, url: "http://am:9093", firingOnly: true}]',
      'DRAINBRIDGE_GATES[0].firingOnly',
      /unknown field/,
    ],
    ['[{kind: alertmanager, url: "am:9093"}]', 'DRAINBRIDGE_GATES[0].url', /http:\/\/ or https:\/\//],
    ['{kind: http', 'DRAINBRIDGE_GATES', /not valid YAML or JSON/],
    ['[{kind: http, url: "https://u:s3cret@checks.example.com/ok"}]', 'DRAINBRIDGE_GATES[0].url', /credentials/],
    ['kind: http', 'DRAINBRIDGE_GATES', /must be a list of gates/],
  ];
  for (const [text, path, message] of cases) {
    it(`${JSON.stringify(text)} → ${path}`, () => {
      const found = problems(text);
      assert.ok(
        found.some((p) => p.path === path && message.test(p.message)),
        `expected ${path} ${message}, got ${JSON.stringify(found)}`,
      );
    });
  }
  it('a valid list loads, in order, with its defaults left to the gates', () => {
    const config = loadConfig({
      DRAINBRIDGE_GATES:
        '[{kind: prometheus-alerts, url: "http://p:9090", firingOnly: true, matchers: ["severity=critical"]}, {kind: pdbs-at-zero, for: 10m, timeout: 5s}]',
    });
    assert.deepEqual(
      config.gates.map((g) => g.kind),
      ['prometheus-alerts', 'pdbs-at-zero'],
    );
    assert.deepEqual(config.gates[1], { kind: 'pdbs-at-zero', for: 600, timeout: 5 });
    assert.deepEqual(loadConfig({}).gates, []);
  });
  it('the example deploy/overlays/run-gates ships loads', () => {
    const text = readFileSync(new URL('../../../deploy/overlays/run-gates/gates.yaml', import.meta.url), 'utf8');
    assert.deepEqual(
      loadConfig({ DRAINBRIDGE_GATES: text }).gates.map((g) => g.kind),
      ['prometheus-alerts', 'not-ready-nodes', 'failure-domain'],
    );
  });
});

/** A loopback server whose answer each test sets. */
describe('a gate that cannot be evaluated blocks (fails closed), saying why', () => {
  let server: Server;
  let url = '';
  let answer: (response: import('node:http').ServerResponse) => void = (r) => r.end();
  before(async () => {
    server = createServer((_request, response) => answer(response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address && typeof address !== 'string');
    url = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const context = { client: {} as KubeClient, node: { metadata: { name: 'node-1' } }, now: new Date() };
  const check = async (spec: Record<string, unknown>) => {
    const [verdict] = await checkGates(gateSpecs.parse([spec]), context);
    assert.ok(verdict);
    return verdict;
  };
  const alertsSpec = () => ({ kind: 'prometheus-alerts', url, timeout: '1s' });

  it('a 5xx', async () => {
    answer = (r) => r.writeHead(503).end('overloaded');
    const verdict = await check(alertsSpec());
    assert.equal(verdict.open, false);
    assert.match(verdict.why, /fails closed.*answered 503/);
  });
  it('garbage', async () => {
    answer = (r) => r.writeHead(200).end('<html>login</html>');
    assert.match((await check(alertsSpec())).why, /fails closed.*not JSON/);
    answer = (r) => r.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"success","data":{}}');
    assert.match((await check(alertsSpec())).why, /fails closed.*other than the Prometheus API/);
  });
  it('a Prometheus API error', async () => {
    answer = (r) => r.writeHead(400).end('{"status":"error","errorType":"bad_data","error":"parse error at char 3"}');
    assert.match((await check({ kind: 'promql', url, expr: 'up ==', timeout: '1s' })).why, /fails closed.*parse error/);
  });
  it('a timeout', async () => {
    answer = () => undefined; // never answers
    const started = Date.now();
    const verdict = await check(alertsSpec());
    assert.deepEqual(verdict, {
      gate: 'prometheus-alerts',
      open: false,
      why: 'could not be evaluated within its 1s timeout (fails closed)',
    });
    assert.ok(Date.now() - started < 5000, 'the timeout bounds the wait');
  });
  it('a refused connection', async () => {
    const verdict = await check({ kind: 'http', url: 'http://127.0.0.1:1/ok', timeout: '2s' });
    assert.equal(verdict.open, false);
    assert.match(verdict.why, /fails closed/);
  });
  it('the HTTP gate: 200 goes, anything else blocks naming the status and never the query', async () => {
    answer = (r) => r.writeHead(200).end('ok');
    assert.equal((await check({ kind: 'http', url: `${url}/ok?token=s3cret`, timeout: '1s' })).open, true);
    answer = (r) => r.writeHead(409).end('change freeze until Monday');
    const verdict = await check({ kind: 'http', url: `${url}/ok?token=s3cret`, timeout: '1s' });
    assert.equal(verdict.open, false);
    assert.match(verdict.why, /answered 409: change freeze until Monday/);
    assert.doesNotMatch(verdict.why, /s3cret/);
  });
  it('the first closed gate is the reason a request waits', () => {
    assert.equal(
      blockingReason([
        { gate: 'a', open: true, why: 'fine' },
        { gate: 'b', open: false, why: 'blocked by alert X' },
        { gate: 'c', open: false, why: 'no' },
      ]),
      'health gate b: blocked by alert X (and 1 more gate(s) closed: `drainbridge plan` shows them)',
    );
    assert.equal(blockingReason([{ gate: 'a', open: true, why: 'fine' }]), undefined);
  });
});

describe('a closed gate in the admission decision', () => {
  const now = new Date('2026-11-28T12:00:00Z');
  const since = '2026-11-28T11:50:00Z';
  const base = {
    requestId: 'r1',
    node: 'node-1',
    now,
    heldNodes: [],
    maxHeldNodes: 2,
    queue: { r1: { node: 'node-1', since, seen: since } },
    queueTtlSeconds: 3600,
    gated: 'health gate alerts: blocked by alert X',
  };
  it('keeps the request in line, in its place, saying why', () => {
    const decision = planAdmission(base);
    assert.equal(decision.admit, false);
    assert.equal(decision.admit === false && decision.limited, true);
    assert.equal(decision.queue.r1?.since, since, 'its place is kept');
    assert.equal(decision.queue.r1?.why, 'health gate alerts: blocked by alert X');
    assert.equal(decision.why, 'health gate alerts: blocked by alert X');
  });
  it('never holds back a node already held: a started evacuation finishes', () => {
    assert.equal(planAdmission({ ...base, heldNodes: ['node-1'] }).admit, true);
  });
  it('admits once the gate is open', () => {
    const { gated: _open, ...rest } = base;
    assert.equal(planAdmission(rest).admit, true);
  });
});

describe("a NodeMaintenance's lastError while its request waits", () => {
  const record = (waiting?: string) =>
    ({
      apiVersion: 'drainbridge.io/v1alpha1',
      kind: 'Evacuation',
      metadata: { name: 'r1' },
      spec: { requestId: 'r1', nodeName: 'node-7' },
      status: { branches: {}, ...(waiting ? { waiting } : {}) },
    }) as unknown as EvacuationObject;
  it('names the closed gate the record names', () => {
    assert.equal(
      statusFromRecord(record('health gate alerts: blocked by alert KubeNodeNotReady{node="node-3"}'), false).lastError,
      'waiting for a free maintenance slot: health gate alerts: blocked by alert KubeNodeNotReady{node="node-3"}',
    );
  });
  it('says it waits when the record gives no reason', () => {
    assert.equal(statusFromRecord(record(), false).lastError, WAITING_FOR_SLOT);
  });
});
