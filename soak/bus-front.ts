/**
 * The soak's stand-in for the Service in front of the `drainbridge run` replicas' bus endpoints
 * (deploy/components/run-bus): each node agent connection goes to the next replica in turn, to the other
 * when that one is down (as kube-proxy drops a dead pod's endpoint). TLS passes through untouched, so the
 * agents verify the replicas' own certificate. A replica that does not lead refuses the call; the agent's
 * retry lands on the other.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface BusFront {
  /** `https://127.0.0.1:<port>`: the agents' --bus-endpoint. */
  readonly url: string;
  close(): Promise<void>;
}

/** A free port on 127.0.0.1 (each replica's --bus-address keeps its port across its restarts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

function pipe(client: Socket, ports: readonly number[], first: number, open: Set<Socket>): void {
  const tryPort = (attempt: number): void => {
    if (attempt >= ports.length) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port: ports[(first + attempt) % ports.length] as number });
    let connected = false;
    upstream.once('error', () => {
      if (!connected) tryPort(attempt + 1);
    });
    upstream.once('connect', () => {
      connected = true;
      open.add(upstream);
      upstream.on('close', () => open.delete(upstream));
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    });
  };
  tryPort(0);
}

export async function startBusFront(ports: readonly number[]): Promise<BusFront> {
  const open = new Set<Socket>();
  let next = 0;
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    pipe(client, ports, next++ % ports.length, open);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
