/**
 * Alertmanager's API v2, the one call the alertmanager gate makes: the alerts it holds active now, not
 * silenced and not inhibited (`GET /api/v2/alerts?active=true&silenced=false&inhibited=false`) — what
 * Alertmanager would page about. Every answer is validated: a non-2xx, or a body that is not the API's
 * JSON, throws naming the server and what came back, so that the gate fails closed with that reason.
 *
 * Example answer (abridged):
 *   [{ "labels": { "alertname": "NodeUnhealthy", "node": "node-7" },
 *      "status": { "state": "active", "silencedBy": [], "inhibitedBy": [] },
 *      "startsAt": "2026-11-28T10:00:00.000Z", "endsAt": "2026-11-28T10:04:00.000Z", "fingerprint": "…" }]
 */
import { z } from 'zod';
import type { PrometheusAlert } from './prometheus-api.ts';

const alertsBody = z.array(
  z.object({
    labels: z.record(z.string(), z.string()),
    status: z.object({ state: z.enum(['active', 'suppressed', 'unprocessed']) }),
  }),
);

/** An Alertmanager server's API error: the reason the gate shows. */
export class AlertmanagerApiError extends Error {
  override readonly name = 'AlertmanagerApiError';
}

/** `/api/v2/alerts` under the server's own path (an Alertmanager behind a route prefix keeps it). */
function alertsUrl(server: string): URL {
  const url = new URL(server);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/v2/alerts`;
  // Alertmanager's own filters: what would page now. `unprocessed` (just received) stays in: it is active.
  for (const [key, value] of Object.entries({ active: 'true', silenced: 'false', inhibited: 'false' })) {
    url.searchParams.set(key, value);
  }
  return url;
}

/** A line of what came back, for the reason. */
function glimpse(text: string): string {
  return text.slice(0, 80).replace(/\s+/g, ' ').trim();
}

/**
 * The alerts Alertmanager would notify about now, as the alerts gate's filters read them (every one of
 * them firing: Alertmanager holds no pending alerts).
 */
export async function readUnsilencedAlerts(server: string, signal: AbortSignal): Promise<PrometheusAlert[]> {
  const url = alertsUrl(server);
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  const response = await fetch(url, { signal, headers: { accept: 'application/json' } });
  const text = await response.text();
  if (!response.ok) throw new AlertmanagerApiError(`${shown} answered ${response.status}: ${glimpse(text)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AlertmanagerApiError(
      `${shown} answered ${response.status} with a body that is not JSON (${glimpse(text)})`,
    );
  }
  const parsed = alertsBody.safeParse(body);
  if (!parsed.success)
    throw new AlertmanagerApiError(`${shown} answered something other than Alertmanager's API v2 JSON`);
  return parsed.data.map((alert) => ({ labels: alert.labels, state: 'firing' as const }));
}
