/**
 * The fault-injection suite's world: the packaged state machines run embedded (the very definitions and
 * Lambda handlers that deploy) against the Kubernetes API simulator, as drainbridge's ServiceAccount under
 * deploy/base/rbac, with the simulator's clock fast, Step Functions' retry waits shortened and the Kubernetes
 * client's timeout short — so a scenario with faults takes a second or two. Faults come from the
 * simulator itself: admission hooks for writes (errors, delays, conflicts), `sim.faults` for reads and
 * watches. Every scenario ends by asserting the safety invariants (test/support/invariants.ts).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { EmbeddedOptions } from '../../embedded/runtime.ts';
import type { AdmissionRequest } from '../../sim/index.ts';
import { StatusError } from '../../sim/index.ts';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.ts';
import { type InvariantOptions, type WatchedRun, watchInvariants } from '../support/invariants.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import {
  eventsOf,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  startWorkflowSim,
  type WorkflowSim,
} from '../workflow/harness.ts';

export { BLOCKED_SCENARIO, IDLE_NODES_SCENARIO, WORKFLOW_SCENARIO } from '../workflow/scenario.ts';
export { eventsOf, failureOf, maintenanceEnded, maintenanceRequested };

/** Simulated seconds per real second: a 5 s PDB backoff is 17 ms. */
export const FAULT_SPEED = 300;
/** The Kubernetes client's per-call timeout in the suite: a hung call ends fast. */
export const CLIENT_TIMEOUT_MS = 300;

export interface FaultWorld extends WorkflowSim {
  readonly invariants: WatchedRun;
  /** The TLS proxy drainbridge talks through (network faults per call kind), when the scenario asked for it. */
  readonly proxy: FaultProxy | undefined;
}

export interface WorldOptions {
  readonly env?: Record<string, string>;
  readonly runtime?: Partial<EmbeddedOptions>;
  /** Invariant options beyond the limit (taken from DRAINBRIDGE_MAX_HELD_NODES, default 1). */
  readonly invariants?: Omit<InvariantOptions, 'maxHeldNodes'>;
  /** Put the fault proxy between drainbridge and the simulator. */
  readonly throughProxy?: boolean;
  /** Simulated seconds per real second (FAULT_SPEED unless a scenario times real waits against the clock). */
  readonly speed?: number;
}

export async function startFaultWorld(
  scenario: string | Record<string, unknown>,
  options: WorldOptions = {},
): Promise<FaultWorld> {
  let proxy: FaultProxy | undefined;
  const w = await startWorkflowSim(scenario, {
    speed: options.speed ?? FAULT_SPEED,
    ...(options.throughProxy
      ? {
          kubeconfigFor: async (sim, token) => {
            proxy = await startFaultProxy(sim);
            return proxy.kubeconfig(token);
          },
        }
      : {}),
    ...(options.env ? { env: options.env } : {}),
    runtime: {
      retryIntervalMs: 10,
      kubeClient: { timeoutMs: CLIENT_TIMEOUT_MS, retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20 } },
      ...options.runtime,
    },
  });
  const maxHeldNodes = Number(options.env?.DRAINBRIDGE_MAX_HELD_NODES ?? 1);
  const invariants = watchInvariants(w.sim, { maxHeldNodes, ...options.invariants });
  return {
    ...w,
    invariants,
    proxy,
    stop: async () => {
      invariants.stop();
      await w.stop();
      await proxy?.close();
    },
  };
}

export interface ScenarioOptions extends WorldOptions {
  /** The simulated cluster (a scenario name or object); WORKFLOW_SCENARIO's shape by default. */
  readonly cluster: string | Record<string, unknown>;
  /** Nodes the scenario's "people" cordon or uncordon themselves: their cordon is theirs to judge. */
  readonly touchedByPeople?: readonly string[];
}

/**
 * One fault scenario: a test named `name` that starts a world, runs `body` (the faults and what the
 * outcome must name), then asserts every safety invariant. Time-boxed: a scenario that hangs fails.
 */
export function scenario(name: string, options: ScenarioOptions, body: (w: FaultWorld) => Promise<void>): void {
  it(name, { timeout: 60_000 }, async () => {
    const w = await startFaultWorld(options.cluster, options);
    try {
      await body(w);
      await w.runtime.settle();
      w.invariants.assertHeld({ touchedByPeople: options.touchedByPeople ?? [] });
    } finally {
      await w.stop();
    }
  });
}

// ---- what a scenario waits for and asserts -------------------------------------------------------------

/** Starts an evacuation of `node` and returns its execution. */
export async function evacuate(
  w: FaultWorld,
  node: string,
  overrides: Parameters<typeof maintenanceRequested>[1] = {},
) {
  const requestId = overrides.requestId ?? `req-${node}`;
  await w.runtime.put('Maintenance Requested', maintenanceRequested(node, overrides));
  const execution = w.runtime.executionsFor(requestId).at(-1);
  assert.ok(execution, `an Evacuate execution started for ${requestId}`);
  return execution;
}

/** Starts a Restore of `requestId` on `node` and returns its execution. */
export async function restore(w: FaultWorld, node: string, requestId = `req-${node}`) {
  await w.runtime.put('Maintenance Ended', maintenanceEnded(node, requestId));
  const execution = w.runtime.executions.filter((e) => e.machine === 'restore' && e.requestId === requestId).at(-1);
  assert.ok(execution, `a Restore execution started for ${requestId}`);
  return execution;
}

type Tracked = Awaited<ReturnType<typeof evacuate>>;

/**
 * The evacuation succeeded and said so once (Evacuation Succeeded). Its outcome is its chain's last: a
 * request that waited in line long enough continues as new before it drains (lib/workflow/history-budget.ts).
 */
export async function expectSucceeded(w: FaultWorld, execution: Tracked): Promise<void> {
  const { outcome } = await w.runtime.chainOf(execution);
  assert.equal(outcome.ok, true, `expected success: ${failureOf(outcome).name}: ${failureOf(outcome).message}`);
  assert.equal(eventsOf(w, 'Evacuation Succeeded', execution.requestId ?? '').length, 1, 'one Evacuation Succeeded');
}

/** The evacuation failed, and its Evacuation Failed event names the cause: `errorName` and `message`. */
export async function expectFailed(
  w: FaultWorld,
  execution: Tracked,
  errorName: string,
  message: RegExp,
): Promise<Record<string, unknown>> {
  const { outcome } = await w.runtime.chainOf(execution);
  assert.equal(failureOf(outcome).name, 'EvacuationFailed', `expected a failure, got ${failureOf(outcome).name}`);
  const [failed] = eventsOf(w, 'Evacuation Failed', execution.requestId ?? '');
  assert.ok(failed, 'Evacuation Failed published');
  const error = failed.error as { name: string; message: string };
  assert.equal(error.name, errorName, `the outcome names ${errorName}: ${error.name}: ${error.message}`);
  assert.match(error.message, message);
  return failed;
}

/** The execution ended with the States error `name` (and its cause matches `message`). */
export async function expectEndedWith(execution: Tracked, name: string, message?: RegExp): Promise<void> {
  const failure = failureOf(await execution.outcome);
  assert.equal(failure.name, name, `${failure.name}: ${failure.message}`);
  if (message) assert.match(failure.message, message);
}

/** Waits until the pod branch waits on the PDB (the drain is under way and blocked). */
export async function untilBlockedByPdb(w: FaultWorld): Promise<void> {
  await waitUntil('the pod branch is blocked by the PDB', () =>
    w.taskCalls.some((call) => call.error?.name === 'NotYetDone' && /PodDisruptionBudget/.test(call.error.message)),
  );
}

/** drainbridge's successful evictions, as pod keys. */
export function evictions(w: FaultWorld, since = 0): string[] {
  return w.sim.requestLog
    .writes({ since, user: DRAINBRIDGE_SA, resource: 'pods' })
    .filter((r) => r.subresource === 'eviction')
    .map((r) => `${r.namespace}/${r.name}`);
}

/** Opens node-2 and node-3 of WORKFLOW_SCENARIO, as a person would. */
export async function openSpareNodes(w: FaultWorld): Promise<void> {
  for (const name of ['node-2', 'node-3']) await w.admin.patchNode(name, { spec: { unschedulable: false } });
}

// ---- faults ------------------------------------------------------------------------------------------

export interface WriteMatch {
  readonly verb?: AdmissionRequest['verb'];
  readonly resource?: string;
  /** '' for the main resource. */
  readonly subresource?: string;
  readonly name?: string;
  /** Only drainbridge's writes by default. */
  readonly user?: string;
  /** A predicate on the body (e.g. the patch that sets the phase). */
  readonly body?: (body: unknown) => boolean;
}

function matchesWrite(match: WriteMatch, request: AdmissionRequest): boolean {
  if (request.dryRun) return false;
  if ((match.user ?? DRAINBRIDGE_SA) !== request.user.username) return false;
  if (match.verb && match.verb !== request.verb) return false;
  if (match.resource && match.resource !== request.resource) return false;
  if (match.subresource !== undefined && match.subresource !== (request.subresource ?? '')) return false;
  if (match.name && match.name !== request.name) return false;
  return !match.body || match.body(request.body);
}

export interface InjectedFault {
  /** How many requests it answered (or delayed). */
  readonly hits: () => number;
  remove(): void;
}

/**
 * Answers the next `times` matching writes (Infinity: all) with `code` — 500 InternalError, 503, 429
 * TooManyRequests without a budget cause, 409 Conflict — instead of applying them.
 */
export function failWrites(
  w: FaultWorld,
  match: WriteMatch,
  code: number,
  times = Number.POSITIVE_INFINITY,
): InjectedFault {
  let hits = 0;
  const reasons: Record<number, string> = { 409: 'Conflict', 429: 'TooManyRequests', 503: 'ServiceUnavailable' };
  const remove = w.sim.store.admission.add({
    name: `fail-${code}`,
    admit: (request) => {
      if (hits >= times || !matchesWrite(match, request)) return undefined;
      hits++;
      const message =
        code === 409
          ? 'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again'
          : `injected fault: ${code}`;
      return { status: new StatusError(code, reasons[code] ?? 'InternalError', message) };
    },
  });
  return { hits: () => hits, remove };
}

/**
 * Holds the next `times` matching writes until `release` resolves (then applies them): the client's
 * timeout fires first, so drainbridge sees a timeout for a write the server applies later.
 */
export function delayWrites(
  w: FaultWorld,
  match: WriteMatch,
  release: (request: AdmissionRequest) => Promise<void>,
  times = 1,
): InjectedFault {
  let hits = 0;
  const remove = w.sim.store.admission.add({
    name: 'delay',
    admit: async (request) => {
      if (hits >= times || !matchesWrite(match, request)) return undefined;
      hits++;
      await release(request);
      return undefined;
    },
  });
  return { hits: () => hits, remove };
}

/** Resolves after `ms` of real time (a fault's duration, never an assertion's wait). */
export function realMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Reads of `resources` by drainbridge answered with `code` until the returned function is called. */
export function failReads(w: FaultWorld, resources: readonly string[], code: number, verbs = ['get', 'list']) {
  return w.sim.faults.failRequests({ user: DRAINBRIDGE_SA, resources, verbs }, code);
}
