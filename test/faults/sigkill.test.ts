/**
 * Fault injection: the process SIGKILLed in each step, then the request resumed with the same requestId.
 * The killed process is the real `drainbridge evacuate` / `restore` command, a child process against the
 * simulator; it is killed from inside the simulator at the moment its step's write arrives (an admission
 * hook kills it, then lets the write land or not), so the kill is exactly mid-step; a step that writes
 * nothing (RestoreBranches with Nova off) is killed while its read waits for an answer. The resume runs the
 * same packaged state machines on the simulator's fast clock, so the dead owner's claim is old at once
 * (a person re-running the command waits up to OWNER_TTL_SECONDS for it).
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import { DEFAULT_EVICTION_CONCURRENCY } from '../../lib/branches/pods/eviction-pass.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import type { AdmissionRequest } from '../../sim/index.ts';
import { StatusError } from '../../sim/index.ts';
import { BIN } from '../support/cli.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import { byDrainbridge, kubeVirtScenario } from '../workflow/kubevirt-scenario.ts';
import {
  BLOCKED_SCENARIO,
  evacuate,
  eventsOf,
  evictions,
  expectFailed,
  expectSucceeded,
  type FaultWorld,
  openSpareNodes,
  restore,
  scenario,
  WORKFLOW_SCENARIO,
} from './harness.ts';

const NODES = { group: '', resource: 'nodes' };
/** Which requests the simulator holds (its fault injector's matcher). */
type RequestMatcher = Parameters<FaultWorld['sim']['faults']['holdRequests']>[0];

/** Where in a step the kill lands: the write that marks the step, and whether the server applies it. */
interface KillPoint {
  readonly matches: (request: AdmissionRequest) => boolean;
  /** The killed process's last write reached the server and was applied (true) or was lost (false). */
  readonly applied: boolean;
}

const bodyHas = (request: AdmissionRequest, text: string) => JSON.stringify(request.body ?? '').includes(text);
/** The Evacuation record's status as a write of it carries it. */
const evacuationStatus = (request: AdmissionRequest) =>
  (request.body as { status?: { branches?: Record<string, { state?: unknown }>; restore?: { finishedAt?: string } } })
    ?.status;

/** Starts `drainbridge ARGS` as drainbridge's ServiceAccount; SIGKILLs it when `point` matches one of its writes. */
async function runUntilKilled(
  w: FaultWorld,
  args: readonly string[],
  point: KillPoint,
  env: Record<string, string> = {},
): Promise<{ killed: boolean; at?: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-sigkill-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/drainbridge')), { mode: 0o600 });
  let child: ChildProcess | undefined;
  let killed = false;
  let at: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child = spawn(process.execPath, [BIN, ...args, '--kubeconfig', kubeconfig], {
      env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR', ...env },
      stdio: 'ignore',
    });
    child.once('exit', () => resolve());
  });
  // A command that never reaches its kill point must not outlive the scenario.
  const guard = setTimeout(() => child?.kill('SIGKILL'), 45_000);
  const remove = w.sim.store.admission.add({
    name: 'sigkill',
    admit: async (request) => {
      if (killed || request.user.username !== DRAINBRIDGE_SA || request.dryRun || !point.matches(request))
        return undefined;
      killed = true;
      at = `${request.namespace}/${request.name}`;
      child?.kill('SIGKILL');
      await exited;
      return point.applied ? undefined : { status: new StatusError(500, 'InternalError', 'the client went away') };
    },
  });
  await exited;
  clearTimeout(guard);
  remove();
  return { killed, ...(at ? { at } : {}) };
}

/** `drainbridge ARGS` as drainbridge's ServiceAccount, a child process; `exited` resolves when it is gone. */
async function startCommand(
  w: FaultWorld,
  args: readonly string[],
): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-sigkill-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/drainbridge')), { mode: 0o600 });
  const child = spawn(process.execPath, [BIN, ...args, '--kubeconfig', kubeconfig], {
    env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR' },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited };
}

/**
 * Starts `drainbridge ARGS` and SIGKILLs it in a step that writes nothing: once the write `after` has
 * arrived, the next read matching `read` is held by the simulator (no answer), and the process is killed
 * while it waits for that answer.
 */
async function runUntilKilledAtRead(
  w: FaultWorld,
  args: readonly string[],
  after: (request: AdmissionRequest) => boolean,
  read: RequestMatcher,
): Promise<{ killed: boolean }> {
  let release: (() => void) | undefined;
  const remove = w.sim.store.admission.add({
    name: 'hold-the-next-read',
    admit: (request) => {
      if (!release && request.user.username === DRAINBRIDGE_SA && !request.dryRun && after(request))
        release = w.sim.faults.holdRequests(read);
      return undefined;
    },
  });
  const { child, exited } = await startCommand(w, args);
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  // A command that never reaches its kill point must not outlive the scenario.
  const guard = setTimeout(() => child.kill('SIGKILL'), 45_000);
  let killed = false;
  while (!gone && !killed) {
    if (w.sim.faults.heldRequests(read) > 0) {
      killed = true;
      child.kill('SIGKILL');
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await exited;
  clearTimeout(guard);
  remove();
  release?.();
  return { killed };
}

const REQUEST = ['--request-id', 'req-node-1'];
/** Four LiveMigrate VMs on node-1 whose migrations take a simulated minute (the KubeVirt case). */
const KUBEVIRT_CLUSTER = kubeVirtScenario({
  vms: ['app-1', 'app-2', 'app-3', 'app-4'].map((name) => ({ name, strategy: 'LiveMigrate', migrationSeconds: 60 })),
});
const DRAIN = ['--ignore-daemonsets', '--delete-emptydir-data'];

function holdsOf(w: FaultWorld): string[] {
  return Object.keys(readLedger(w.sim.store.get(NODES, undefined, 'node-1') as never).holds);
}

function unschedulable(w: FaultWorld): boolean | undefined {
  return (w.sim.store.get(NODES, undefined, 'node-1')?.spec as { unschedulable?: boolean } | undefined)?.unschedulable;
}

/** Pods on node-1 matching `labelSelector`, as keys. */
function podsOnNode1(w: FaultWorld, labelSelector: string): string[] {
  return w.sim.store
    .list({ group: '', resource: 'pods' }, { labelSelector, fieldSelector: 'spec.nodeName=node-1' })
    .items.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`);
}

/** WORKFLOW_SCENARIO with two infrastructure pods on node-1 (an agent a hypervisor host would run). */
const INFRA_SCENARIO = {
  ...WORKFLOW_SCENARIO,
  name: 'workflow-infra',
  workloads: [
    ...WORKFLOW_SCENARIO.workloads,
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'infra-agent', namespace: 'monitoring', labels: { app: 'infra-agent' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'infra-agent' } },
        template: {
          metadata: { labels: { app: 'infra-agent', 'drainbridge.io/infra': 'true' } },
          spec: { containers: [{ name: 'agent', image: 'agent:1' }] },
        },
      },
    },
  ],
};
/** drainbridge's configuration for it: those pods go in the infra-pods pass, after the VM branches. */
const INFRA_ENV = { DRAINBRIDGE_INFRA_POD_SELECTOR: 'drainbridge.io/infra=true' };

/**
 * Each process evicted each pod at most once. A pod whose eviction the killed process sent but never
 * recorded (killed as the eviction landed, or before its branch state was written) is found terminating
 * by the resumed process, which evicts it again, as a second `kubectl drain` would. That disrupts nothing
 * more: the API server deletes a pod that is already terminating without consulting its PDB. So the
 * resumed process may repeat only evictions the API server had already accepted; any other repeat is a
 * pass forgetting what it did.
 */
function evictedOnce(w: FaultWorld, kill: { mark: number; at?: string }): void {
  const all = evictions(w);
  const after = evictions(w, kill.mark);
  const before = all.slice(0, all.length - after.length);
  // The eviction the kill landed on is applied as the process dies: the log may show it after the mark.
  const landedLate = kill.at ? after.indexOf(kill.at) : -1;
  if (kill.at && landedLate >= 0 && !before.includes(kill.at)) before.push(...after.splice(landedLate, 1));
  for (const [who, list] of [
    ['the killed process', before],
    ['the resumed process', after],
  ] as const) {
    assert.equal(new Set(list).size, list.length, `${who} evicted a pod twice: ${list.join(', ')}`);
  }
  // A pass sends its evictions DEFAULT_EVICTION_CONCURRENCY at a time and records them once it returns: what the
  // killed process had in flight may have landed unrecorded, and only that may be asked again (an eviction
  // of a pod already terminating changes nothing).
  const inFlightAtKill = before.slice(-DEFAULT_EVICTION_CONCURRENCY);
  const repeated = after.filter((pod) => before.includes(pod));
  assert.ok(
    repeated.every((pod) => inFlightAtKill.includes(pod)),
    `only evictions in flight at the kill are repeated: ${repeated.join(', ')} (in flight: ${inFlightAtKill.join(', ')})`,
  );
}

/** Kills `drainbridge evacuate` at `point`, resumes in-process with the same requestId, expects success. */
async function killAndResume(w: FaultWorld, point: KillPoint): Promise<void> {
  await openSpareNodes(w);
  const { killed, at } = await runUntilKilled(w, ['evacuate', 'node-1', ...REQUEST, ...DRAIN], point);
  assert.ok(killed, 'the process was killed at the step');
  const mark = w.sim.requestLog.mark();
  await expectSucceeded(w, await evacuate(w, 'node-1'));
  assert.deepEqual(holdsOf(w), ['req-node-1'], 'one hold');
  evictedOnce(w, { mark, ...(point.applied && at ? { at } : {}) });
}

describe('fault injection: SIGKILL in each step, resumed with the same requestId (real child processes)', () => {
  const cluster = WORKFLOW_SCENARIO;

  scenario('killed in Admit as it locks the admission Lease (the lock lost)', { cluster }, (w) =>
    killAndResume(w, { matches: (r) => r.resource === 'leases', applied: false }),
  );

  scenario('killed in Admit right after its hold landed (the Lease left locked)', { cluster }, (w) =>
    killAndResume(w, { matches: (r) => r.resource === 'nodes' && bodyHas(r, 'drainbridge.io/ledger'), applied: true }),
  );

  scenario('killed in PrepareBranches as it records phase NodeDraining', { cluster }, (w) =>
    killAndResume(w, { matches: (r) => r.resource === 'nodes' && bodyHas(r, 'NodeDraining'), applied: true }),
  );

  scenario('killed in the pods pass as its first eviction lands', { cluster }, (w) =>
    killAndResume(w, { matches: (r) => r.subresource === 'eviction', applied: true }),
  );

  scenario('killed in the pods pass as it persists its branch state', { cluster }, (w) =>
    killAndResume(w, {
      matches: (r) => r.resource === 'evacuations' && r.verb === 'update' && bodyHas(r, '"evictedAt"'),
      applied: false,
    }),
  );

  scenario('killed in FinishEvacuation as it records phase NodeDrained', { cluster }, async (w) => {
    await killAndResume(w, { matches: (r) => r.resource === 'nodes' && bodyHas(r, 'NodeDrained'), applied: true });
    assert.equal(eventsOf(w, 'Evacuation Succeeded', 'req-node-1').length, 1, 'one outcome event');
  });

  scenario(
    'killed in RecordFailure as it records phase Failed (after an abort); the resumed request fails the same way',
    { cluster: BLOCKED_SCENARIO },
    async (w) => {
      // The command drains until the PDB refuses; an operator aborts; its RecordFailure is killed mid-write.
      const record = () =>
        w.sim.store.get({ group: 'drainbridge.io', resource: 'evacuations' }, undefined, 'req-node-1');
      const blocked = () =>
        /PodDisruptionBudget/.test(String((record()?.status as { firstBlocker?: string })?.firstBlocker));
      const aborter = waitUntil('the command is blocked by the PDB', blocked, 30_000).then(() =>
        w.runtime.deps.progress.requestAbort('req-node-1', 'oncall@example.com', new Date()),
      );
      const { killed } = await runUntilKilled(w, ['evacuate', 'node-1', ...REQUEST, ...DRAIN], {
        matches: (r) => r.resource === 'nodes' && bodyHas(r, '"Failed"'),
        applied: true,
      });
      await aborter;
      assert.ok(killed, 'killed in RecordFailure');
      const resumed = await evacuate(w, 'node-1');
      await expectFailed(w, resumed, 'EvacuationAborted', /aborted by oncall@example\.com/);
      assert.deepEqual(holdsOf(w), ['req-node-1'], 'the safe state: still held');
    },
  );
  scenario(
    'killed in the KubeVirt pass as its first migration lands, before recording it; the resumed run creates no second one',
    { cluster: KUBEVIRT_CLUSTER },
    async (w) => {
      const { killed } = await runUntilKilled(w, ['evacuate', 'node-1', ...REQUEST, ...DRAIN], {
        matches: (r) => r.resource === 'virtualmachineinstancemigrations' && r.verb === 'create',
        applied: true,
      });
      assert.ok(killed, 'killed as it created a migration');
      const history = w.sim.kubevirt?.history;
      assert.ok(history);
      await history.when((h) => h.migrations(byDrainbridge).length === 1, 60_000); // the migration landed
      const record = w.sim.store.get({ group: 'drainbridge.io', resource: 'evacuations' }, undefined, 'req-node-1');
      type Kept = { branches?: { kubevirt?: { state?: { vmis?: Record<string, { migration?: string }> } } } };
      const kept = Object.values((record?.status as Kept | undefined)?.branches?.kubevirt?.state?.vmis ?? {});
      assert.deepEqual(
        kept.flatMap((vmi) => vmi.migration ?? []),
        [],
        'and was not recorded',
      );
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      const perVmi = new Map<string, number>();
      for (const r of history.migrations(byDrainbridge)) perVmi.set(r.vmi, (perVmi.get(r.vmi) ?? 0) + 1);
      assert.deepEqual(
        Object.fromEntries(perVmi),
        { 'vms/app-1': 1, 'vms/app-2': 1, 'vms/app-3': 1, 'vms/app-4': 1 },
        'one migration per VMI',
      );
      const creates = w.sim.requestLog
        .writes({ user: DRAINBRIDGE_SA, resource: 'virtualmachineinstancemigrations' })
        .filter((r) => r.verb === 'create');
      assert.equal(creates.length, 4, 'four creates in the request log (none refused as a duplicate)');
    },
  );

  scenario('killed in Restore as its release lands; the resumed Restore finishes it once', { cluster }, async (w) => {
    await openSpareNodes(w);
    await expectSucceeded(w, await evacuate(w, 'node-1'));
    const { killed } = await runUntilKilled(w, ['restore', 'node-1', ...REQUEST], {
      matches: (r) => r.resource === 'nodes' && bodyHas(r, 'released'),
      applied: true,
    });
    assert.ok(killed);
    const resumed = await restore(w, 'node-1');
    assert.equal((await resumed.outcome).ok, true);
    assert.deepEqual(holdsOf(w), []);
    const node = w.sim.store.get(NODES, undefined, 'node-1');
    assert.notEqual((node?.spec as { unschedulable?: boolean } | undefined)?.unschedulable, true, 'uncordoned');
  });

  // ---- the infra-pods pass, FinishRestore and RestoreBranches --------------------------------------------

  const infra = { cluster: INFRA_SCENARIO, env: INFRA_ENV };

  scenario('killed in the infra-pods pass as its first eviction lands (after the pods branch)', infra, async (w) => {
    await openSpareNodes(w);
    const { killed, at } = await runUntilKilled(
      w,
      ['evacuate', 'node-1', ...REQUEST, ...DRAIN],
      { matches: (r) => r.subresource === 'eviction' && (r.name ?? '').startsWith('infra-agent-'), applied: true },
      INFRA_ENV,
    );
    assert.ok(killed, 'killed in the infra-pods pass');
    assert.ok(evictions(w).filter((pod) => pod.startsWith('shop/web-')).length === 4, 'the pods branch had finished');
    const mark = w.sim.requestLog.mark();
    await expectSucceeded(w, await evacuate(w, 'node-1'));
    assert.deepEqual(holdsOf(w), ['req-node-1'], 'one hold');
    evictedOnce(w, { mark, ...(at ? { at } : {}) });
    assert.deepEqual(podsOnNode1(w, 'app=infra-agent'), [], 'every infra pod left node-1');
  });

  scenario('killed in the infra-pods pass as it persists its first branch state (lost)', infra, async (w) => {
    await openSpareNodes(w);
    const { killed } = await runUntilKilled(
      w,
      ['evacuate', 'node-1', ...REQUEST, ...DRAIN],
      {
        matches: (r) =>
          r.resource === 'evacuations' &&
          r.verb === 'update' &&
          evacuationStatus(r)?.branches?.['infra-pods']?.state !== undefined,
        applied: false,
      },
      INFRA_ENV,
    );
    assert.ok(killed, 'killed as the infra-pods pass wrote its state');
    const mark = w.sim.requestLog.mark();
    await expectSucceeded(w, await evacuate(w, 'node-1'));
    evictedOnce(w, { mark });
    assert.deepEqual(podsOnNode1(w, 'app=infra-agent'), [], 'every infra pod left node-1');
  });

  scenario(
    'killed in FinishRestore as it marks the Restore finished; the resumed Restore reports it once, as it was',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      const { killed } = await runUntilKilled(w, ['restore', 'node-1', ...REQUEST], {
        matches: (r) => r.resource === 'evacuations' && evacuationStatus(r)?.restore?.finishedAt !== undefined,
        applied: true,
      });
      assert.ok(killed, 'killed in FinishRestore');
      assert.deepEqual(holdsOf(w), [], 'the killed Restore had released the hold');
      const resumed = await restore(w, 'node-1');
      assert.equal((await resumed.outcome).ok, true);
      const restored = eventsOf(w, 'Node Restored', 'req-node-1');
      assert.equal(restored.length, 1, 'one Node Restored');
      assert.equal(restored[0]?.lastHold, true, 'as the last hold');
      // The killed Restore uncordoned node-1; the resumed one reports that (the record kept it), not "nothing".
      assert.equal(restored[0]?.uncordoned, true, 'uncordoned by the Restore, as the record kept it');
      assert.notEqual(unschedulable(w), true, 'uncordoned');
    },
  );

  scenario(
    'killed in RestoreBranches as it reads the ledger (Nova off); the resumed Restore runs RestoreBranches again and finishes',
    { cluster },
    async (w) => {
      await openSpareNodes(w);
      await expectSucceeded(w, await evacuate(w, 'node-1'));
      // ReleaseHold's last act is the PhaseChanged Event of NodeUncordoned; RestoreBranches then reads the node.
      const { killed } = await runUntilKilledAtRead(
        w,
        ['restore', 'node-1', ...REQUEST],
        (r) => r.resource === 'events' && r.verb === 'create' && bodyHas(r, 'NodeUncordoned'),
        { user: DRAINBRIDGE_SA, verbs: ['get'], resources: ['nodes'] },
      );
      assert.ok(killed, 'killed in RestoreBranches, its ledger read in flight');
      assert.deepEqual(holdsOf(w), [], 'the killed Restore had released the hold');
      const resumed = await restore(w, 'node-1');
      assert.equal((await resumed.outcome).ok, true);
      const steps = w.taskCalls.filter((c) => c.executionId === resumed.id).map((c) => c.functionKey);
      assert.ok(steps.includes('restoreBranches'), `the resumed Restore ran RestoreBranches: ${steps.join(', ')}`);
      const restored = eventsOf(w, 'Node Restored', 'req-node-1');
      assert.equal(restored.length, 1, 'one Node Restored');
      assert.equal(restored[0]?.lastHold, true, 'as the last hold');
      assert.equal(restored[0]?.uncordoned, true, 'the killed Restore uncordoned node-1, and it says so');
      assert.notEqual(unschedulable(w), true, 'uncordoned');
    },
  );
});
