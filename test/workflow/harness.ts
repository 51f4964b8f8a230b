/**
 * Runs the packaged state machines (state-machines/definitions.json) in the embedded executor against the
 * Kubernetes API simulator, as drainbridge's ServiceAccount under deploy/base/rbac.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import type { TaskCall } from '../../embedded/executor.ts';
import { type EmbeddedOptions, EmbeddedRuntime } from '../../embedded/runtime.ts';
import type { MaintenanceRequestedEvent } from '../../lib/bus/contracts/contracts.ts';
import { type EvacuationObject, evacuationName } from '../../lib/clients/kube/paths.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { type DrainSim, startDrainSim } from '../drain/harness.ts';

export interface WorkflowSim extends DrainSim {
  readonly runtime: EmbeddedRuntime;
  /** Outcome and request events seen on the bus, in order. */
  readonly busEvents: { detailType: string; detail: Record<string, unknown> }[];
  /** Every task call of every execution, in order (outputs and error names). */
  readonly taskCalls: TaskCall[];
}

export async function startWorkflowSim(
  scenario: string | Record<string, unknown>,
  options: {
    env?: Record<string, string>;
    speed?: number;
    runtime?: Partial<EmbeddedOptions>;
    /** The kubeconfig drainbridge uses, given its ServiceAccount token (default: straight to the simulator). */
    kubeconfigFor?: (sim: DrainSim['sim'], token: string) => Promise<string>;
  } = {},
): Promise<WorkflowSim> {
  const drainSim = await startDrainSim(scenario, { speed: options.speed ?? 200 });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'drainbridge-wf-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const token = await drainSim.sim.tokenFor('drainbridge/drainbridge');
    const text = options.kubeconfigFor
      ? await options.kubeconfigFor(drainSim.sim, token)
      : drainSim.sim.kubeconfig(token);
    writeFileSync(kubeconfig, text);
    const config = loadConfig({ KUBECONFIG: kubeconfig, ...options.env });
    const busEvents: WorkflowSim['busEvents'] = [];
    const taskCalls: TaskCall[] = [];
    const runtime = await EmbeddedRuntime.create({
      config,
      retryIntervalMs: 20,
      // Wait states on a timestamp (the start of a request with notBefore) wait on the simulator's clock.
      waitClock: drainSim.sim.clock,
      // The tasks read the simulator's clock, so per-pod backoffs run at the simulator's speed.
      now: () => new Date(drainSim.sim.clock.now()),
      onBusEvent: (detailType, detail) => busEvents.push({ detailType, detail: detail as Record<string, unknown> }),
      ...options.runtime,
      onTask: (call) => {
        taskCalls.push(call);
        options.runtime?.onTask?.(call);
      },
    });
    return {
      ...drainSim,
      runtime,
      busEvents,
      taskCalls,
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
export function maintenanceEnded(
  node: string,
  requestId = `req-${node}`,
): {
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

/** The node as the cluster admin reads it. */
export function readNodeAsAdmin(w: WorkflowSim, name: string): Promise<V1Node> {
  return w.admin.core.readNode({ name });
}

/** The request's Evacuation record (as the admin reads it). */
export function readRecord(w: WorkflowSim, requestId: string): Promise<EvacuationObject> {
  return w.admin.getEvacuation(evacuationName(requestId));
}

/** The simulator's clock plus `seconds`, as an ISO 8601 instant (deadlines in simulated time). */
export function simInstant(w: WorkflowSim, seconds: number): string {
  return new Date(w.sim.clock.now() + seconds * 1000).toISOString();
}

/** Bus events of one detail-type for one request. */
export function eventsOf(w: WorkflowSim, detailType: string, requestId: string): Record<string, unknown>[] {
  return w.busEvents
    .filter((event) => event.detailType === detailType && event.detail.requestId === requestId)
    .map((event) => event.detail);
}

/** The States error that ended an execution (the interpreter wraps it in an ExecutionError's `cause`). */
export function failureOf(outcome: { ok: true } | { ok: false; error: Error }): { name: string; message: string } {
  if (outcome.ok) return { name: '(succeeded)', message: '' };
  const cause = outcome.error.cause;
  return cause instanceof Error ? { name: cause.name, message: cause.message } : outcome.error;
}

/** Opens WORKFLOW_SCENARIO's spare nodes, so node-1's pods have somewhere to go (one at a time: the PDB). */
export async function openSpareNodes(w: WorkflowSim): Promise<void> {
  for (const name of ['node-2', 'node-3']) await w.admin.patchNode(name, { spec: { unschedulable: false } });
}
