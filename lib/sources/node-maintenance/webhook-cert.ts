/**
 * The admission webhook's certificate without cert-manager: the first replica to start makes a CA and a
 * serving certificate (lib/tls/self-signed.ts) and stores them in a Secret of drainbridge's namespace; every
 * replica (and every restart) uses that Secret, so all of them serve the certificate the API server trusts;
 * each then writes the CA into the `caBundle` of drainbridge's ValidatingWebhookConfiguration (where it differs).
 * A Secret that is unreadable as a certificate, names another Service, or expires within 30 days is replaced.
 * A creation race between replicas is settled by the API server (409: the other's Secret is read and used).
 */
import { X509Certificate } from 'node:crypto';
import { apiCodeOf, isNotFound } from '../../clients/kube/errors.ts';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import type { Logger } from '../../log/logger.ts';
import { generateWebhookCertificates, keyMatches, type WebhookCertificates } from '../../tls/self-signed.ts';

/** deploy/components/nodemaintenance-webhook's names (its Service, the Secret, the configuration). */
export const WEBHOOK_SERVICE = 'drainbridge-nodemaintenance-webhook';
export const WEBHOOK_SECRET = 'drainbridge-nodemaintenance-webhook-tls';
export const WEBHOOK_CONFIGURATION = 'drainbridge-nodemaintenance';

/** A certificate closer than this to its end is replaced at start. */
const RENEW_BEFORE_MS = 30 * 86_400_000;

interface SecretObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  type?: string;
  data?: Record<string, string>;
}

interface WebhookConfiguration {
  metadata?: { name?: string; resourceVersion?: string };
  webhooks?: { clientConfig?: { caBundle?: string; service?: { name?: string; namespace?: string } } }[];
}

/** The DNS names the API server checks for the Service in `namespace`. */
export const serviceDnsNames = (namespace: string): string[] => [
  `${WEBHOOK_SERVICE}.${namespace}.svc`,
  `${WEBHOOK_SERVICE}.${namespace}.svc.cluster.local`,
];

const decode = (value: string | undefined) => (value ? Buffer.from(value, 'base64').toString('utf8') : '');

/** The certificates a Secret holds, if they are complete, match, name the Service and are not about to end. */
export function usableCertificates(
  secret: SecretObject,
  namespace: string,
  now: Date,
): WebhookCertificates | undefined {
  const certs = {
    caCert: decode(secret.data?.['ca.crt']),
    cert: decode(secret.data?.['tls.crt']),
    key: decode(secret.data?.['tls.key']),
  };
  try {
    const [ca, leaf] = [new X509Certificate(certs.caCert), new X509Certificate(certs.cert)];
    const fresh = new Date(leaf.validTo).getTime() - now.getTime() > RENEW_BEFORE_MS;
    const names = serviceDnsNames(namespace).every((dns) => leaf.checkHost(dns, { subject: 'never' }) === dns);
    return fresh && names && leaf.checkIssued(ca) && leaf.verify(ca.publicKey) && keyMatches(leaf.publicKey, certs.key)
      ? certs
      : undefined;
  } catch {
    return undefined;
  }
}

function secretOf(namespace: string, certs: WebhookCertificates, resourceVersion?: string): SecretObject {
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  return {
    metadata: {
      name: WEBHOOK_SECRET,
      namespace,
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    type: 'kubernetes.io/tls',
    data: { 'ca.crt': b64(certs.caCert), 'tls.crt': b64(certs.cert), 'tls.key': b64(certs.key) },
  };
}

const secretPath = (namespace: string, name?: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets${name ? `/${name}` : ''}`;

async function readSecret(client: KubeHttpClient, namespace: string): Promise<SecretObject | undefined> {
  try {
    return await client.request<SecretObject>(`get secret ${namespace}/${WEBHOOK_SECRET}`, {
      method: 'GET',
      path: secretPath(namespace, WEBHOOK_SECRET),
    });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Stores new certificates: a create, or a replace of the unusable Secret at the version read. */
async function storeCertificates(
  client: KubeHttpClient,
  namespace: string,
  stored: SecretObject | undefined,
  now: Date,
): Promise<WebhookCertificates> {
  const certs = generateWebhookCertificates(serviceDnsNames(namespace), now);
  const body = secretOf(namespace, certs, stored?.metadata?.resourceVersion);
  const call = stored
    ? { method: 'PUT', path: secretPath(namespace, WEBHOOK_SECRET), body }
    : { method: 'POST', path: secretPath(namespace), body };
  await client.request(`${stored ? 'replace' : 'create'} secret ${namespace}/${WEBHOOK_SECRET}`, call);
  return certs;
}

/** The Secret's certificates, made and stored first when there are none usable. */
export async function ensureWebhookCertificates(
  client: KubeHttpClient,
  namespace: string,
  logger: Logger,
  now: Date = new Date(),
): Promise<WebhookCertificates> {
  for (let attempt = 1; ; attempt++) {
    const stored = await readSecret(client, namespace);
    const usable = stored ? usableCertificates(stored, namespace, now) : undefined;
    if (usable) return usable;
    try {
      const certs = await storeCertificates(client, namespace, stored, now);
      logger.info('admission webhook certificate made and stored', { secret: `${namespace}/${WEBHOOK_SECRET}` });
      return certs;
    } catch (error) {
      // Another replica stored one first (409): read and use it.
      if (apiCodeOf(error) !== 409 || attempt >= 3) throw error;
    }
  }
}

/** The PEM certificates of a bundle, each normalised to its base64 body (for comparison). */
function bundleCertificates(pem: string): string[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => block.replace(/-----[A-Z ]+-----|\s/g, ''));
}

/**
 * The caBundle to write so that the API server trusts `caCert`, or undefined when `current` (base64)
 * already does. `previousCa`, the CA of the certificate being replaced, stays in it: replicas that have
 * not swapped yet keep being trusted until they do (the API server accepts a server signed by any CA of
 * the bundle).
 */
export function caBundleFor(current: string | undefined, caCert: string, previousCa?: string): string | undefined {
  const trusted = bundleCertificates(Buffer.from(current ?? '', 'base64').toString('utf8'));
  const [wanted] = bundleCertificates(caCert);
  if (wanted !== undefined && trusted.includes(wanted)) return undefined;
  const keep = previousCa !== undefined && bundleCertificates(previousCa)[0] !== wanted ? previousCa : '';
  const pem = `${caCert.trimEnd()}\n${keep.trimEnd()}`.trimEnd();
  return Buffer.from(`${pem}\n`, 'utf8').toString('base64');
}

/**
 * Makes the configuration's webhooks that call drainbridge's Service trust `caCert` (keeping
 * `previousCa` beside it, see caBundleFor); false: no configuration.
 */
export async function injectCaBundle(client: KubeHttpClient, caCert: string, previousCa?: string): Promise<boolean> {
  const path = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${WEBHOOK_CONFIGURATION}`;
  let config: WebhookConfiguration;
  try {
    config = await client.request(`get validatingwebhookconfiguration ${WEBHOOK_CONFIGURATION}`, {
      method: 'GET',
      path,
    });
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
  const ours = (config.webhooks ?? []).filter((w) => w.clientConfig?.service?.name === WEBHOOK_SERVICE);
  let changed = false;
  for (const webhook of ours) {
    const caBundle = caBundleFor(webhook.clientConfig?.caBundle, caCert, previousCa);
    if (caBundle === undefined) continue;
    webhook.clientConfig = { ...webhook.clientConfig, caBundle };
    changed = true;
  }
  if (!changed) return true;
  // A replace conditional on the version read: a concurrent edit is not overwritten (409, retried).
  await client.request(`replace validatingwebhookconfiguration ${WEBHOOK_CONFIGURATION}`, {
    method: 'PUT',
    path,
    body: config,
  });
  return true;
}
