/**
 * A small HTTP server on 127.0.0.1 for the fake metadata services: real sockets (the agent's axios
 * client reaches it as it reaches 169.254.169.254), a log of every request, and a stop that also ends
 * requests still hanging (GCE's wait_for_change).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The status answered (set once answered). */
  status?: number;
}

export interface FakeReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export type FakeHandler = (request: RecordedRequest, signal: AbortSignal) => FakeReply | Promise<FakeReply>;

function headersOf(message: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(message.headers)) {
    if (value !== undefined) out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

async function readBody(message: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export class FakeHttpServer {
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #stopping = new AbortController();

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** Listens on 127.0.0.1 (a free port unless `port` is given). */
  static async start(handler: FakeHandler, port = 0): Promise<FakeHttpServer> {
    let fake: FakeHttpServer | undefined;
    const server = createServer((req, res) => void fake?.serve(handler, req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    fake = new FakeHttpServer(server, `http://127.0.0.1:${bound}`);
    return fake;
  }

  private async serve(handler: FakeHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: headersOf(req),
      body: await readBody(req),
    };
    this.requests.push(request);
    try {
      const reply = await handler(request, this.#stopping.signal);
      request.status = reply.status;
      res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
      res.end(reply.body ?? '');
    } catch (error) {
      request.status = 500;
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(String(error));
    }
  }

  /** Requests to a path (and method). */
  requestsTo(path: string, method?: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path && (method === undefined || r.method === method));
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
