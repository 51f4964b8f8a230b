/**
 * A PutEvents endpoint on 127.0.0.1 speaking EventBridge's wire protocol (AWS JSON 1.1,
 * `X-Amz-Target: AWSEvents.PutEvents`), so the real `@aws-sdk/client-eventbridge` — in a forwarder
 * child process, with `AWS_ENDPOINT_URL_EVENTBRIDGE` pointing here — puts events on drainbridge's
 * in-process bus (lib/bus/in-process-bus.ts), whose entry checks are EventBridge's. Faults for tests:
 * fail whole calls (HTTP 500 / unreachable) or fail entries (ThrottlingException) for a while.
 * Signatures are not checked (no AWS account here); only PutEvents is served.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InProcessBus, PutEventsEntry } from '../../lib/bus/in-process-bus.ts';

export interface EventBridgeEndpoint {
  /** `http://127.0.0.1:<port>`: set as AWS_ENDPOINT_URL_EVENTBRIDGE. */
  readonly url: string;
  /** PutEvents calls answered (any outcome), for tests. */
  readonly calls: { readonly entries: number; readonly status: number }[];
  /** Answer every call with HTTP 500 (InternalException) until healed. */
  failCalls(): () => void;
  /** Refuse every entry with ThrottlingException (HTTP 200, FailedEntryCount > 0) until healed. */
  throttleEntries(): () => void;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startEventBridgeEndpoint(bus: InProcessBus, port = 0): Promise<EventBridgeEndpoint> {
  const calls: { entries: number; status: number }[] = [];
  const faults = { failing: false, throttling: false };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const target = req.headers['x-amz-target'];
    const text = await readBody(req);
    if (target !== 'AWSEvents.PutEvents') {
      json(res, 400, {
        __type: 'UnknownOperationException',
        message: `only PutEvents is served (got ${String(target)})`,
      });
      return;
    }
    const { Entries = [] } = JSON.parse(text || '{}') as { Entries?: PutEventsEntry[] };
    if (faults.failing) {
      calls.push({ entries: Entries.length, status: 500 });
      json(res, 500, { __type: 'InternalException', message: 'the test endpoint was told to fail' });
      return;
    }
    if (faults.throttling) {
      calls.push({ entries: Entries.length, status: 200 });
      const refused = Entries.map(() => ({ ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' }));
      json(res, 200, { FailedEntryCount: Entries.length, Entries: refused });
      return;
    }
    try {
      const output = await bus.putEvents(Entries);
      calls.push({ entries: Entries.length, status: 200 });
      json(res, 200, output);
    } catch (error) {
      calls.push({ entries: Entries.length, status: 400 });
      json(res, 400, {
        __type: 'ValidationException',
        message: error instanceof Error ? error.message : String(error),
      });
    }
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => json(res, 500, { __type: 'InternalException', message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const heal = (key: 'failing' | 'throttling') => () => {
    faults[key] = false;
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    failCalls: () => {
      faults.failing = true;
      return heal('failing');
    },
    throttleEntries: () => {
      faults.throttling = true;
      return heal('throttling');
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
