/**
 * A PutEvents endpoint on 127.0.0.1 for tests: lib/bus's PutEvents server (the wire protocol
 * `drainbridge run` serves to node agents) without its checks, in front of an in-process bus, so the
 * real `@aws-sdk/client-eventbridge` — in a forwarder child process, with `AWS_ENDPOINT_URL_EVENTBRIDGE`
 * pointing here — puts events on drainbridge's in-process bus (lib/bus/in-process-bus.ts), whose entry
 * checks are EventBridge's. Faults for tests: fail whole calls (HTTP 500) or fail entries
 * (ThrottlingException) for a while. Signatures are not checked here (no AWS account to check them
 * against); lib/bus/bus-endpoint.ts is the endpoint that checks them.
 */
import type { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { PutEventsError, startPutEventsServer } from '../../lib/bus/put-events-server.ts';

export interface EventBridgeEndpoint {
  /** `http://127.0.0.1:<port>`: set as AWS_ENDPOINT_URL_EVENTBRIDGE. */
  readonly url: string;
  /** PutEvents calls answered (any outcome), for tests. */
  readonly calls: readonly { readonly entries: number; readonly status: number }[];
  /** Answer every call with HTTP 500 (InternalException) until healed. */
  failCalls(): () => void;
  /** Refuse every entry with ThrottlingException (HTTP 200, FailedEntryCount > 0) until healed. */
  throttleEntries(): () => void;
  close(): Promise<void>;
}

export async function startEventBridgeEndpoint(bus: InProcessBus, port = 0): Promise<EventBridgeEndpoint> {
  const faults = { failing: false, throttling: false };
  const server = await startPutEventsServer({
    port,
    put: async (entries) => {
      if (faults.failing) throw new PutEventsError(500, 'InternalException', 'the test endpoint was told to fail');
      if (faults.throttling) {
        const refused = entries.map(() => ({ ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' }));
        return { FailedEntryCount: entries.length, Entries: refused };
      }
      return bus.putEvents(entries);
    },
  });
  const heal = (key: 'failing' | 'throttling') => () => {
    faults[key] = false;
  };
  return {
    url: server.url,
    get calls() {
      return server.calls.map((call) => ({ entries: call.entries, status: call.status }));
    },
    failCalls: () => {
      faults.failing = true;
      return heal('failing');
    },
    throttleEntries: () => {
      faults.throttling = true;
      return heal('throttling');
    },
    close: () => server.close(),
  };
}
