/**
 * The NodeMaintenance webhook's pure parts: NMO's admission decision (internal/webhook/v1beta1/
 * nodemaintenance_webhook.go: its checks, order and messages), the AdmissionReview read, and whether a
 * stored certificate Secret is fit to serve, and the caBundle a certificate rotation writes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadForwarderSettings } from '../../../lib/sources/forwarder/settings.ts';
import {
  admissionRefusal,
  admissionResponse,
  parseAdmissionReview,
} from '../../../lib/sources/node-maintenance/admission.ts';
import {
  caBundleFor,
  serviceDnsNames,
  usableCertificates,
} from '../../../lib/sources/node-maintenance/webhook-cert.ts';
import { generateWebhookCertificates } from '../../../lib/tls/self-signed.ts';

const review = (request: Record<string, unknown>) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request,
});
const nm = (nodeName: string) => ({ spec: { nodeName } });
const NODE = { metadata: { name: 'node-1' } };

describe("NMO's admission decision", () => {
  it('create: the node first, then the duplicate, then quorum — the first reason wins', () => {
    const create = parseAdmissionReview(review({ uid: 'u', operation: 'CREATE', object: nm('node-1') }));
    assert.ok(typeof create !== 'string');
    const quorum = { code: 'ControlPlaneQuorum' as const, reason: 'would leave 0 of 1 etcd members healthy' };
    assert.equal(
      admissionRefusal(create, { node: undefined, maintainedNodes: ['node-1'], quorum }),
      'invalid nodeName, no node with name node-1 found',
    );
    assert.equal(
      admissionRefusal(create, { node: NODE, maintainedNodes: ['node-1'], quorum }),
      'invalid nodeName, a NodeMaintenance for node node-1 already exists',
    );
    assert.equal(
      admissionRefusal(create, { node: NODE, maintainedNodes: ['node-2'], quorum }),
      'can not put master/control-plane node into maintenance at this moment, disrupting node node-1 will violate etcd quorum: would leave 0 of 1 etcd members healthy',
    );
    assert.equal(admissionRefusal(create, { node: NODE, maintainedNodes: ['node-2'], quorum: undefined }), undefined);
  });

  it('update: only a changed nodeName is refused; delete is allowed', () => {
    const update = (from: string, to: string) =>
      parseAdmissionReview(review({ uid: 'u', operation: 'UPDATE', object: nm(to), oldObject: nm(from) }));
    const renamed = update('node-1', 'node-2');
    const same = update('node-1', 'node-1');
    assert.ok(typeof renamed !== 'string' && typeof same !== 'string');
    assert.equal(admissionRefusal(renamed), "updating spec.NodeName isn't allowed");
    assert.equal(admissionRefusal(same), undefined);
    const deleted = parseAdmissionReview(review({ uid: 'u', operation: 'DELETE', object: null, oldObject: nm('n') }));
    assert.ok(typeof deleted !== 'string');
    assert.equal(admissionRefusal(deleted), undefined);
  });

  it('answers as controller-runtime denies: allowed false, code 403, reason Forbidden, the message', () => {
    assert.deepEqual(admissionResponse('u1', 'no'), {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u1', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no' } },
    });
    assert.deepEqual(admissionResponse('u2', undefined).response, { uid: 'u2', allowed: true });
  });

  it('bad input: what is not an AdmissionReview for a NodeMaintenance is named', () => {
    assert.equal(parseAdmissionReview(null), 'expected an admission.k8s.io/v1 AdmissionReview');
    assert.equal(
      parseAdmissionReview({ ...review({}), apiVersion: 'admission.k8s.io/v1beta1' }),
      'expected an admission.k8s.io/v1 AdmissionReview',
    );
    assert.equal(parseAdmissionReview(review({ operation: 'CREATE' })), 'the AdmissionReview request has no uid');
    assert.equal(parseAdmissionReview(review({ uid: 'u' })), 'the AdmissionReview request has no operation');
    assert.equal(
      parseAdmissionReview(review({ uid: 'u', operation: 'CREATE', object: { spec: { nodeName: 7 } } })),
      'request.object is not a NodeMaintenance with spec.nodeName',
    );
    assert.equal(
      parseAdmissionReview(review({ uid: 'u', operation: 'UPDATE', object: nm('a'), oldObject: [] })),
      'request.oldObject is not a NodeMaintenance with spec.nodeName',
    );
  });
});

describe("the webhook's certificate Secret", () => {
  const NOW = new Date('2026-11-28T09:00:00Z');
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const secretOf = (c: { caCert: string; cert: string; key: string }) => ({
    data: { 'ca.crt': b64(c.caCert), 'tls.crt': b64(c.cert), 'tls.key': b64(c.key) },
  });

  it('used when complete, matching, for the Service and not near its end; replaced otherwise', () => {
    const good = generateWebhookCertificates(serviceDnsNames('drainbridge'), NOW);
    assert.deepEqual(usableCertificates(secretOf(good), 'drainbridge', NOW), good);
    assert.equal(
      usableCertificates(secretOf(good), 'other', NOW),
      undefined,
      'another namespace: another Service name',
    );
    const other = generateWebhookCertificates(serviceDnsNames('drainbridge'), NOW);
    assert.equal(
      usableCertificates(secretOf({ ...good, key: other.key }), 'drainbridge', NOW),
      undefined,
      'key mixed up',
    );
    assert.equal(
      usableCertificates(secretOf({ ...good, caCert: other.caCert }), 'drainbridge', NOW),
      undefined,
      'CA mixed up',
    );
    const ending = generateWebhookCertificates(serviceDnsNames('drainbridge'), NOW, 20);
    assert.equal(usableCertificates(secretOf(ending), 'drainbridge', NOW), undefined, 'ends within 30 days');
    assert.equal(usableCertificates({ data: { 'tls.crt': 'bm90IGEgY2VydA==' } }, 'drainbridge', NOW), undefined);
  });
});

describe('the caBundle across a certificate rotation', () => {
  const NOW = new Date('2026-03-01T00:00:00Z');
  const old = generateWebhookCertificates(serviceDnsNames('drainbridge'), NOW);
  const next = generateWebhookCertificates(serviceDnsNames('drainbridge'), NOW);
  const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
  const pems = (bundle: string | undefined) =>
    Buffer.from(bundle ?? '', 'base64')
      .toString('utf8')
      .match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);

  it('at start: the CA alone; nothing to write when the bundle already trusts it', () => {
    assert.deepEqual(pems(caBundleFor(undefined, old.caCert)), [old.caCert.trim()]);
    assert.deepEqual(
      pems(caBundleFor(b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), old.caCert)),
      [old.caCert.trim()],
    );
    assert.equal(caBundleFor(b64(old.caCert), old.caCert), undefined);
    // Trusted already, whatever else the bundle holds (cert-manager's cainjector, a rotation before).
    assert.equal(caBundleFor(b64(`${next.caCert}${old.caCert}`), old.caCert), undefined);
  });

  it('a new CA: written first with the old one kept beside it, so replicas not yet swapped stay trusted', () => {
    assert.deepEqual(pems(caBundleFor(b64(old.caCert), next.caCert, old.caCert)), [
      next.caCert.trim(),
      old.caCert.trim(),
    ]);
    assert.deepEqual(pems(caBundleFor(b64(old.caCert), next.caCert, next.caCert)), [next.caCert.trim()]);
  });
});

describe('DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK', () => {
  it('off by default; host:port serves it; anything else is refused naming the setting', () => {
    assert.equal(loadForwarderSettings({}).webhookAddress, undefined);
    assert.deepEqual(loadForwarderSettings({ DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: '0.0.0.0:9443' }).webhookAddress, {
      host: '0.0.0.0',
      port: 9443,
    });
    assert.throws(
      () => loadForwarderSettings({ DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: '9443' }),
      /DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK: must be off or host:port, e.g. 0.0.0.0:9443/,
    );
  });
});
