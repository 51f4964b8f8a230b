/** Shared test helpers: a bare simulator (no control loops, plain HTTP) and a small JSON client. */
import { type Simulator, startSimulator } from '../../sim/index.ts';
import type { KubeObject } from '../../sim/store/types.ts';

/** A simulator with no control loops: the test sets every status itself. */
export function startBare(): Promise<Simulator> {
  return startSimulator({ controllers: false, tls: false });
}

export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** One HTTP request with a bearer token (the admin's by default). */
export async function api(
  sim: Simulator,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; contentType?: string; accept?: string } = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? sim.adminToken}` };
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  if (options.accept) headers.accept = options.accept;
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { text };
  }
  return { status: response.status, body, headers: response.headers };
}

export const PODS = { group: '', resource: 'pods' };
export const PDBS = { group: 'policy', resource: 'poddisruptionbudgets' };
export const NODES = { group: '', resource: 'nodes' };
export const NAMESPACES = { group: '', resource: 'namespaces' };

/** A pod bound to `node`, Running and Ready unless told otherwise. */
export function runningPod(
  name: string,
  options: { namespace?: string; labels?: Record<string, string>; node?: string; ready?: boolean; phase?: string } = {},
): KubeObject {
  const ready = options.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: options.namespace ?? 'default', labels: options.labels ?? { app: 'web' } },
    spec: {
      nodeName: options.node ?? 'node-1',
      containers: [{ name: 'c', image: 'nginx' }],
      terminationGracePeriodSeconds: 30,
    },
    status: {
      phase: options.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  };
}

/** A PDB with the given status (observed unless `observedGeneration` says otherwise). */
export function budget(
  name: string,
  status: { disruptionsAllowed: number; currentHealthy?: number; desiredHealthy?: number; observedGeneration?: number },
  spec: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: 'default' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } }, ...spec },
    status: { currentHealthy: 2, desiredHealthy: 1, observedGeneration: 1, expectedPods: 2, ...status },
  };
}

/** The Eviction body for `name`. */
export function eviction(name: string, deleteOptions?: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: 'default' },
  };
  if (deleteOptions) body.deleteOptions = deleteOptions;
  return body;
}
