/**
 * How the simulator ends a watch: at its `timeoutSeconds` with events still on their way, when the client
 * goes away, and when the simulator stops with connections it has not yet seen a request on. A write
 * to an ended response must be impossible (Node reports it as an uncaught `ERR_STREAM_WRITE_AFTER_END`,
 * which crashed test files at random), and `stop()` must not wait for a client to give up.
 */
import assert from 'node:assert/strict';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { connect } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { waitUntil } from '../support/wait.ts';

const CONFIGMAPS = { group: '', resource: 'configmaps' };

function configMap(name: string) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } };
}

interface OpenWatch {
  readonly request: ClientRequest;
  readonly response: IncomingMessage;
  /** The event types seen until the server ended the stream. */
  readonly events: Promise<string[]>;
}

/** A watch over TLS, as every client of the simulator talks to it (TLS makes a write's completion asynchronous). */
async function openWatch(sim: Simulator, path: string): Promise<OpenWatch> {
  let sent: ClientRequest | undefined;
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    sent = request(
      `${sim.url}${path}`,
      { ca: sim.caPem, headers: { authorization: `Bearer ${sim.adminToken}` } },
      resolve,
    );
    sent.on('error', reject).end();
  });
  response.setEncoding('utf8');
  let text = '';
  response.on('data', (chunk: string) => {
    text += chunk;
  });
  const events = new Promise<string[]>((resolve, reject) => {
    response.on('end', () =>
      resolve(
        text
          .split('\n')
          .filter(Boolean)
          .map((line) => (JSON.parse(line) as { type: string }).type),
      ),
    );
    response.on('error', reject);
  });
  return { request: sent as ClientRequest, response, events };
}

/** Blocks the event loop (no sleep: nothing else runs), so that timers due meanwhile fire in one batch. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the point is that the loop cannot turn
  }
}

describe('simulator watch lifecycle', () => {
  let sim: Simulator | undefined;
  const uncaught: unknown[] = [];
  const record = (error: unknown): void => void uncaught.push(error);

  afterEach(async () => {
    process.off('uncaughtException', record);
    uncaught.length = 0;
    await sim?.stop();
    sim = undefined;
  });

  it('a watch that times out while an event is being delivered ends cleanly: nothing is written after the end', async () => {
    sim = await startSimulator({ controllers: false });
    process.on('uncaughtException', record);
    const watch = await openWatch(sim, '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1');
    assert.equal(watch.response.statusCode, 200);
    // The server armed its 1 s end timer before answering; this one is due just after it. With the loop
    // blocked past both, they fire back to back: the end first, then a change the watch must not write.
    const store = sim.store;
    sim.clock.setTimeout(() => store.create(CONFIGMAPS, configMap('late')), 1000);
    blockFor(1100);
    assert.deepEqual(await watch.events, [], 'the stream ended at its timeout without the late change');
    // Let the server finish its side (an error from a write after end would be emitted on the next tick).
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(uncaught, [], 'no uncaught error on the server side');
  });

  it('a client that goes away: its watch is released, and later changes are written nowhere', async () => {
    const started = await startSimulator({ controllers: false });
    sim = started;
    process.on('uncaughtException', record);
    const watch = await openWatch(sim, '/api/v1/namespaces/default/configmaps?watch=true');
    watch.events.catch(() => undefined);
    assert.equal(sim.faults.openWatches({ resources: ['configmaps'] }), 1);
    watch.request.destroy();
    await waitUntil(
      'the server noticed the client leave',
      () => started.faults.openWatches({ resources: ['configmaps'] }) === 0,
      10_000,
    );
    for (let i = 0; i < 5; i++) sim.store.create(CONFIGMAPS, configMap(`after-${i}`));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sim.store.watchers(), 0, 'no watcher left in the store');
    assert.deepEqual(uncaught, []);
  });

  it('stop() ends open watches and does not wait for connections that have sent no request yet', async () => {
    sim = await startSimulator({ controllers: false });
    assert.ok(sim.url.startsWith('https://'));
    // A TCP connection to the TLS port that never starts its handshake, as a client caught mid-connect.
    const { port } = new URL(sim.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    const stopping = sim.stop();
    sim = undefined;
    const outcome = await Promise.race([
      stopping.then(() => 'stopped'),
      new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 10_000).unref()),
    ]);
    assert.equal(outcome, 'stopped', 'stop() closed the half-open connection instead of waiting for it');
    await closed;
  });

  it('a watch asked of a stopped store ends at once instead of staying open for ever', async () => {
    sim = await startSimulator({ controllers: false });
    // Requests already being served when the store closes (the HTTP server is still up here).
    sim.store.close();
    const watch = await openWatch(sim, '/api/v1/namespaces/default/configmaps?watch=true');
    watch.request.setTimeout(10_000, () => watch.request.destroy(new Error('the watch stayed open')));
    assert.deepEqual(await watch.events, []);
  });
});
