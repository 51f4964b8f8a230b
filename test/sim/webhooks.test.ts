/**
 * Validating admission webhooks: a real HTTPS webhook server in the test, a ValidatingWebhookConfiguration
 * with its caBundle (by URL and by service reference), AdmissionReview v1 in, the apiserver's refusal
 * out; failurePolicy Fail and Ignore; timeoutSeconds; rules that do not match call nothing.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Simulator } from '../../sim/index.ts';
import { generateServingCertificate } from '../../sim/tls.ts';
import { api, startBare } from './helpers.ts';

interface Review {
  request: {
    uid: string;
    operation: string;
    kind: { kind: string };
    resource: { resource: string };
    subResource?: string;
    name?: string;
    namespace?: string;
    object: { metadata?: { labels?: Record<string, string> } } | null;
    oldObject: { metadata?: { labels?: Record<string, string> } } | null;
    userInfo: { username: string };
  };
}

const certificate = generateServingCertificate(['guard.webhooks.svc']);
const skip = certificate ? false : 'openssl is needed to make the webhook server a certificate';
const CONFIGS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

describe('validating admission webhooks', { skip }, () => {
  let sim: Simulator;
  let server: Server;
  let port = 0;
  const seen: Review['request'][] = [];
  let delayMs = 0;

  before(async () => {
    sim = await startBare();
    server = createServer({ key: certificate?.key, cert: certificate?.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
        seen.push(review.request);
        const labels = review.request.object?.metadata?.labels ?? {};
        const allowed = labels.deny !== 'yes';
        const response = {
          uid: review.request.uid,
          allowed,
          ...(allowed
            ? {}
            : { status: { code: 403, message: `pod ${review.request.name ?? ''} is labelled deny=yes` } }),
        };
        setTimeout(
          () => res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response })),
          delayMs,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await sim?.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });
  afterEach(async () => {
    seen.length = 0;
    delayMs = 0;
    await api(sim, 'DELETE', `${CONFIGS}/guard`);
  });

  const caBundle = (): string => Buffer.from(certificate?.cert ?? '').toString('base64');
  const config = (webhook: Record<string, unknown>) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'guard' },
    webhooks: [
      {
        name: 'pods.guard.example.io',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        clientConfig: { url: `https://127.0.0.1:${port}/validate`, caBundle: caBundle() },
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        ...webhook,
      },
    ],
  });
  const pod = (name: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'busybox:1.37' }] },
  });
  const createPod = (name: string, labels?: Record<string, string>) =>
    api(sim, 'POST', '/api/v1/namespaces/default/pods', { body: pod(name, labels) });

  it("refuses with the webhook's status, worded as the apiserver; allows what it allows; gets AdmissionReview v1", async () => {
    assert.equal((await api(sim, 'POST', CONFIGS, { body: config({}) })).status, 201);
    const denied = await createPod('bad', { deny: 'yes' });
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body.message,
      'admission webhook "pods.guard.example.io" denied the request: pod bad is labelled deny=yes',
    );
    assert.equal((await api(sim, 'GET', '/api/v1/namespaces/default/pods/bad')).status, 404, 'not stored');
    assert.equal((await createPod('good')).status, 201);
    const [first] = seen;
    assert.equal(first?.operation, 'CREATE');
    assert.equal(first?.kind.kind, 'Pod');
    assert.equal(first?.resource.resource, 'pods');
    assert.equal(first?.namespace, 'default');
    assert.equal(first?.userInfo.username, 'kubernetes-admin');
    assert.equal(first?.oldObject, null);

    const patched = await api(sim, 'PATCH', '/api/v1/namespaces/default/pods/good', {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { deny: 'yes' } } },
    });
    assert.equal(patched.status, 403, 'the patched object is what the webhook judges');
    const update = seen.at(-1);
    assert.equal(update?.operation, 'UPDATE');
    assert.deepEqual(update?.oldObject?.metadata?.labels, {});
  });

  it('rules that do not match call nothing (another resource, a subresource, DELETE)', async () => {
    await api(sim, 'POST', CONFIGS, { body: config({}) });
    await api(sim, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', labels: { deny: 'yes' } } },
    });
    assert.equal((await createPod('x1')).status, 201);
    seen.length = 0;
    assert.equal((await api(sim, 'DELETE', '/api/v1/namespaces/default/pods/x1')).status, 200);
    assert.deepEqual(seen, []);
  });

  it('a service reference is called on its port with the certificate checked for <name>.<namespace>.svc', async () => {
    const byService = config({
      clientConfig: {
        service: { namespace: 'webhooks', name: 'guard', path: '/validate', port },
        caBundle: caBundle(),
      },
    });
    await api(sim, 'POST', CONFIGS, { body: byService });
    const denied = await createPod('bad-2', { deny: 'yes' });
    assert.equal(denied.status, 403);
    assert.match(String(denied.body.message), /denied the request: pod bad-2 is labelled deny=yes/);
    await api(sim, 'DELETE', `${CONFIGS}/guard`);
    // The certificate names guard.webhooks.svc (and 127.0.0.1): another service's name does not verify.
    const wrongName = config({
      clientConfig: {
        service: { namespace: 'webhooks', name: 'other', path: '/validate', port },
        caBundle: caBundle(),
      },
    });
    await api(sim, 'POST', CONFIGS, { body: wrongName });
    const refused = await createPod('bad-3', { deny: 'yes' });
    assert.equal(refused.status, 500);
    assert.match(
      String(refused.body.message),
      /failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/validate\?timeout=10s": .*other\.webhooks\.svc/,
    );
  });

  it('failurePolicy Fail refuses with 500 when the webhook cannot be called; Ignore lets the request through', async () => {
    const unreachable = { clientConfig: { url: 'https://127.0.0.1:1/validate', caBundle: caBundle() } };
    await api(sim, 'POST', CONFIGS, { body: config(unreachable) });
    const failed = await createPod('f1');
    assert.equal(failed.status, 500);
    assert.equal(failed.body.reason, 'InternalError');
    assert.match(
      String(failed.body.message),
      /^Internal error occurred: failed calling webhook "pods\.guard\.example\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/validate\?timeout=10s": /,
    );
    await api(sim, 'DELETE', `${CONFIGS}/guard`);
    await api(sim, 'POST', CONFIGS, { body: config({ ...unreachable, failurePolicy: 'Ignore' }) });
    assert.equal((await createPod('f2')).status, 201);
  });

  it('a CA that did not sign the certificate is a failed call, as is an answer later than timeoutSeconds', async () => {
    const other = generateServingCertificate();
    const wrongCa = {
      clientConfig: {
        url: `https://127.0.0.1:${port}/validate`,
        caBundle: Buffer.from(other?.cert ?? '').toString('base64'),
      },
    };
    await api(sim, 'POST', CONFIGS, { body: config(wrongCa) });
    assert.equal((await createPod('t1')).status, 500);
    await api(sim, 'DELETE', `${CONFIGS}/guard`);
    await api(sim, 'POST', CONFIGS, { body: config({ timeoutSeconds: 1 }) });
    delayMs = 1500;
    const slow = await createPod('t2');
    assert.equal(slow.status, 500);
    assert.match(String(slow.body.message), /context deadline exceeded$/);
  });
});
