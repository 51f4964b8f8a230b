/**
 * The Prometheus HTTP API, the two calls the gates make: the alerts its rules hold (`GET /api/v1/alerts`,
 * what kured reads) and an instant query (`GET /api/v1/query`). Every answer is validated: a 5xx, a body
 * that is not the API's JSON or `status: "error"` throws, naming the server and what came back, so that
 * the gate fails closed with that reason.
 */
import { z } from 'zod';

const labels = z.record(z.string(), z.string());

const alertsBody = z.object({
  status: z.literal('success'),
  data: z.object({
    alerts: z.array(z.object({ labels, state: z.enum(['firing', 'pending', 'inactive']) })),
  }),
});

export type PrometheusAlert = z.output<typeof alertsBody>['data']['alerts'][number];

const sampleValue = z.tuple([z.number(), z.string()]);

const queryBody = z.object({
  status: z.literal('success'),
  data: z.discriminatedUnion('resultType', [
    z.object({ resultType: z.literal('vector'), result: z.array(z.object({ metric: labels, value: sampleValue })) }),
    z.object({ resultType: z.literal('scalar'), result: sampleValue }),
    z.object({ resultType: z.literal('matrix'), result: z.array(z.object({ metric: labels })) }),
    z.object({ resultType: z.literal('string'), result: sampleValue }),
  ]),
});

export type QueryResult = z.output<typeof queryBody>['data'];

/** A Prometheus server's API error: the reason the gate shows. */
export class PrometheusApiError extends Error {
  override readonly name = 'PrometheusApiError';
}

/** `url` with `path` appended to its own path (a Prometheus behind a route prefix keeps it). */
function endpoint(base: string, path: string, query?: Record<string, string>): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
  return url;
}

/** Where the server is, without credentials a URL may carry. */
function shown(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

async function getJson<S extends z.ZodType>(url: URL, schema: S, signal: AbortSignal): Promise<z.output<S>> {
  const response = await fetch(url, { signal, headers: { accept: 'application/json' } });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new PrometheusApiError(
      `${shown(url)} answered ${response.status} with a body that is not JSON (${text.slice(0, 80).replace(/\s+/g, ' ')})`,
    );
  }
  const apiError = z.object({ status: z.literal('error'), error: z.string() }).safeParse(body);
  if (apiError.success)
    throw new PrometheusApiError(`${shown(url)} answered ${response.status}: ${apiError.data.error}`);
  if (!response.ok) throw new PrometheusApiError(`${shown(url)} answered ${response.status}`);
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new PrometheusApiError(`${shown(url)} answered something other than the Prometheus API's JSON`);
  return parsed.data;
}

/** Every alert Prometheus's rules hold now (pending and firing). */
export async function readAlerts(server: string, signal: AbortSignal): Promise<PrometheusAlert[]> {
  return (await getJson(endpoint(server, '/api/v1/alerts'), alertsBody, signal)).data.alerts;
}

/** An instant query's result. */
export async function queryInstant(server: string, expr: string, signal: AbortSignal): Promise<QueryResult> {
  return (await getJson(endpoint(server, '/api/v1/query', { query: expr }), queryBody, signal)).data;
}
