/**
 * Starts the NodeMaintenance admission webhook: its certificate from the shared Secret (made when there
 * is none), the HTTPS server, then the CA written into drainbridge's ValidatingWebhookConfiguration. The
 * Secret unreadable or unwritable stops the start (the error names the call; the component's Role grants
 * it); the configuration missing or not writable is logged — the webhook then is not called, and the
 * controller refuses the same NodeMaintenances after the fact (docs/nodemaintenance.md). While serving, the
 * certificate follows the Secret (webhook-rotation.ts).
 */

import { apiCodeOf } from '../../clients/kube/errors.ts';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import { DrainbridgeError } from '../../errors/index.ts';
import type { Logger } from '../../log/logger.ts';
import type { NodeMaintenanceFlavor } from './types.ts';
import { startWebhookServer, type WebhookServer, webhookPath } from './webhook.ts';
import { ensureWebhookCertificates, injectCaBundle, WEBHOOK_CONFIGURATION, WEBHOOK_SECRET } from './webhook-cert.ts';
import { watchWebhookCertificates } from './webhook-rotation.ts';

export interface WebhookStart {
  readonly client: KubeHttpClient;
  /** drainbridge's namespace: the Secret's and the Service's. */
  readonly namespace: string;
  readonly address: { readonly host: string; readonly port: number };
  readonly flavors: readonly NodeMaintenanceFlavor[];
  readonly logger: Logger;
}

/** Makes the caBundle trust `caCert` (and `previousCa`); false when it could not be written (logged). */
async function writeCaBundle(start: WebhookStart, caCert: string, previousCa?: string): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (!(await injectCaBundle(start.client, caCert, previousCa)))
        start.logger.warn('no ValidatingWebhookConfiguration for the NodeMaintenance webhook: it is not called', {
          configuration: WEBHOOK_CONFIGURATION,
          repair: 'add deploy/components/nodemaintenance-webhook to the overlay',
        });
      return true;
    } catch (error) {
      // Another replica wrote it meanwhile (409): read it again.
      if (apiCodeOf(error) === 409 && attempt < 3) continue;
      start.logger.error('could not write the caBundle of the NodeMaintenance webhook: the API server cannot call it', {
        configuration: WEBHOOK_CONFIGURATION,
        error: error instanceof Error ? error.message : String(error),
      });
      return false;
    }
  }
}

export async function serveNodeMaintenanceWebhook(start: WebhookStart): Promise<WebhookServer> {
  const certificates = await ensureWebhookCertificates(start.client, start.namespace, start.logger).catch(
    (error: unknown) => {
      // No `cause`: the CLI would present the API's refusal in its place, without the repair; the repair
      // first, as the CLI cuts a long line.
      const why = error instanceof Error ? error.message : String(error);
      throw new DrainbridgeError(
        `the NodeMaintenance webhook cannot have its certificate Secret ${start.namespace}/${WEBHOOK_SECRET} (bind the Role drainbridge-nodemaintenance-webhook of deploy/components/nodemaintenance-webhook, or DRAINBRIDGE_NODE_MAINTENANCE_WEBHOOK=off): ${why}`,
      );
    },
  );
  const server = await startWebhookServer({ ...start, ...start.address, certificates });
  await writeCaBundle(start, certificates.caCert);
  const watch = watchWebhookCertificates({
    ...start,
    server,
    serving: certificates,
    trust: async (caCert, previousCa) => {
      if (!(await writeCaBundle(start, caCert, previousCa)))
        throw new Error('the caBundle does not trust the new CA yet: the new certificate is not served');
    },
  });
  start.logger.info('NodeMaintenance admission webhook serving', {
    url: server.url,
    paths: start.flavors.map(webhookPath),
  });
  return {
    ...server,
    close: async () => {
      watch.stop();
      await server.close();
    },
  };
}
