/**
 * The operations endpoint: `/healthz` (the process answers), `/readyz` (caches synced; 503 with the
 * reasons otherwise), `/metrics` (Prometheus text). Plain node:http, no framework.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { listen } from '../../util/listen.ts';

export interface OpsServerOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  /** Reasons the process is not ready (empty: ready). */
  readonly notReady: () => string[];
}

export interface OpsServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz' || path === '/livez') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const reasons = options.notReady();
      res.writeHead(reasons.length === 0 ? 200 : 503, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ ready: reasons.length === 0, reasons })}\n`);
      return;
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error)),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz, /readyz or /metrics\n');
  });
  return listen(server, { host: options.host, port: options.port, scheme: 'http' });
}
