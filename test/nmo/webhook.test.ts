/**
 * The NodeMaintenance admission webhook (deploy/components/nodemaintenance-webhook) against
 * `drainbridge run` and the simulator, which calls validating webhooks over TLS as the API server does
 * (the configuration's caBundle, the Service's DNS name checked). deploy/overlays/run's components with this
 * one and nodemaintenance-kubevirt after it, rendered by kubectl kustomize, give what is applied: the webhook's
 * RBAC, the ValidatingWebhookConfiguration (only the Service port changed to where the test's run listens: the
 * simulator has no Service routing), the KubeVirt group's CRD and rules; objects applied with the real kubectl. Each case names the
 * test of NMO's internal/webhook/v1beta1/nodemaintenance_webhook_test.go (or its e2e test) it follows.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as connectTls } from 'node:tls';
import { parseAllDocuments, stringify } from 'yaml';
import { serviceDnsNames } from '../../lib/sources/node-maintenance/webhook-cert.ts';
import { generateWebhookCertificates, type WebhookCertificates } from '../../lib/tls/self-signed.ts';
import { findKubectl } from '../fidelity/kubectl-runner.ts';
import {
  DrainbridgeProcess,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

const ROOT = join(import.meta.dirname, '..', '..');

interface Rendered {
  kind: string;
  metadata: { name: string };
  webhooks?: { name: string; clientConfig: { service: { port?: number } } }[];
  spec?: { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } };
}

/** deploy/overlays/run's components plus the webhook and the KubeVirt group, rendered by kubectl kustomize. */
function renderRunWithWebhook(kubectl: string): Rendered[] {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-wh-'));
  const rel = (path: string) => relative(dir, join(ROOT, path));
  const components = ['run', 'nodemaintenance-webhook', 'nodemaintenance-kubevirt'];
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [rel('deploy/base')],
      components: components.map((name) => rel(`deploy/components/${name}`)),
    }),
  );
  const text = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(text).map((doc) => doc.toJSON() as Rendered);
}

/** What the test applies of the rendered overlay (the rest is the harness's, from the same files). */
const APPLIED = new Set([
  'ClusterRole/drainbridge-forwarder',
  'CustomResourceDefinition/nodemaintenances.nodemaintenance.kubevirt.io',
  'Role/drainbridge-nodemaintenance-webhook',
  'RoleBinding/drainbridge-nodemaintenance-webhook',
  'ClusterRole/drainbridge-nodemaintenance-webhook',
  'ClusterRoleBinding/drainbridge-nodemaintenance-webhook',
  'Role/drainbridge-nodemaintenance-webhook-etcd',
  'RoleBinding/drainbridge-nodemaintenance-webhook-etcd',
]);

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

const SECRET = 'drainbridge-nodemaintenance-webhook-tls';
const SERVICE_NAME = 'drainbridge-nodemaintenance-webhook.drainbridge.svc';

const secretData = (json: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries((JSON.parse(json) as { data: Record<string, string> }).data).map(([key, b64]) => [
      key,
      Buffer.from(b64, 'base64').toString('utf8'),
    ]),
  );

/** The Secret as cert-manager (or an operator's kubectl apply) writes a renewed certificate. */
function tlsSecret(certs: WebhookCertificates): string {
  const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SECRET, namespace: 'drainbridge' },
    type: 'kubernetes.io/tls',
    data: { 'ca.crt': b64(certs.caCert), 'tls.crt': b64(certs.cert), 'tls.key': b64(certs.key) },
  });
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
  /** The caBundle of each of drainbridge's webhooks, as PEM. */
  const caBundles = async (): Promise<string[]> => {
    const got = await cluster.kubectl.run([
      ...['get', 'validatingwebhookconfiguration', 'drainbridge-nodemaintenance'],
      ...['-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}'],
    ]);
    return got.stdout.split(' ').map((b64) => Buffer.from(b64, 'base64').toString('utf8'));
  };
  const narrowCaBundle = async (caCert: string) => {
    const caBundle = Buffer.from(caCert, 'utf8').toString('base64');
    const patch = [0, 1].map((index) => ({
      op: 'replace',
      path: `/webhooks/${index}/clientConfig/caBundle`,
      value: caBundle,
    }));
    const patched = await cluster.kubectl.run([
      ...['patch', 'validatingwebhookconfiguration', 'drainbridge-nodemaintenance', '--type=json'],
      ...['-p', JSON.stringify(patch)],
    ]);
    assert.equal(patched.code, 0, patched.stderr);
  };
  /** A new TLS connection to the webhook as the API server makes it: the Service's name, trusting `ca`. */
  const handshake = (ca: string) =>
    new Promise<void>((resolve, reject) => {
      const socket = connectTls({ host: '127.0.0.1', port, ca, servername: SERVICE_NAME }, () => {
        socket.end();
        resolve();
      });
      socket.on('error', reject);
    });

  before(async () => {
    const kubectl = findKubectl();
    if (!kubectl) throw new Error('this suite needs the real kubectl on PATH');
    const rendered = renderRunWithWebhook(kubectl);
    cluster = await startTestCluster(scenario());
    for (const doc of rendered)
      if (APPLIED.has(`${doc.kind}/${doc.metadata.name}`)) cluster.sim.apply(stringify(doc), 'the rendered overlay');
    const env = rendered.find((doc) => doc.kind === 'Deployment')?.spec?.template?.spec?.containers?.[0]?.env ?? [];
    const setting = (name: string) => env.find((e) => e.name === name)?.value;
    assert.equal(setting('DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK'), '0.0.0.0:9443', 'the component turns it on');
    assert.equal(setting('DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT'), 'true');
    port = await freePort();
    const config = rendered.find((doc) => doc.kind === 'ValidatingWebhookConfiguration');
    assert.deepEqual(
      config?.webhooks?.map((w) => w.name),
      ['vnodemaintenance.kb.io', 'vnodemaintenance-kubevirt.drainbridge.io'],
    );
    for (const webhook of config?.webhooks ?? []) webhook.clientConfig.service.port = port;
    const configured = await cluster.kubectl.run(['apply', '-f', '-'], { input: stringify(config) });
    assert.equal(configured.code, 0, configured.stderr);
    run = await startRun(cluster, {
      identity: 'nmo-webhook',
      env: {
        // Where the pod's port 9443 is here (the simulator calls the Service's port on 127.0.0.1).
        DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: `127.0.0.1:${port}`,
        DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT: 'true',
      },
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
      'jsonpath={.webhooks[*].clientConfig.caBundle}',
    ]);
    assert.equal(config.stdout, `${data['ca.crt']} ${data['ca.crt']}`, "both webhooks' caBundle is the Secret's CA");
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

  it('the older KubeVirt group (nodemaintenance-kubevirt after this component): the same checks on its own path', async () => {
    const kubevirt = (name: string, nodeName: string) =>
      cluster.kubectl.run(['apply', '-f', '-'], {
        input: manifest(name, nodeName).replace('nodemaintenance.medik8s.io', 'nodemaintenance.kubevirt.io'),
      });
    const unknown = await kubevirt('kv-unexisting', 'doesNotExist');
    assert.notEqual(unknown.code, 0);
    assert.match(
      unknown.stderr,
      /admission webhook "vnodemaintenance-kubevirt.drainbridge.io" denied the request: invalid nodeName, no node with name doesNotExist found/,
    );
    const first = await kubevirt('kv-first', 'node-3');
    assert.equal(first.code, 0, first.stderr);
    const second = await kubevirt('kv-second', 'node-3');
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, /a NodeMaintenance for node node-3 already exists/);
    const deleted = await cluster.kubectl.run([
      ...['delete', 'nodemaintenances.nodemaintenance.kubevirt.io', 'kv-first', '--timeout=60s'],
    ]);
    assert.equal(deleted.code, 0, deleted.stderr);
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
  it('deploy: a restarted replica serves the certificate of the Secret (replicas share it), not a new one', async () => {
    const secret = async () =>
      (
        await cluster.kubectl.run([
          'get',
          'secret',
          '-n',
          'drainbridge',
          'drainbridge-nodemaintenance-webhook-tls',
          '-o',
          'jsonpath={.data.tls\\.crt}',
        ])
      ).stdout;
    const before = await secret();
    assert.ok(before.length > 0);
    run.kill('SIGTERM');
    await run.exited;
    run = await startRun(cluster, {
      identity: 'nmo-webhook-2',
      env: { DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: `127.0.0.1:${port}`, DRAINBRIDGE_NODE_MAINTENANCE_KUBEVIRT: 'true' },
    });
    await run.waitForLog('NodeMaintenance admission webhook serving');
    assert.equal(run.logs('admission webhook certificate made and stored').length, 0, 'none made');
    assert.equal(await secret(), before);
    // The API server, trusting the caBundle written at the first start, still reaches it.
    const created = await apply('test-after-restart', 'doesNotExist');
    denied(created.stderr, 'invalid nodeName, no node with name doesNotExist found');
  });

  it('deploy: a replaced Secret (cert-manager, an operator) is served by the running replica, the caBundle following', async () => {
    const previous = secretData(
      (await cluster.kubectl.run(['get', 'secret', '-n', 'drainbridge', SECRET, '-o', 'json'])).stdout,
    );
    const next = generateWebhookCertificates(serviceDnsNames('drainbridge'));
    const replaced = await cluster.kubectl.run(['apply', '-f', '-'], { input: tlsSecret(next) });
    assert.equal(replaced.code, 0, replaced.stderr);
    await waitUntil(
      'the replica reloads the Secret',
      async () => run.logs('admission webhook certificate reloaded from its Secret').length === 1,
      30_000,
    );
    assert.equal(run.logs('admission webhook certificate made and stored').length, 0, 'the Secret used as given');
    const bundle = await caBundles();
    assert.ok(
      bundle.every((pem) => pem.includes(next.caCert.trim()) && pem.includes(previous['ca.crt']?.trim() ?? '?')),
      'the caBundle trusts the new CA, the old one kept beside it',
    );
    // New connections get the new certificate: trusted under the new CA alone, no longer under the old one.
    await handshake(next.caCert);
    await assert.rejects(handshake(previous['ca.crt'] ?? ''), /certificate/);
    // The API server trusting the new CA alone (as cert-manager's cainjector writes it) still calls it.
    await narrowCaBundle(next.caCert);
    const created = await apply('test-after-rotation', 'doesNotExist');
    denied(created.stderr, 'invalid nodeName, no node with name doesNotExist found');
  });

  it('deploy: a deleted Secret is made again by the running replica and served', async () => {
    const deleted = await cluster.kubectl.run(['delete', 'secret', '-n', 'drainbridge', SECRET]);
    assert.equal(deleted.code, 0, deleted.stderr);
    await waitUntil(
      'a new Secret made and served',
      async () => run.logs('admission webhook certificate reloaded from its Secret').length === 2,
      30_000,
    );
    const made = secretData(
      (await cluster.kubectl.run(['get', 'secret', '-n', 'drainbridge', SECRET, '-o', 'json'])).stdout,
    );
    await handshake(made['ca.crt'] ?? '');
    assert.ok((await caBundles()).every((pem) => pem.includes((made['ca.crt'] ?? '?').trim())));
    const created = await apply('test-after-remade', 'doesNotExist');
    denied(created.stderr, 'invalid nodeName, no node with name doesNotExist found');
  });
});

describe('the webhook without its RBAC (the component half applied)', () => {
  let cluster: TestCluster;
  before(async () => {
    cluster = await startTestCluster(spreadScenario(1));
  });
  after(async () => cluster?.stop());

  it('drainbridge run stops at start naming the Secret it cannot store and the Role that grants it', async () => {
    const run = new DrainbridgeProcess(
      ['run', '--kubeconfig', await cluster.kubeconfigFor('drainbridge-run'), '--metrics-address', '127.0.0.1:0'],
      { DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: `127.0.0.1:${await freePort()}` },
    );
    const exited = await run.exited;
    assert.notEqual(exited.code, 0);
    const output = run.output.join('\n');
    assert.match(
      output,
      /the NodeMaintenance webhook cannot have its certificate Secret drainbridge\/drainbridge-nodemaintenance-webhook-tls \(bind the Role drainbridge-nodemaintenance-webhook of deploy\/components\/nodemaintenance-webhook, or DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK=off\): get secret .*403 Forbidden/,
    );
  });
});
