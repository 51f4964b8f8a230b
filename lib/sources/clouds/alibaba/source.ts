/**
 * The node agent's ECS source: the active system events polled from the instance metadata service. Every
 * event read from this instance's metadata concerns this node. The service needs no token or header; a
 * 404 is "no events", other failures are retried and then unreadable (the agent's Unreadability).
 */
import type { AxiosInstance } from 'axios';
import { callWithRetry, createMetadataHttp, type MetadataRetry, send, statusError } from '../http.ts';
import type { LoopContext, SourceLoop } from '../loop.ts';
import { type Notice, type ParsedDocument, parseJsonText } from '../notice.ts';
import { parseEcsSystemEvents } from './parse.ts';

export const ACTIVE_SYSTEM_EVENTS_PATH = '/latest/maintenance/active-system-events';

export interface EcsClientOptions {
  /** `http://100.100.100.200` on ECS; a fake server in tests. */
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly retry?: MetadataRetry;
  readonly http?: AxiosInstance;
}

/** Reads the active system events' text; undefined for a 404. */
export async function readActiveSystemEvents(
  options: EcsClientOptions,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const http = options.http ?? createMetadataHttp();
  const request = {
    method: 'GET' as const,
    url: `${options.baseUrl}${ACTIVE_SYSTEM_EVENTS_PATH}`,
    timeoutMs: options.timeoutMs,
    ...(signal ? { signal } : {}),
  };
  return callWithRetry(
    async () => {
      const response = await send(http, request);
      if (response.status === 404) return undefined;
      if (response.status !== 200) throw statusError(request, response);
      return response.body;
    },
    options.retry,
    signal,
  );
}

class SystemEventsSource implements SourceLoop {
  readonly source = 'alibaba-system-events';
  readonly intervalMs: number;
  readonly #options: EcsClientOptions;

  constructor(options: EcsClientOptions, intervalMs: number) {
    this.#options = { ...options, http: options.http ?? createMetadataHttp() };
    this.intervalMs = intervalMs;
  }

  async read(signal: AbortSignal): Promise<ParsedDocument> {
    const text = await readActiveSystemEvents(this.#options, signal);
    return parseEcsSystemEvents(text === undefined ? undefined : parseJsonText(this.source, text));
  }

  async mine(notices: readonly Notice[]): Promise<Notice[]> {
    return [...notices];
  }
}

/** The ECS sources: the active system events, always. */
export function alibabaSources(context: LoopContext): SourceLoop[] {
  const { alibaba, timeoutMs, pollSeconds } = context.config;
  return [new SystemEventsSource({ baseUrl: alibaba.baseUrl, timeoutMs }, pollSeconds * 1000)];
}
