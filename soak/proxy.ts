/**
 * A TCP proxy between drainbridge and the simulator, for the faults the simulator cannot show of itself:
 * the API server gone (every connection refused by reset, open ones cut) for a while, and a restart that
 * keeps the store (every connection cut, a few seconds of refusals, then the same objects again). TLS
 * passes through untouched, so the simulator's certificate (issued for 127.0.0.1) still verifies.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface OutageProxy {
  /** `https://127.0.0.1:<port>`: the server for drainbridge's kubeconfigs. */
  readonly url: string;
  /** Cuts every connection and refuses new ones for `ms`. */
  outage(ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOutageProxy(targetUrl: string): Promise<OutageProxy> {
  const target = new URL(targetUrl);
  const open = new Set<Socket>();
  let downUntil = 0;
  const server: Server = createServer((client) => {
    if (Date.now() < downUntil) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `${target.protocol}//127.0.0.1:${port}`,
    outage: async (ms) => {
      downUntil = Date.now() + ms;
      for (const socket of [...open]) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of [...open]) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
