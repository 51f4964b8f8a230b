/**
 * Keeps a serving webhook's certificate current without a restart, as controller-runtime's certwatcher
 * does for webhooks whose certificate cert-manager renews: every replica re-reads the Secret every
 * 10 seconds. A Secret replaced by someone else (cert-manager, an operator's `kubectl apply`) is served
 * from then on; one deleted, damaged or within 30 days of its end is replaced first, as at start
 * (webhook-cert.ts: one replica wins, the others read its Secret). Before a replica serves a new
 * certificate it makes the configuration's caBundle trust the new CA, keeping the old one beside it, so
 * that the API server trusts replicas that have swapped and those that have not yet. A failed check is
 * logged and retried at the next one; the certificate being served stays.
 */
import { X509Certificate } from 'node:crypto';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import type { Logger } from '../../log/logger.ts';
import type { WebhookCertificates } from '../../tls/self-signed.ts';
import type { WebhookServer } from './webhook.ts';
import { ensureWebhookCertificates, WEBHOOK_SECRET } from './webhook-cert.ts';

/** controller-runtime's certwatcher polls its files this often. */
export const CERTIFICATE_CHECK_MS = 10_000;

export interface CertificateRotation {
  readonly client: KubeHttpClient;
  readonly namespace: string;
  readonly logger: Logger;
  readonly server: WebhookServer;
  /** What the server serves now. */
  readonly serving: WebhookCertificates;
  /**
   * Makes the caBundle trust `caCert` beside `previousCa`; resolves once it does (or there is no
   * configuration to write), rejects when it could not write it — then the new certificate is not served.
   */
  readonly trust: (caCert: string, previousCa: string) => Promise<void>;
  readonly intervalMs?: number;
}

export interface CertificateWatch {
  stop(): void;
}

/** One check: the Secret's usable certificates (renewed when needed); swapped in when they differ. */
async function check(rotation: CertificateRotation, serving: WebhookCertificates): Promise<WebhookCertificates> {
  const { client, namespace, logger } = rotation;
  const next = await ensureWebhookCertificates(client, namespace, logger);
  if (next.cert === serving.cert && next.key === serving.key) return serving;
  if (next.caCert !== serving.caCert) await rotation.trust(next.caCert, serving.caCert);
  rotation.server.useCertificates(next);
  const leaf = new X509Certificate(next.cert);
  logger.info('admission webhook certificate reloaded from its Secret', {
    secret: `${namespace}/${WEBHOOK_SECRET}`,
    serial: leaf.serialNumber,
    validTo: new Date(leaf.validTo).toISOString(),
  });
  return next;
}

/** Starts checking; stop() ends the checks (one in flight still finishes). */
export function watchWebhookCertificates(rotation: CertificateRotation): CertificateWatch {
  let serving = rotation.serving;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(tick, rotation.intervalMs ?? CERTIFICATE_CHECK_MS);
    timer.unref();
  };
  const tick = () => {
    check(rotation, serving)
      .then((next) => {
        serving = next;
      })
      .catch((error: unknown) => {
        rotation.logger.warn('could not check the admission webhook certificate; serving the current one', {
          secret: `${rotation.namespace}/${WEBHOOK_SECRET}`,
          error: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => {
        if (!stopped) schedule();
      });
  };
  schedule();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
