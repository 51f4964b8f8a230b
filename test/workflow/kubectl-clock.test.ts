/**
 * kubectl's clock: an embedded evacuation honours `--timeout` and `--skip-wait-for-delete-timeout` within
 * a second of the real `kubectl drain` run on an identical simulator in the same test (kubectl's own
 * cases: a pod a PodDisruptionBudget holds, drained with `--timeout=10s`; a pod stuck terminating behind
 * a finalizer, drained with `--force --skip-wait-for-delete-timeout=3`). Real time (speed 1) and the
 * definitions' own Retry schedule (no shortened retries): what a person running `drainbridge evacuate`
 * gets. Before the fix, the pods pass waited out its 30 s wait and a retry's backoff first (61-63 s
 * against kubectl's 10.1 s; 31.6 s against 4.1 s).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Simulator } from '../../sim/index.ts';
import { type DrainSim, kubectlAvailable, kubectlDrain, startDrainSim } from '../drain/harness.ts';
import { eventsOf, failureOf, maintenanceRequested, startWorkflowSim, type WorkflowSim } from './harness.ts';

const CONTAINERS = [{ name: 'app', image: 'busybox:1.37' }];
const PODS = { group: '', resource: 'pods' };

function scenario(name: string, parts: { workloads?: unknown[]; pdbs?: unknown[]; pods?: unknown[] }) {
  return {
    name,
    speed: 1,
    podStartupDelaySeconds: 1,
    // node-2 is cordoned: everything lands on node-1 (the PDB holds its pod whether or not it could move).
    nodes: [{ name: 'node-1' }, { name: 'node-2', unschedulable: true }],
    namespaces: ['shop'],
    workloads: parts.workloads ?? [],
    pdbs: parts.pdbs ?? [],
    pods: parts.pods ?? [],
  };
}

const HELD_BY_BUDGET = scenario('pdb-timeout', {
  workloads: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'db', namespace: 'shop' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'db' } },
        template: { metadata: { labels: { app: 'db' } }, spec: { containers: CONTAINERS } },
      },
    },
  ],
  pdbs: [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'db', namespace: 'shop' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } },
    },
  ],
});

/** A pod a finalizer keeps terminating once deleted (grace 0: its deletionTimestamp is the deletion's second). */
const STUCK_TERMINATING = scenario('skip-wait', {
  pods: [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stuck', namespace: 'shop', finalizers: ['example.com/hold'] },
      spec: { nodeName: 'node-1', terminationGracePeriodSeconds: 0, containers: CONTAINERS },
    },
  ],
});

/**
 * Deletes the stuck pod (it stays, terminating): when, and the first instant kubectl's rule skips it
 * (whole seconds since its deletionTimestamp, which is cut to the second, greater than `skipSeconds`).
 */
function deleteStuckPod(sim: Simulator, skipSeconds: number): { at: number; skipFrom: number } {
  const at = Date.now();
  sim.store.delete(PODS, { namespace: 'shop', name: 'stuck' });
  const pod = sim.store.get(PODS, 'shop', 'stuck') as { metadata: { deletionTimestamp?: string } } | undefined;
  const stamp = Date.parse(pod?.metadata.deletionTimestamp ?? '');
  assert.ok(Number.isFinite(stamp), 'the pod is terminating');
  return { at, skipFrom: stamp + (skipSeconds + 1) * 1000 };
}

async function timeKubectl(
  env: DrainSim,
  flags: readonly string[],
): Promise<{ code: number; ms: number; endedAt: number }> {
  const started = Date.now();
  const run = await kubectlDrain(env.sim, 'node-1', flags);
  const endedAt = Date.now();
  return { code: run.code, ms: endedAt - started, endedAt };
}

async function timeEvacuation(
  w: WorkflowSim,
  drain: Record<string, unknown>,
): Promise<{ ok: boolean; error: { name: string; message: string }; ms: number; endedAt: number }> {
  const started = Date.now();
  await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain }));
  const [execution] = w.runtime.executionsFor('req-node-1');
  assert.ok(execution, 'the request started an execution');
  const outcome = await execution.outcome;
  const endedAt = Date.now();
  return { ok: outcome.ok, error: failureOf(outcome), ms: endedAt - started, endedAt };
}

/** The workflow simulator at speed 1 with the definitions' own Retry intervals. */
function realTimeWorkflow(scenarioObject: Record<string, unknown>): Promise<WorkflowSim> {
  return startWorkflowSim(scenarioObject, { speed: 1, runtime: { retryIntervalMs: undefined } });
}

describe("kubectl's clock: --timeout and --skip-wait-for-delete-timeout", { concurrency: 1 }, () => {
  const available = kubectlAvailable();
  const stops: (() => Promise<void>)[] = [];
  after(async () => {
    for (const stop of stops) await stop();
  });

  test('--timeout=10s on a pod a PDB holds: drainbridge fails within 1 s of the limit, not later than kubectl', {
    skip: available ? false : '/usr/bin/kubectl is not installed',
  }, async () => {
    const [env, w] = await Promise.all([startDrainSim(HELD_BY_BUDGET, { speed: 1 }), realTimeWorkflow(HELD_BY_BUDGET)]);
    stops.push(env.stop, w.stop);
    const [kubectl, ours] = await Promise.all([
      timeKubectl(env, ['--ignore-daemonsets', '--timeout=10s']),
      timeEvacuation(w, { ignoreDaemonSets: true, timeoutSeconds: 10 }),
    ]);
    console.log(
      `--timeout=10s: kubectl drain exited ${kubectl.code} after ${kubectl.ms} ms; drainbridge failed after ${ours.ms} ms`,
    );
    assert.notEqual(kubectl.code, 0, 'kubectl gives up');
    // kubectl's own end is not asserted to the second: its clock starts after the process has started and
    // read discovery, which on a loaded CI machine took 5 s (15.2 s in all). Ours is judged against the limit.
    assert.ok(kubectl.ms >= 10_000, `kubectl does not give up before its limit (${kubectl.ms} ms)`);
    assert.equal(ours.ok, false, 'the evacuation fails');
    assert.ok(ours.ms >= 10_000, `drainbridge does not give up before the limit (${ours.ms} ms)`);
    assert.ok(ours.ms <= 11_000, `drainbridge fails within 11 s of the drain's start (${ours.ms} ms)`);
    assert.ok(
      ours.ms <= kubectl.ms + 1_000,
      `not later than kubectl by more than 1 s (${ours.ms} vs ${kubectl.ms} ms)`,
    );
    const [failed] = eventsOf(w, 'Evacuation Failed', 'req-node-1') as {
      error: { name: string; message: string };
      blockers: { code: string; reason: string }[];
    }[];
    assert.equal(failed?.error.name, 'DeadlineExceeded');
    assert.match(failed?.error.message ?? '', /did not finish within --timeout=10s/);
    assert.ok(
      failed?.blockers.some((b) => b.code === 'DisruptionBudget' && /PodDisruptionBudget db/.test(b.reason)),
      `Evacuation Failed names the budget with its code: ${JSON.stringify(failed?.blockers)}`,
    );
  });

  test('--skip-wait-for-delete-timeout=3 on a pod stuck terminating: both go on within 1 s of the limit', {
    skip: available ? false : '/usr/bin/kubectl is not installed',
  }, async () => {
    const [env, w] = await Promise.all([
      startDrainSim(STUCK_TERMINATING, { speed: 1 }),
      realTimeWorkflow(STUCK_TERMINATING),
    ]);
    stops.push(env.stop, w.stop);
    const kubectlDeleted = deleteStuckPod(env.sim, 3);
    const ourDeleted = deleteStuckPod(w.sim, 3);
    const kubectlRun = timeKubectl(env, ['--force', '--skip-wait-for-delete-timeout=3']);
    const ours = await timeEvacuation(w, { force: true, skipWaitForDeleteTimeoutSeconds: 3 });
    const kubectl = await kubectlRun;
    const kubectlSince = kubectl.endedAt - kubectlDeleted.at;
    const ourSince = ours.endedAt - ourDeleted.at;
    console.log(
      `--skip-wait-for-delete-timeout=3: kubectl drain exited ${kubectl.code} after ${kubectl.ms} ms (${kubectlSince} ms after the deletion, ${kubectl.endedAt - kubectlDeleted.skipFrom} ms after the limit); drainbridge ${ours.ok ? 'succeeded' : 'failed'} after ${ours.ms} ms (${ourSince} ms after the deletion, ${ours.endedAt - ourDeleted.skipFrom} ms after the limit)`,
    );
    assert.equal(kubectl.code, 0, 'kubectl skips the pod and finishes');
    assert.equal(
      ours.ok,
      true,
      `the evacuation skips the pod and finishes (${ours.error.name}: ${ours.error.message})`,
    );
    assert.ok(ourSince <= kubectlSince + 1_000, `within 1 s of kubectl (${ourSince} vs ${kubectlSince} ms)`);
    assert.ok(ours.endedAt >= ourDeleted.skipFrom, 'the pod is not skipped before its limit');
    assert.ok(ours.endedAt - ourDeleted.skipFrom <= 1_000, 'the skip applies within 1 s of its limit');
  });
});
