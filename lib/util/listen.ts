/**
 * Starts an HTTP(S) server on host:port and hands back its URL and a close that ends open keep-alive
 * connections too — the small servers drainbridge serves (operations endpoint, admission webhook) stop on
 * SIGTERM without waiting for a client's idle connection to time out.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Listening {
  /** Where it answers, e.g. `https://127.0.0.1:9443` (an IPv6 host in brackets). */
  readonly url: string;
  close(): Promise<void>;
}

export async function listen(
  server: HttpServer | HttpsServer,
  where: { readonly host: string; readonly port: number; readonly scheme: 'http' | 'https' },
): Promise<Listening> {
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${where.scheme}://${host}:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
