/**
 * Runs drainbridge's node and drain code against the Kubernetes API simulator, under the least-privilege
 * role from deploy/ (so a missing RBAC rule fails the test), and runs the real kubectl against an
 * identical simulator for the differential suite.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { BACKOFF_BASE_SECONDS } from '../../lib/branches/pods/tracking.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import type { PassResult, ReconcilePass } from '../../lib/model/pass.ts';
import { type DrainOptions, KUBECTL_DRAIN_DEFAULTS, type ResolvedRequest } from '../../lib/model/request.ts';
import { type KubeObject, type Simulator, startSimulator } from '../../sim/index.ts';
import { isSettled } from '../../sim/scenarios/index.ts';
import { waitUntil } from '../support/wait.ts';

const ROOT = join(import.meta.dirname, '..', '..');
export const KUBECTL = '/usr/bin/kubectl';
export const SA_USER = 'system:serviceaccount:drainbridge:drainbridge';
export const RBAC_FILES = [
  join(ROOT, 'deploy/base/crds/evacuations.yaml'),
  join(ROOT, 'deploy/base/rbac/drainbridge.yaml'),
];
export const DISABLE_EVICTION_RBAC = join(ROOT, 'deploy/base/rbac/disable-eviction.yaml');

/** Creates the objects of multi-document YAML files in the simulator's store (as the cluster admin would). */
export function installManifests(sim: Simulator, files: readonly string[]): void {
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const object = doc.toJS() as KubeObject | null;
      if (!object) continue;
      const group = object.apiVersion.includes('/') ? (object.apiVersion.split('/')[0] ?? '') : '';
      const type = sim.store.registry.byKind(group, object.kind);
      if (!type) throw new Error(`${file}: the simulator does not serve ${object.apiVersion} ${object.kind}`);
      sim.store.create({ group, resource: type.resource }, object);
    }
  }
}

/** A KubeConfig for the simulator and a bearer token. */
export function kubeConfigFor(sim: Simulator, token: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sim.kubeconfig(token));
  return kubeConfig;
}

export interface DrainSim {
  readonly sim: Simulator;
  /** drainbridge's client, authenticated as its ServiceAccount under deploy/base/rbac. */
  readonly client: KubeClient;
  /** An admin client for arranging scenarios. */
  readonly admin: KubeClient;
  stop(): Promise<void>;
}

export interface DrainSimOptions {
  readonly speed?: number;
  /** Bind the optional pod-delete role (for --disable-eviction). */
  readonly allowDelete?: boolean;
  /** Per-call client timeout in ms. */
  readonly timeoutMs?: number;
}

/** Starts a simulator on a scenario, installs drainbridge's CRD and RBAC, waits until the scenario settled. */
export async function startDrainSim(
  scenario: string | Record<string, unknown>,
  options: DrainSimOptions = {},
): Promise<DrainSim> {
  const sim = await startSimulator({ scenario, speed: options.speed ?? 200 });
  try {
    installManifests(sim, options.allowDelete ? [...RBAC_FILES, DISABLE_EVICTION_RBAC] : RBAC_FILES);
    await settle(sim);
    const token = await sim.tokenFor('drainbridge/drainbridge');
    const retry = { baseDelayMs: 5, maxDelayMs: 20 };
    const client = new KubeClient(kubeConfigFor(sim, token), { retry, timeoutMs: options.timeoutMs ?? 5_000 });
    const admin = new KubeClient(kubeConfigFor(sim, sim.adminToken), { retry });
    return { sim, client, admin, stop: () => sim.stop() };
  } catch (error) {
    await sim.stop();
    throw error;
  }
}

/** Waits (real time, polling) until the scenario's workloads are all placed and running. */
export async function settle(sim: Simulator, limitMs = 20_000): Promise<void> {
  const scenario = sim.scenario;
  if (!scenario) return;
  await waitUntil(`scenario ${scenario.name} settled`, () => isSettled(sim.store, scenario), limitMs);
}

/** A resolved request for tests. */
export function requestFor(nodeName: string, drain: Partial<DrainOptions> = {}, requestId = 'req-1'): ResolvedRequest {
  return {
    requestId,
    requester: 'test',
    origin: 'manual',
    target: { nodeName },
    reason: 'test',
    nodeName,
    drain: { ...KUBECTL_DRAIN_DEFAULTS, ...drain },
  };
}

/** The objects a pods pass reads: a change to any of them can change what the next pass sees. */
const PASS_INPUTS = [
  { group: '', resource: 'pods' },
  { group: 'policy', resource: 'poddisruptionbudgets' },
  { group: '', resource: 'nodes' },
];

/**
 * Counts changes to the pass's inputs in the simulator's store, and waits for the next one or for `ms`
 * of simulated time, whichever comes first.
 */
function watchPassInputs(sim: Simulator) {
  let changes = 0;
  let wake: (() => void) | undefined;
  const watches = PASS_INPUTS.map((ref) =>
    sim.store.watch(ref, {}, () => {
      changes++;
      wake?.();
    }),
  );
  return {
    get changes() {
      return changes;
    },
    /** Resolves at the next change, or after `ms` of simulated time. */
    next(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const timer = sim.clock.setTimeout(() => done(), ms);
        const done = () => {
          timer.cancel();
          wake = undefined;
          resolve();
        };
        wake = done;
      });
    },
    stop: () => {
      for (const watch of watches) watch.stop();
    },
  };
}

/**
 * Runs a pass the way the workflow does — again at once after progress; otherwise once the cluster
 * changed or a budget backoff (BACKOFF_BASE_SECONDS, simulated) has passed — until it is done, or stuck.
 * Stuck is what the simulated cluster shows, not a count of quiet passes: a pass that moved nothing with
 * nothing in flight, after a whole backoff in which none of the pods, budgets or the node changed (so
 * every pod refused by a budget has been asked again, against the same cluster). A pod in a longer
 * backoff (a repeated refusal other than a budget's) is not waited for. `maxPasses` bounds the loop.
 */
export async function runUntilSettled(
  sim: Simulator,
  pass: ReconcilePass,
  request: ResolvedRequest,
  limits: { maxPasses?: number } = {},
): Promise<{ result: PassResult; passes: number }> {
  const startedAt = new Date(sim.clock.now()).toISOString();
  const backoffMs = BACKOFF_BASE_SECONDS * 1000;
  const inputs = watchPassInputs(sim);
  // The changes counted and the simulated time when the current run of quiet passes began.
  let quietFrom: { changes: number; at: number } | undefined;
  try {
    for (let passes = 1; ; passes++) {
      const before = { changes: inputs.changes, at: sim.clock.now() };
      const result = await pass.run({ request, now: new Date(before.at), startedAt });
      const quiet = !result.progressed && result.progress.inFlight === 0;
      if (!quiet) quietFrom = undefined;
      else if (!quietFrom || inputs.changes !== quietFrom.changes) quietFrom = before;
      // This pass began a backoff after the quiet run did: every pod a budget refused in it was due again.
      const stuck = quietFrom !== undefined && before.at - quietFrom.at >= backoffMs;
      if (result.done || stuck || passes >= (limits.maxPasses ?? 200)) return { result, passes };
      if (!result.progressed) await inputs.next(backoffMs);
    }
  } finally {
    inputs.stop();
  }
}

export interface KubectlRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Whether the real kubectl is here; under CI=true its absence is a failure, not a skip. */
export function kubectlAvailable(): boolean {
  if (existsSync(KUBECTL)) return true;
  if (process.env.CI === 'true') throw new Error(`${KUBECTL} is missing and CI=true: the differential suite must run`);
  return false;
}

/** Runs `kubectl drain` against the simulator as the admin (asynchronously: the simulator serves in-process). */
export async function kubectlDrain(sim: Simulator, nodeName: string, flags: readonly string[]): Promise<KubectlRun> {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, sim.kubeconfig(), { mode: 0o600 });
  try {
    return await new Promise((resolve) => {
      execFile(
        KUBECTL,
        ['--kubeconfig', kubeconfig, 'drain', nodeName, ...flags],
        { encoding: 'utf8', timeout: 60_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A pod's name with controller-generated suffixes replaced, so two simulators compare equal. */
export function stableName(pod: V1Pod | KubeObject): string {
  const meta = pod.metadata as { name?: string; namespace?: string; generateName?: string };
  return `${meta.namespace}/${meta.generateName ? `${meta.generateName}*` : meta.name}`;
}

/** Pods evicted (or deleted) by `user` since `since`, as stable names, sorted. */
export function evictedBy(sim: Simulator, user: string, since = 0): string[] {
  const names = sim.requestLog
    .writes({ since, user, resource: 'pods' })
    .filter((record) => record.subresource === 'eviction' || (record.verb === 'delete' && record.subresource === ''))
    .map((record) => `${record.namespace}/${record.name}`);
  return [...new Set(names)].map((key) => stableKeyOf(sim, key)).sort();
}

const stableKeys = new WeakMap<Simulator, Map<string, string>>();

/** Remembers every pod's stable name now (call before draining: evicted pods disappear). */
export function rememberPods(sim: Simulator): void {
  const map = stableKeys.get(sim) ?? new Map<string, string>();
  for (const pod of sim.store.list({ group: '', resource: 'pods' }).items) {
    map.set(`${pod.metadata.namespace}/${pod.metadata.name}`, stableName(pod));
  }
  stableKeys.set(sim, map);
}

function stableKeyOf(sim: Simulator, key: string): string {
  return stableKeys.get(sim)?.get(key) ?? key;
}

/** Replaces pod keys in a kubectl or drainbridge message with stable names. */
export function stabilise(sim: Simulator, text: string): string {
  let out = text;
  for (const [key, stable] of stableKeys.get(sim) ?? []) out = out.split(key).join(stable);
  return out;
}
