/**
 * A PutEvents endpoint on 127.0.0.1 for the real `@aws-sdk/client-eventbridge` (AWS JSON 1.1,
 * `X-Amz-Target: AWSEvents.PutEvents`), feeding drainbridge's in-process bus, with the failures PutEvents
 * has: whole calls failing (HTTP 500 InternalException), entries refused in an HTTP 200 (partial failure:
 * `FailedEntryCount` > 0, ThrottlingException / InternalFailure), and a permanent refusal
 * (AccessDeniedException). No signature is checked: there is no AWS account here.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EVENTBRIDGE_CLIENT_DEFAULTS } from '../../lib/bus/eventbridge-publisher.ts';
import type { InProcessBus, PutEventsEntry } from '../../lib/bus/in-process-bus.ts';

export interface PutEventsCall {
  readonly entries: readonly string[];
  /** HTTP status answered, and the entries refused in it. */
  readonly status: number;
  readonly refused: number;
}

export interface EventBridgeEndpoint {
  readonly url: string;
  readonly calls: PutEventsCall[];
  /** The next `times` calls answer HTTP 500 InternalException. */
  failCalls(times: number): void;
  /** In the next `times` calls, every entry is refused with `code` (HTTP 200, FailedEntryCount). */
  refuseEntries(times: number, code?: string): void;
  /** From now on every call is refused with 400 AccessDeniedException (a missing IAM permission). */
  denyAll(): void;
  /** An SDK client for this endpoint. */
  client(): EventBridgeClient;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
  res.end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `bus()` is the bus entries go to (a getter: the embedded runtime creates its bus after the endpoint exists). */
export async function startEventBridgeEndpoint(bus: () => InProcessBus): Promise<EventBridgeEndpoint> {
  const calls: PutEventsCall[] = [];
  const faults = { failing: 0, refusing: 0, refusalCode: 'ThrottlingException', denied: false };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { Entries = [] } = JSON.parse((await bodyOf(req)) || '{}') as { Entries?: PutEventsEntry[] };
    const types = Entries.map((entry) => String(entry.DetailType));
    if (faults.denied) {
      calls.push({ entries: types, status: 400, refused: Entries.length });
      send(res, 400, { __type: 'AccessDeniedException', message: 'not authorized to perform events:PutEvents' });
    } else if (faults.failing > 0) {
      faults.failing--;
      calls.push({ entries: types, status: 500, refused: Entries.length });
      send(res, 500, { __type: 'InternalException', message: 'injected: internal failure' });
    } else if (faults.refusing > 0) {
      faults.refusing--;
      calls.push({ entries: types, status: 200, refused: Entries.length });
      const refused = Entries.map(() => ({ ErrorCode: faults.refusalCode, ErrorMessage: 'injected: refused' }));
      send(res, 200, { FailedEntryCount: Entries.length, Entries: refused });
    } else {
      const output = await bus().putEvents(Entries);
      calls.push({ entries: types, status: 200, refused: output.FailedEntryCount });
      send(res, 200, output);
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { __type: 'InternalException', message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    calls,
    failCalls: (times) => {
      faults.failing = times;
    },
    refuseEntries: (times, code = 'ThrottlingException') => {
      faults.refusing = times;
      faults.refusalCode = code;
    },
    denyAll: () => {
      faults.denied = true;
    },
    client: () =>
      new EventBridgeClient({
        ...EVENTBRIDGE_CLIENT_DEFAULTS,
        endpoint: url,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'AKIDTESTONLY', secretAccessKey: 'test-only-not-a-secret' },
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
