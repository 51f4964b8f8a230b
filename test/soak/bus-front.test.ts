/**
 * The soak's stand-in for the Service in front of the replicas' bus endpoints (soak/bus-front.ts): each
 * connection goes to the next backend in turn, to the other when that one is down, and none is answered
 * when both are down.
 */
import assert from 'node:assert/strict';
import { createConnection, createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { freePort, startBusFront } from '../../soak/bus-front.ts';

/** A backend that answers every connection with its name. */
async function backend(name: string, port: number): Promise<Server> {
  const server = createServer((socket) => socket.end(name));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

/** What one connection through the front is answered ('' when it is closed without an answer). */
async function ask(url: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    let text = '';
    const socket = createConnection({ host: '127.0.0.1', port: Number(port) });
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', () => resolve(text));
    socket.on('close', () => resolve(text));
  });
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('soak bus front', () => {
  const servers: Server[] = [];
  after(async () => {
    await Promise.all(servers.filter((s) => s.listening).map(close));
  });

  it('spreads connections over both replicas, skips one that is down, answers nothing when both are', async () => {
    const ports = [await freePort(), await freePort()];
    const a = await backend('a', ports[0] as number);
    const b = await backend('b', ports[1] as number);
    servers.push(a, b);
    const front = await startBusFront(ports);
    try {
      assert.match(front.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const both = [await ask(front.url), await ask(front.url), await ask(front.url), await ask(front.url)];
      assert.deepEqual([...both].sort(), ['a', 'a', 'b', 'b']);
      await close(a);
      assert.deepEqual([await ask(front.url), await ask(front.url), await ask(front.url)], ['b', 'b', 'b']);
      await close(b);
      assert.equal(await ask(front.url), '');
    } finally {
      await front.close();
    }
  });
});
