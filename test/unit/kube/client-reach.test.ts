/**
 * Issue 12, item 3 (client level): before the server has ever answered, a refused connection is
 * ClusterUnreachable at once (no retries: it is configuration); once it has answered, the same refusal is
 * the cluster failing after it worked — a TransientError, retried, worded without the raw errno.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../lib/clients/kube/client.ts';
import { describeNoAnswer, noAnswerKind } from '../../../lib/clients/kube/reach.ts';
import { ClusterUnreachable, TransientError } from '../../../lib/errors/index.ts';
import { generateServingCertificate } from '../../../sim/tls.ts';

function clientFor(port: number, retries: number[]): KubeClient {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'not-a-secret-test-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeClient(kubeConfig, {
    timeoutMs: 500,
    retry: { attempts: 4, baseDelayMs: 1, maxDelayMs: 2, onRetry: (_error, attempt) => retries.push(attempt) },
  });
}

async function listen(): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', resourceVersion: '1' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe('issue 12 item 3: first contact fails fast, later failures are retried', () => {
  test('refused on the first call: ClusterUnreachable, not retried, a sentence naming the server', async () => {
    const { server, port } = await listen();
    await close(server); // the port is free now: connections are refused
    const retries: number[] = [];
    const error = await clientFor(port, retries)
      .getNode('n')
      .catch((caught: unknown) => caught);
    assert.ok(error instanceof ClusterUnreachable, String(error));
    assert.deepEqual(retries, [], 'no retry');
    assert.equal(
      error.message,
      `get node n: cannot reach the Kubernetes API server at http://127.0.0.1:${port}: nothing listens there (connection refused): check the server address and context in your kubeconfig (or DRAINBRIDGE_KUBE_SERVER), and that the cluster is up`,
    );
  });

  test('refused after the server answered: TransientError, retried, no raw errno in the message', async () => {
    const { server, port } = await listen();
    const retries: number[] = [];
    const client = clientFor(port, retries);
    assert.equal((await client.getNode('n')).metadata?.name, 'n');
    await close(server);
    const error = await client.getNode('n').catch((caught: unknown) => caught);
    assert.ok(error instanceof TransientError, String(error));
    assert.deepEqual(retries, [1, 2, 3], 'retried up to the attempts');
    assert.equal(
      error.message,
      `get node n: cannot reach the Kubernetes API server at http://127.0.0.1:${port}: nothing listens there (connection refused)`,
    );
    assert.doesNotMatch(error.message, /ECONNREFUSED/);
  });

  test('the kinds of no answer', () => {
    const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    assert.equal(noAnswerKind(withCode('ECONNREFUSED')), 'refused');
    assert.equal(noAnswerKind(withCode('ENOTFOUND')), 'unknown-host');
    assert.equal(noAnswerKind(withCode('DEPTH_ZERO_SELF_SIGNED_CERT')), 'tls');
    assert.equal(noAnswerKind(withCode('ERR_TLS_CERT_ALTNAME_INVALID')), 'tls');
    assert.equal(noAnswerKind(Object.assign(new Error('aborted'), { name: 'AbortError' })), 'timeout');
    assert.equal(noAnswerKind(withCode('ECONNRESET')), 'reset');
    assert.match(
      describeNoAnswer('timeout', 'https://k:6443', { firstContact: true, timeoutMs: 10_000 }),
      /cannot reach the Kubernetes API server at https:\/\/k:6443: it did not answer within 10 s/,
    );
  });
});

/**
 * Issue 24: a connection cut mid-run (the soak's API restart) was reported as "the kubeconfig belongs to
 * another cluster": Node's error for a socket closed during the TLS handshake is ECONNRESET with "TLS" in
 * its message. A cut says it was cut; a certificate of another cluster still says so.
 */
describe('issue 24: a cut connection is not a certificate of another cluster', () => {
  const cert = generateServingCertificate();
  const other = generateServingCertificate();
  const skip = cert && other ? false : 'needs openssl';

  function tlsClientFor(port: number, caPem: string): KubeClient {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(caPem).toString('base64') }],
      users: [{ name: 'u', token: 'not-a-secret-test-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return new KubeClient(kubeConfig, { timeoutMs: 2_000, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
  }

  /** An API server (serving `cert`) behind a switch that, when on, cuts every connection at once. */
  async function cuttable(): Promise<{ port: number; cut: () => void; close: () => Promise<void> }> {
    const api = createHttpsServer({ key: cert?.key, cert: cert?.cert }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', resourceVersion: '1' } }));
    });
    let cutting = false;
    const sockets = new Set<Socket>();
    const front = createNetServer((socket) => {
      if (cutting) return void socket.destroy();
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      api.emit('connection', socket);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    return {
      port: (front.address() as AddressInfo).port,
      cut: () => {
        cutting = true;
        for (const socket of sockets) socket.destroy();
      },
      close: () => new Promise((resolve) => front.close(() => resolve())),
    };
  }

  test('cut after the server answered: TransientError saying the connection was cut', { skip }, async () => {
    const server = await cuttable();
    const client = tlsClientFor(server.port, cert?.cert ?? '');
    assert.equal((await client.getNode('n')).metadata?.name, 'n');
    server.cut();
    const error = await client.getNode('n').catch((caught: unknown) => caught);
    await server.close();
    assert.ok(error instanceof TransientError, String(error));
    assert.equal(
      error.message,
      `get node n: cannot reach the Kubernetes API server at https://127.0.0.1:${server.port}: the connection was cut before it answered`,
    );
  });

  test('cut on the first contact: says it was cut, not that the kubeconfig is of another cluster', {
    skip,
  }, async () => {
    const server = await cuttable();
    server.cut();
    const error = await tlsClientFor(server.port, cert?.cert ?? '')
      .getNode('n')
      .catch((caught: unknown) => caught);
    await server.close();
    assert.ok(error instanceof Error, String(error));
    assert.match(error.message, /the connection was cut/);
    assert.doesNotMatch(error.message, /another cluster/);
  });

  test('a certificate the kubeconfig does not trust: the kubeconfig of another cluster', { skip }, async () => {
    const server = await cuttable();
    const error = await tlsClientFor(server.port, other?.cert ?? '')
      .getNode('n')
      .catch((caught: unknown) => caught);
    await server.close();
    assert.ok(error instanceof ClusterUnreachable, String(error));
    assert.match(error.message, /the kubeconfig belongs to another cluster, or the cluster was re-created/);
  });

  test("Node's error for a socket closed mid-handshake is a reset", () => {
    const mid = Object.assign(
      new Error('Client network socket disconnected before secure TLS connection was established'),
      {
        code: 'ECONNRESET',
      },
    );
    assert.equal(noAnswerKind(mid), 'reset');
  });
});
