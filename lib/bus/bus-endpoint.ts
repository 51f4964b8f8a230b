/**
 * The bus endpoint of `drainbridge run`: the node agents' way onto its in-process bus when there is no
 * EventBridge. The agent's publishing path stays the one it has on AWS — the SDK's EventBridge client,
 * PutEvents batches, retries — pointed at this endpoint (DRAINBRIDGE_BUS_ENDPOINT) and signing with the
 * key of a Secret both mount (DRAINBRIDGE_BUS_KEY). What it takes, and from whom:
 *
 *  - only SigV4-signed calls with that key (sigv4.ts): unsigned, unknown key, altered body or a signature
 *    older than five minutes → the whole call refused with EventBridge's error code, nothing put;
 *  - only the node agent's events — `Maintenance Requested` / `Maintenance Ended` with source
 *    `drainbridge.requests`, a cloud `origin`, on this bus — each valid against its contract; any other
 *    entry fails alone with an ErrorCode naming the reason (as PutEvents reports a bad entry);
 *  - only while this process leads (`available`): a follower answers 503, which the SDK and the agent's
 *    queue retry, rather than putting events on a bus whose executions no longer run.
 *
 * A call is served over TLS with the certificate of a Secret (bus-tls.ts), plain HTTP only when
 * DRAINBRIDGE_BUS_PLAINTEXT=allow says so; a connection that does not speak TLS is dropped and logged.
 * A signature is taken once: the same signed call again within its five minutes is refused as a replay
 * (replay-guard.ts) — and were one to pass, every event carries its requestId and the workflow drops repeats.
 */
import { NOTICE_PROVIDERS } from '../model/notice.ts';
import type { BusServerSettings } from './bus-key.ts';
import { readServerTls, type TlsMaterial } from './bus-tls.ts';
import { CONTRACTS, type DetailType, parseDetail } from './contracts/index.ts';
import type { PutEventsResultEntry } from './entry.ts';
import type { PutEventsEntry } from './envelope.ts';
import { type InProcessBus, MAX_PUT_ENTRIES, type PutEventsOutput } from './in-process-bus.ts';
import { PutEventsError, type PutEventsServer, startPutEventsServer } from './put-events-server.ts';
import { SeenSignatures } from './replay-guard.ts';
import { EVENTBRIDGE_SIGNING_SERVICE, type SignedRequest, type SigV4Result, verifySigV4 } from './sigv4.ts';

/** What the node agent publishes: all the endpoint takes by default. */
export const NODE_AGENT_DETAIL_TYPES: readonly DetailType[] = ['Maintenance Requested', 'Maintenance Ended'];

/** The endpoint's log: warnings for refusals (never a header, a key or a body). */
export interface BusEndpointLogger {
  warn(message: string, extra: Record<string, unknown>): void;
}

export interface BusEndpointOptions {
  readonly settings: BusServerSettings;
  /** run's certificate and key, when already read (else read here from settings.tls's files). */
  readonly tls?: TlsMaterial;
  readonly bus: Pick<InProcessBus, 'putEvents' | 'busName'>;
  /** Why events cannot be taken now (e.g. another replica leads), or undefined when they can. */
  readonly available: () => string | undefined;
  readonly logger: BusEndpointLogger;
  readonly detailTypes?: readonly DetailType[];
  readonly now?: () => number;
}

type Screened = { readonly entry: PutEventsEntry } | { readonly refused: PutEventsResultEntry };

/** Whether one entry is an event the node agents may put here; the entry as passed on, or the refusal. */
export function screenEntry(entry: PutEventsEntry, busName: string, detailTypes: readonly DetailType[]): Screened {
  const detailType = entry.DetailType as DetailType;
  if (!detailTypes.includes(detailType)) {
    return {
      refused: {
        ErrorCode: 'AccessDeniedException',
        ErrorMessage: `this endpoint takes only ${detailTypes.join(', ')} (got ${JSON.stringify(entry.DetailType)})`,
      },
    };
  }
  const source = CONTRACTS[detailType].source;
  if (entry.Source !== source) {
    return {
      refused: {
        ErrorCode: 'NotAuthorizedForSourceException',
        ErrorMessage: `"${detailType}" comes from source ${source} (got ${JSON.stringify(entry.Source)})`,
      },
    };
  }
  let detail: unknown;
  try {
    detail = JSON.parse(entry.Detail ?? '');
  } catch {
    return { refused: { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail must be the JSON text of an object' } };
  }
  try {
    const valid = parseDetail(detailType, detail, 'detail') as { origin?: string };
    if (!(NOTICE_PROVIDERS as readonly string[]).includes(valid.origin ?? '')) {
      return {
        refused: {
          ErrorCode: 'AccessDeniedException',
          ErrorMessage: `detail.origin must be a cloud (${NOTICE_PROVIDERS.join(', ')}): node agents put only their notices here`,
        },
      };
    }
  } catch (error) {
    return { refused: { ErrorCode: 'InvalidArgument', ErrorMessage: (error as Error).message } };
  }
  // Only what the agent sends is passed on: the bus stamps the time and there are no resources.
  return {
    entry: {
      Source: source,
      DetailType: detailType,
      Detail: entry.Detail as string,
      EventBusName: entry.EventBusName ?? busName,
    },
  };
}

/** How often the same refusal (reason and caller) is logged: an agent with a wrong key retries every read. */
export const REFUSAL_LOG_INTERVAL_MS = 60_000;

/** Lets a key through once per interval, and says how many were held back since. */
class LogThrottle {
  readonly #last = new Map<string, { at: number; held: number }>();

  /** The number held back since the last time `key` went through, or undefined to hold this one back. */
  allow(key: string, now: number): number | undefined {
    const last = this.#last.get(key);
    if (last && now - last.at < REFUSAL_LOG_INTERVAL_MS) {
      last.held += 1;
      return undefined;
    }
    if (this.#last.size > 1000) this.#last.clear();
    this.#last.set(key, { at: now, held: 0 });
    return last?.held ?? 0;
  }
}

/** SigV4 with the shared key, then each signature once. */
function signedOnce(settings: BusServerSettings, now: () => number): (request: SignedRequest) => SigV4Result {
  const seen = new SeenSignatures();
  return (request) => {
    const at = now();
    const result = verifySigV4(request, [settings.key], { service: EVENTBRIDGE_SIGNING_SERVICE, now: at });
    if (!result.ok || result.signature === undefined || result.signedAt === undefined) return result;
    if (seen.admit(result.signature, result.signedAt, at)) return result;
    return {
      ok: false,
      code: 'InvalidSignatureException',
      message: 'this signed request was already taken: a replay (every call and every retry is signed anew)',
    };
  };
}

/** Serves the endpoint; `close()` stops it. */
export async function startBusEndpoint(options: BusEndpointOptions): Promise<PutEventsServer> {
  const { settings, bus, logger } = options;
  const detailTypes = options.detailTypes ?? NODE_AGENT_DETAIL_TYPES;
  const now = options.now ?? Date.now;
  const throttle = new LogThrottle();
  const tls = settings.tls === 'plaintext' ? undefined : (options.tls ?? readServerTls(settings.tls));
  return startPutEventsServer({
    host: settings.host,
    port: settings.port,
    ...(tls ? { tls } : {}),
    authenticate: signedOnce(settings, now),
    onTlsRefused: (refusal) => {
      if (throttle.allow(`tls|${refusal.remote}`, now()) === undefined) return;
      logger.warn('bus endpoint: connection refused, no TLS handshake (plain HTTP?)', { ...refusal });
    },
    onRefused: (refusal) => {
      const repeats = throttle.allow(`${refusal.type}|${refusal.remote}`, now());
      if (repeats !== undefined) {
        logger.warn('bus endpoint: call refused, nothing put on the bus', { ...refusal, sameSinceLastLog: repeats });
      }
    },
    put: async (entries): Promise<PutEventsOutput> => {
      const unavailable = options.available();
      if (unavailable !== undefined) throw new PutEventsError(503, 'ServiceUnavailable', unavailable);
      if (entries.length === 0 || entries.length > MAX_PUT_ENTRIES) {
        throw new PutEventsError(400, 'ValidationException', `Entries must hold 1 to ${MAX_PUT_ENTRIES} entries`);
      }
      const screened = entries.map((entry) => screenEntry(entry, bus.busName, detailTypes));
      const passed = screened.flatMap((s) => ('entry' in s ? [s.entry] : []));
      const results = passed.length > 0 ? (await bus.putEvents(passed)).Entries : [];
      let next = 0;
      const merged = screened.map((s) =>
        'entry' in s ? (results[next++] ?? { ErrorCode: 'InternalException' }) : s.refused,
      );
      screened.forEach((s, index) => {
        if (!('refused' in s)) return;
        const repeats = throttle.allow(`${s.refused.ErrorCode}|${entries[index]?.DetailType}`, now());
        if (repeats === undefined) return;
        logger.warn('bus endpoint: entry refused', {
          index,
          detailType: entries[index]?.DetailType,
          ...s.refused,
          sameSinceLastLog: repeats,
        });
      });
      return { FailedEntryCount: merged.filter((r) => r.ErrorCode !== undefined).length, Entries: merged };
    },
  });
}
