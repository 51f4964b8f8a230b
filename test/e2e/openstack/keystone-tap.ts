/**
 * A plain HTTP pass-through in front of the lab's Keystone, given to drainbridge as its OS_AUTH_URL, so
 * that a case sees each token drainbridge was issued (the token and its expires_at) without reaching
 * into drainbridge: which token to revoke, and whether drainbridge authenticated again after its token
 * expired or was revoked. Everything is forwarded unchanged; only the answers to `POST …/auth/tokens`
 * are read.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface IssuedToken {
  /** The token (X-Subject-Token). */
  readonly value: string;
  /** When Keystone issued it (ms, this machine's clock) and when it expires, as Keystone said. */
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface KeystoneTap {
  /** The auth URL to give drainbridge (`http://127.0.0.1:PORT/v3`). */
  readonly authUrl: string;
  /** Tokens Keystone issued through the tap, oldest first. */
  readonly issued: IssuedToken[];
  close(): Promise<void>;
}

/** Starts a tap in front of `upstreamAuthUrl` (the lab's `http://127.0.0.1:5000/v3`). */
export async function startKeystoneTap(upstreamAuthUrl: string): Promise<KeystoneTap> {
  const upstream = new URL(upstreamAuthUrl);
  const issued: IssuedToken[] = [];
  const server: Server = createServer((req, res) => {
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          const token = answer.headers['x-subject-token'];
          if (req.method === 'POST' && /\/auth\/tokens$/.test(req.url ?? '') && answer.statusCode === 201) {
            const expires = (JSON.parse(body.toString('utf8')) as { token?: { expires_at?: string } }).token
              ?.expires_at;
            if (typeof token === 'string' && expires) {
              issued.push({ value: token, issuedAt: Date.now(), expiresAt: Date.parse(expires) });
            }
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(body);
        });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    authUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
    issued,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
