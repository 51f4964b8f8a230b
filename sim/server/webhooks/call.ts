/**
 * POSTs an AdmissionReview to a webhook over TLS, trusting the configuration's `caBundle` (the system
 * roots when it has none), within `timeoutSeconds` of wall-clock time (a network timeout, not simulated
 * time). `clientConfig.url` is called as given; a `service` reference is called on 127.0.0.1 at the
 * reference's port (443 by default) with the certificate checked for `<name>.<namespace>.svc`, as the
 * apiserver checks it: the simulator has no Service routing, the webhook listens on the local port.
 * The apiserver adds `?timeout=Ns` to the URL; so does this.
 */
import { request } from 'node:https';
import type { ValidatingWebhook } from './match.ts';
import { WebhookCallError } from './review.ts';

interface Target {
  url: URL;
  servername?: string;
}

function targetOf(webhook: ValidatingWebhook, timeoutSeconds: number): Target {
  const config = webhook.clientConfig ?? {};
  const service = config.service;
  let target: Target;
  if (config.url) target = { url: new URL(config.url) };
  else if (service?.name && service.namespace) {
    const url = new URL(`https://127.0.0.1:${service.port ?? 443}${service.path ?? ''}`);
    target = { url, servername: `${service.name}.${service.namespace}.svc` };
  } else throw new WebhookCallError('webhook has no clientConfig.url or service');
  target.url.searchParams.set('timeout', `${timeoutSeconds}s`);
  return target;
}

/** The webhook's parsed answer; throws WebhookCallError with the apiserver's `failed to call webhook: …`. */
export function callWebhook(webhook: ValidatingWebhook, review: unknown): Promise<unknown> {
  const timeoutSeconds = webhook.timeoutSeconds ?? 10;
  const { url, servername } = targetOf(webhook, timeoutSeconds);
  const body = JSON.stringify(review);
  const ca = webhook.clientConfig?.caBundle ? Buffer.from(webhook.clientConfig.caBundle, 'base64') : undefined;
  const fail = (why: string) => new WebhookCallError(`failed to call webhook: Post "${url.href}": ${why}`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        timeout: timeoutSeconds * 1000,
        ...(ca ? { ca } : {}),
        ...(servername ? { servername } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new WebhookCallError(`failed to call webhook: the server responded with status ${res.statusCode}`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(fail('context deadline exceeded')));
    req.on('error', (error) => reject(error instanceof WebhookCallError ? error : fail(error.message)));
    req.end(body);
  });
}
