/**
 * An HTTP server speaking EventBridge's PutEvents wire protocol (AWS JSON 1.1, `POST /` with
 * `X-Amz-Target: AWSEvents.PutEvents`), so the AWS SDK's EventBridge client with a custom `endpoint`
 * puts events through it. What it does with them, and who may call, is the caller's: `authenticate`
 * (bus-endpoint.ts checks SigV4; the test endpoint in sim/eventbridge checks nothing) and `put`.
 * Answers as EventBridge does: `{ FailedEntryCount, Entries }`, or an error document whose `__type`
 * the SDK turns into the error's name.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { InvalidInput } from '../errors/index.ts';
import type { PutEventsEntry } from './envelope.ts';
import type { PutEventsOutput } from './in-process-bus.ts';
import type { SignedRequest, SigV4Result } from './sigv4.ts';

/** The largest request body read: PutEvents takes 256 KiB of entries; JSON framing stays well within this. */
export const MAX_BODY_BYTES = 1024 * 1024;
export const PUT_EVENTS_TARGET = 'AWSEvents.PutEvents';

/** A whole call refused, with the HTTP status and EventBridge's error type. */
export class PutEventsError extends Error {
  readonly status: number;
  readonly type: string;
  constructor(status: number, type: string, message: string) {
    super(message);
    this.name = 'PutEventsError';
    this.status = status;
    this.type = type;
  }
}

/** One answered call (for tests and metrics); never holds a header or a body. */
export interface PutEventsCall {
  readonly status: number;
  readonly entries: number;
  readonly failed: number;
  /** The error type of a refused call. */
  readonly error?: string;
}

export interface PutEventsServerOptions {
  readonly host?: string;
  readonly port?: number;
  /** Serve HTTPS with this certificate and key (PEM); none: plain HTTP. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Told of a connection that did not complete a TLS handshake (e.g. plain HTTP on the TLS port). */
  readonly onTlsRefused?: (refusal: { readonly reason: string; readonly remote: string }) => void;
  /** Checks the caller (the whole request, body included) before anything is parsed. None: everyone. */
  readonly authenticate?: (request: SignedRequest) => SigV4Result;
  /** Takes the entries of an authenticated call. A `PutEventsError` refuses the whole call. */
  readonly put: (entries: PutEventsEntry[]) => Promise<PutEventsOutput>;
  /** Told of every refused call (its reason; nothing of the request's headers or body). */
  readonly onRefused?: (refusal: {
    readonly status: number;
    readonly type: string;
    readonly message: string;
    readonly remote: string;
  }) => void;
}

export interface PutEventsServer {
  /** `http://<host>:<port>`, or `https://…` with `tls`. */
  readonly url: string;
  readonly calls: readonly PutEventsCall[];
  close(): Promise<void>;
}

/** Status of each refusal type (EventBridge answers 400 for signature problems, 403 for an unknown key). */
const AUTH_STATUS: Readonly<Record<string, number>> = {
  MissingAuthenticationTokenException: 403,
  UnrecognizedClientException: 403,
  IncompleteSignatureException: 400,
  InvalidSignatureException: 400,
};

function answer(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
    // Unavailable here (a replica that does not lead): the connection closes, so the caller's retry opens
    // a new one, which the Service in front may send to another replica. Kept alive, every retry came back
    // here — a node agent's end refused for 4 minutes by a follower (60-minute soak, seed 342527).
    ...(status === 503 ? { connection: 'close' } : {}),
  });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new PutEventsError(413, 'ValidationException', `the request body passes ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return out;
}

function entriesOf(body: Buffer): PutEventsEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8') || '{}');
  } catch {
    throw new PutEventsError(400, 'SerializationException', 'the request body is not JSON');
  }
  const entries = (parsed as { Entries?: unknown } | null)?.Entries;
  if (!Array.isArray(entries) || entries.some((e) => typeof e !== 'object' || e === null || Array.isArray(e))) {
    throw new PutEventsError(400, 'ValidationException', 'Entries must be a list of objects');
  }
  return entries as PutEventsEntry[];
}

/** Refuses a caller `authenticate` does not accept (before anything of the body is parsed). */
function checkCaller(
  authenticate: NonNullable<PutEventsServerOptions['authenticate']>,
  req: IncomingMessage,
  url: URL,
  body: Buffer,
): void {
  const auth = authenticate({
    method: req.method ?? '',
    path: url.pathname,
    query: url.search.replace(/^\?/, ''),
    headers: headersOf(req),
    body,
  });
  if (!auth.ok) throw new PutEventsError(AUTH_STATUS[auth.code] ?? 403, auth.code, auth.message);
}

/** Only PutEvents is served. */
function checkOperation(req: IncomingMessage, url: URL): void {
  if (req.method !== 'POST' || url.pathname !== '/' || req.headers['x-amz-target'] !== PUT_EVENTS_TARGET) {
    throw new PutEventsError(
      400,
      'UnknownOperationException',
      `only POST / with X-Amz-Target: ${PUT_EVENTS_TARGET} is served`,
    );
  }
}

/** Listens (127.0.0.1 and a free port unless told otherwise) and answers PutEvents calls. */
export async function startPutEventsServer(options: PutEventsServerOptions): Promise<PutEventsServer> {
  const calls: PutEventsCall[] = [];
  const refuse = (res: ServerResponse, req: IncomingMessage, error: PutEventsError, entries = 0) => {
    calls.push({ status: error.status, entries, failed: entries, error: error.type });
    options.onRefused?.({
      status: error.status,
      type: error.type,
      message: error.message,
      remote: req.socket.remoteAddress ?? '',
    });
    answer(res, error.status, { __type: error.type, message: error.message }, error.type);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://endpoint');
    const body = await readBody(req);
    if (options.authenticate) checkCaller(options.authenticate, req, url, body);
    checkOperation(req, url);
    const entries = entriesOf(body);
    try {
      const output = await options.put(entries);
      calls.push({ status: 200, entries: entries.length, failed: output.FailedEntryCount });
      answer(res, 200, output);
    } catch (error) {
      if (error instanceof PutEventsError) return refuse(res, req, error, entries.length);
      if (error instanceof InvalidInput)
        return refuse(res, req, new PutEventsError(400, 'ValidationException', error.message), entries.length);
      throw error;
    }
  };
  const sockets = new Set<Socket>();
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof PutEventsError) refuse(res, req, error);
      else refuse(res, req, new PutEventsError(500, 'InternalException', 'the endpoint failed to handle the call'));
    });
  };
  const server: Server = options.tls
    ? createTlsServer({ cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' }, listener)
    : createServer(listener);
  server.on('tlsClientError', (error: Error & { code?: string }, socket: Socket) => {
    // The code only (e.g. ERR_SSL_HTTP_REQUEST for plain HTTP): nothing the peer sent is repeated.
    options.onTlsRefused?.({ reason: error.code ?? 'TLS handshake failed', remote: socket.remoteAddress ?? '' });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}`,
    calls,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
