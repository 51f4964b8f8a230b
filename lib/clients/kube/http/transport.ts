/**
 * The wire under the lean client: HTTPS (or plain HTTP) requests to the API server over one keep-alive
 * agent carrying the endpoint's TLS settings, and streamed responses for watches. Knows nothing of
 * Kubernetes beyond the Authorization header; every call takes an AbortSignal and `close()` ends
 * everything: requests in flight, open streams, pooled sockets.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { KubeEndpoint } from './endpoint.ts';

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export interface SendOptions {
  readonly body?: string;
  readonly contentType?: string;
  readonly signal: AbortSignal;
}

/** A streamed answer: `lines` yields each line of a 200 response; any other status carries its body. */
export interface StreamAnswer {
  readonly status: number;
  /** The body of a non-200 answer (read whole). */
  readonly body: string;
  /** Calls `onLine` for every line until the server ends the stream (resolves) or it breaks (rejects). */
  readonly lines: (onLine: (line: string) => void) => Promise<void>;
}

const USER_AGENT = 'drainbridge';

/**
 * Listens on `response` until `settle` is called, then lets go: a keep-alive socket keeps its last response
 * object alive, and with it whatever the listeners hold (a whole list page).
 */
function listen(
  response: IncomingMessage,
  handlers: { data: (chunk: Buffer | string) => void; end: () => void; fail: (error: Error) => void },
): () => void {
  const onClose = (): void => {
    if (!response.complete) handlers.fail(new Error('the connection was cut off'));
  };
  response.on('data', handlers.data);
  response.once('end', handlers.end);
  response.once('error', handlers.fail);
  response.once('close', onClose);
  return () => {
    response.off('data', handlers.data);
    response.off('end', handlers.end);
    response.off('error', handlers.fail);
    response.off('close', onClose);
  };
}

function readAll(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    const settle = listen(response, {
      data: (chunk) => chunks.push(chunk as Buffer),
      end: () => {
        settle();
        const text = Buffer.concat(chunks).toString('utf8');
        chunks = [];
        resolve(text);
      },
      fail: (error) => {
        settle();
        chunks = [];
        reject(error);
      },
    });
  });
}

function streamLines(response: IncomingMessage, onLine: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let pending = '';
    response.setEncoding('utf8');
    const fail = (error: Error): void => {
      settle();
      pending = '';
      reject(error);
    };
    const settle = listen(response, {
      data: (chunk) => {
        pending += chunk as string;
        let at = pending.indexOf('\n');
        while (at >= 0) {
          const line = pending.slice(0, at).trim();
          pending = pending.slice(at + 1);
          try {
            if (line) onLine(line);
          } catch (error) {
            // The consumer refused the stream (an ERROR event, a malformed line): it ends here.
            response.destroy();
            fail(error as Error);
            return;
          }
          at = pending.indexOf('\n');
        }
      },
      end: () => {
        settle();
        resolve();
      },
      fail,
    });
  });
}

export class KubeTransport {
  readonly #endpoint: KubeEndpoint;
  readonly #agent: HttpAgent;
  readonly #request: typeof httpRequest;

  constructor(endpoint: KubeEndpoint, options: { maxSockets?: number } = {}) {
    this.#endpoint = endpoint;
    const https = endpoint.server.protocol === 'https:';
    const pool = { keepAlive: true, maxSockets: options.maxSockets ?? 16 };
    this.#agent = https ? new HttpsAgent({ ...pool, ...endpoint.tls }) : new HttpAgent(pool);
    this.#request = https ? httpsRequest : httpRequest;
  }

  get server(): URL {
    return this.#endpoint.server;
  }

  /** One request; resolves with whatever status the server answered, rejects when no answer came. */
  async send(method: string, path: string, options: SendOptions): Promise<HttpAnswer> {
    const response = await this.#open(method, path, options);
    return { status: response.statusCode ?? 0, body: await readAll(response) };
  }

  /** A streaming GET (a watch): resolves once the headers are in. */
  async stream(path: string, signal: AbortSignal): Promise<StreamAnswer> {
    const response = await this.#open('GET', path, { signal });
    const status = response.statusCode ?? 0;
    if (status !== 200) return { status, body: await readAll(response), lines: async () => undefined };
    return { status, body: '', lines: (onLine) => streamLines(response, onLine) };
  }

  /** Ends every request and stream of this transport and its pooled sockets. */
  close(): void {
    this.#agent.destroy();
  }

  async #open(method: string, path: string, options: SendOptions): Promise<IncomingMessage> {
    options.signal.throwIfAborted();
    const server = this.#endpoint.server;
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
    const authorization = await this.#endpoint.authorization();
    if (authorization) headers.authorization = authorization;
    if (options.body !== undefined) {
      headers['content-type'] = options.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(options.body));
    }
    const request: RequestOptions = {
      protocol: server.protocol,
      hostname: server.hostname.replace(/^\[|\]$/g, ''),
      port: server.port || (server.protocol === 'https:' ? 443 : 80),
      path: `${server.pathname.replace(/\/$/, '')}${path}`,
      method,
      headers,
      agent: this.#agent,
      signal: options.signal,
    };
    return new Promise((resolve, reject) => {
      const sent = this.#request(request, resolve);
      sent.once('error', reject);
      sent.end(options.body);
    });
  }
}
