/**
 * A real HTTP receiver on loopback for webhook tests: records every POST (path, headers, JSON body, when)
 * and answers each with the next status of `statuses` (then 200).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
  readonly status: number;
  readonly at: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  readonly url: string;
  readonly posts: ReceivedPost[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(statuses: readonly number[] = []): Promise<WebhookReceiver> {
  const posts: ReceivedPost[] = [];
  const answers = [...statuses];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = answers.shift() ?? 200;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        body = { unparsable: Buffer.concat(chunks).toString('utf8') };
      }
      posts.push({ path: request.url ?? '', headers: request.headers, body, status, at: Date.now() });
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
