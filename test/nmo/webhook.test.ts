/**
 * The NodeMaintenance admission webhook (deploy/components/nodemaintenance-webhook) against
 * `drainbridge run` and the simulator, which calls validating webhooks over TLS as the API server does
 * (the configuration's caBundle, the Service's DNS name checked). The component's own manifests are applied
 * (its RBAC, its ValidatingWebhookConfiguration — only the Service port changed to where the test's run
 * listens: the simulator has no Service routing); objects applied with the real kubectl. Each case names the
 * test of NMO's internal/webhook/v1beta1/nodemaintenance_webhook_test.go (or its e2e test) it follows.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import {
  type DrainbridgeProcess,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
  waitUntil,
} from '../forwarder/harness.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const COMPONENT = join(ROOT, 'deploy/components/nodemaintenance-webhook');

const ETCD = {
  name: 'etcd',
  namespace: 'kube-system',
  labels: { component: 'etcd' },
  spec: { containers: [{ name: 'etcd', image: 'registry.k8s.io/etcd:3.5.16-0' }] },
};

/** node-1..3 workers; cp-1 the only control-plane node, running kubeadm's etcd (the only member). */
function scenario() {
  const spread = spreadScenario(3);
  return {
    ...spread,
    name: 'nmo-webhook',
    nodes: [
      ...spread.nodes,
      { name: 'cp-1', labels: { 'node-role.kubernetes.io/control-plane': '' }, staticPods: [ETCD] },
    ],
  };
}

/** A NodeMaintenance as NMO's e2e test builds one. */
function manifest(name: string, nodeName: string): string {
  return [
    'apiVersion: nodemaintenance.medik8s.io/v1beta1',
    'kind: NodeMaintenance',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    `  nodeName: ${nodeName}`,
    '  reason: Set maintenance on node for e2e testing',
  ].join('\n');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

/** The component's configuration, its Service port set to `port` (kubectl-ready YAML). */
function webhookConfiguration(port: number): string {
  return readFileSync(join(COMPONENT, 'webhook.yaml'), 'utf8').replace(/port: 443$/m, `port: ${port}`);
}

describe('the NodeMaintenance admission webhook (drainbridge run, deploy/components/nodemaintenance-webhook)', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess;
  let port = 0;

  const apply = (name: string, nodeName: string) =>
    cluster.kubectl.run(['apply', '-f', '-'], { input: manifest(name, nodeName) });
  const denied = (stderr: string, message: string) =>
    assert.ok(
      stderr.includes(`admission webhook "vnodemaintenance.kb.io" denied the request: ${message}`),
      `expected the webhook's refusal "${message}", got: ${stderr}`,
    );

  before(async () => {
    cluster = await startTestCluster(scenario());
    for (const doc of parseAllDocuments(readFileSync(join(COMPONENT, 'rbac.yaml'), 'utf8')))
      cluster.sim.apply(doc.toString(), 'rbac.yaml');
    port = await freePort();
    const configured = await cluster.kubectl.run(['apply', '-f', '-'], { input: webhookConfiguration(port) });
    assert.equal(configured.code, 0, configured.stderr);
    run = await startRun(cluster, {
      identity: 'nmo-webhook',
      env: { DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: `127.0.0.1:${port}` },
    });
    await run.waitForLog('NodeMaintenance admission webhook serving');
  });
  after(async () => {
    run?.kill('SIGTERM');
    await run?.exited;
    await cluster?.stop();
  });

  it('deploy: the certificate made at start, kept in the Secret, its CA written into the caBundle', async () => {
    const secret = await cluster.kubectl.run([
      'get',
      'secret',
      '-n',
      'drainbridge',
      'drainbridge-nodemaintenance-webhook-tls',
      '-o',
      'json',
    ]);
    assert.equal(secret.code, 0, secret.stderr);
    const data = (JSON.parse(secret.stdout) as { data: Record<string, string> }).data;
    assert.deepEqual(Object.keys(data).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
    const config = await cluster.kubectl.run([
      'get',
      'validatingwebhookconfiguration',
      'drainbridge-nodemaintenance',
      '-o',
      'jsonpath={.webhooks[0].clientConfig.caBundle}',
    ]);
    assert.equal(config.stdout, data['ca.crt'], 'the caBundle is the CA of the Secret');
  });

  it('webhook test "creating NodeMaintenance for not existing node should be rejected"', async () => {
    const created = await apply('test-unexisting', 'doesNotExist');
    assert.notEqual(created.code, 0, 'refused at create');
    denied(created.stderr, 'invalid nodeName, no node with name doesNotExist found');
    const got = await cluster.kubectl.run(['get', 'nodemaintenance', 'test-unexisting']);
    assert.notEqual(got.code, 0, 'never stored');
  });

  it('webhook tests "for node already in maintenance should be rejected" and "updating NodeMaintenance with new nodeName should be rejected"', async () => {
    const first = await apply('test-first', 'node-1');
    assert.equal(first.code, 0, first.stderr);
    const second = await apply('test-second', 'node-1');
    assert.notEqual(second.code, 0);
    denied(second.stderr, 'invalid nodeName, a NodeMaintenance for node node-1 already exists');

    const patched = await cluster.kubectl.run([
      ...['patch', 'nodemaintenance', 'test-first', '--type=merge', '-p', '{"spec":{"nodeName":"node-2"}}'],
    ]);
    assert.notEqual(patched.code, 0);
    // The CRD's CEL rule or the webhook, whichever the API server asks first: NMO's words either way.
    assert.match(patched.stderr, /updating spec.NodeName isn't allowed/);

    // An update that keeps the node is let through (NMO's ValidateUpdate compares nodeName only).
    const labelled = await cluster.kubectl.run(['label', 'nodemaintenance', 'test-first', 'example.com/team=a']);
    assert.equal(labelled.code, 0, labelled.stderr);
    await waitUntil(
      'test-first taken',
      async () => {
        const got = await cluster.kubectl.run([
          'get',
          'nodemaintenance',
          'test-first',
          '-o',
          'jsonpath={.status.phase}',
        ]);
        return got.stdout === 'Succeeded';
      },
      60_000,
    );
    const deleted = await cluster.kubectl.run(['delete', 'nodemaintenance', 'test-first', '--timeout=60s']);
    assert.equal(deleted.code, 0, deleted.stderr);
  });

  it('webhook test "for master/control-plane node with potential quorum violation should be rejected": the quorum guard\'s decision and words', async () => {
    const created = await apply('test-cp', 'cp-1');
    assert.notEqual(created.code, 0);
    denied(
      created.stderr,
      'can not put master/control-plane node into maintenance at this moment, disrupting node cp-1 will violate etcd quorum: draining control-plane node cp-1 would leave 0 of 1 etcd members healthy; quorum needs 1',
    );
    assert.notEqual((await cluster.admin.getNode('cp-1')).spec?.unschedulable, true, 'cp-1 untouched');
  });

  it('bad input: a request that is no AdmissionReview gets a 400 naming what is wrong, and the webhook keeps serving', async () => {
    const url = `https://127.0.0.1:${port}/validate-nodemaintenance-medik8s-io-v1beta1-nodemaintenance`;
    const post = (body: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        import('node:https').then(({ request }) => {
          const req = request(url, { method: 'POST', rejectUnauthorized: false }, (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          });
          req.on('error', reject);
          req.end(body);
        }, reject);
      });
    const notJson = await post('{"kind": "AdmissionReview",');
    assert.equal(notJson.status, 400);
    assert.match(notJson.text, /^the body is not JSON/);
    const noRequest = await post('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}');
    assert.deepEqual(noRequest, { status: 400, text: 'the AdmissionReview has no request\n' });
    const noObject = await post(
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":"CREATE","object":{"spec":{}}}}',
    );
    assert.deepEqual(noObject, { status: 400, text: 'request.object is not a NodeMaintenance with spec.nodeName\n' });
    // Still serving: a real create goes through.
    const created = await apply('test-after-bad-input', 'node-2');
    assert.equal(created.code, 0, created.stderr);
    const deleted = await cluster.kubectl.run(['delete', 'nodemaintenance', 'test-after-bad-input', '--timeout=60s']);
    assert.equal(deleted.code, 0, deleted.stderr);
  });
});
