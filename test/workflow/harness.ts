/**
 * Runs the packaged state machines (workflow/definitions.json) in the embedded executor against the
 * Kubernetes API simulator, as drainbridge's ServiceAccount under deploy/rbac.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lib/config/index.ts';
import { type EmbeddedOptions, EmbeddedRuntime } from '../../lib/embedded/runtime.ts';
import type { MaintenanceRequestedEvent } from '../../lib/events/contracts.ts';
import { type DrainSim, startDrainSim } from '../drain/harness.ts';

export interface WorkflowSim extends DrainSim {
  readonly runtime: EmbeddedRuntime;
  /** Outcome and request events seen on the bus, in order. */
  readonly busEvents: { detailType: string; detail: Record<string, unknown> }[];
}

export async function startWorkflowSim(
  scenario: string | Record<string, unknown>,
  options: { env?: Record<string, string>; speed?: number; runtime?: Partial<EmbeddedOptions> } = {},
): Promise<WorkflowSim> {
  const drainSim = await startDrainSim(scenario, { speed: options.speed ?? 200 });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-wf-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, drainSim.sim.kubeconfig(await drainSim.sim.tokenFor('drainbridge/drainbridge')));
    const config = loadConfig({ KUBECONFIG: kubeconfig, ...options.env });
    const busEvents: WorkflowSim['busEvents'] = [];
    const runtime = await EmbeddedRuntime.create({
      config,
      retryIntervalMs: 20,
      waitMs: 0,
      // The tasks read the simulator's clock, so per-pod backoffs run at the simulator's speed.
      now: () => new Date(drainSim.sim.clock.now()),
      onBusEvent: (detailType, detail) => busEvents.push({ detailType, detail: detail as Record<string, unknown> }),
      ...options.runtime,
    });
    return {
      ...drainSim,
      runtime,
      busEvents,
      stop: async () => {
        runtime.stop();
        await drainSim.stop();
      },
    };
  } catch (error) {
    await drainSim.stop();
    throw error;
  }
}

export function maintenanceRequested(
  node: string,
  overrides: Partial<MaintenanceRequestedEvent> = {},
): MaintenanceRequestedEvent {
  return {
    version: '1',
    requestId: `req-${node}`,
    requester: 'test@example.com',
    origin: 'manual',
    target: { nodeName: node },
    reason: 'workflow test',
    drain: { ignoreDaemonSets: true, deleteEmptyDirData: true },
    ...overrides,
  };
}

/** drainbridge's ServiceAccount as the simulator's request log names it. */
export const DRAINBRIDGE_USER = 'system:serviceaccount:drainbridge:drainbridge';

/** A `Maintenance Ended` detail for `node` (same requestId scheme as `maintenanceRequested`). */
export function maintenanceEnded(node: string, requestId = `req-${node}`): {
  version: '1';
  requestId: string;
  requester: string;
  origin: 'manual';
  target: { nodeName: string };
} {
  return { version: '1', requestId, requester: 'test@example.com', origin: 'manual', target: { nodeName: node } };
}

/** Successful writes by drainbridge since `mark` (a `sim.requestLog.mark()`). */
export function writesSince(w: WorkflowSim, mark: number): { verb: string; resource: string; name: string }[] {
  return w.sim.requestLog
    .writes({ since: mark, user: DRAINBRIDGE_USER })
    .map((record) => ({ verb: record.verb, resource: record.resource, name: record.name }));
}

/** Successful evictions by drainbridge since `mark`, as pod keys (namespace/name), in request order. */
export function evictionsSince(w: WorkflowSim, mark = 0): string[] {
  return w.sim.requestLog
    .writes({ since: mark, user: DRAINBRIDGE_USER, resource: 'pods' })
    .filter((record) => record.subresource === 'eviction')
    .map((record) => `${record.namespace}/${record.name}`);
}

/** Waits (real time, polling every 5 ms) until `check` holds; fails naming `what` after `limitMs`. */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${limitMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
