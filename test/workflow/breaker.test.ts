/**
 * The circuit breaker, end to end on the simulator: with DRAINBRIDGE_BREAKER=2/1d, two evacuations that
 * reach their deadline (a PodDisruptionBudget at zero blocks node-1's drain) pause admission: a new
 * request waits in line saying why, `drainbridge status` leads with the pause and the failing node has
 * a Warning Event; `drainbridge resume` re-opens admission, `Admission Resumed` is published once, and
 * the waiting request is evacuated without anyone asking again. The window is a simulated day so that
 * the load on the machine cannot age the first failure out.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TrackedExecution } from '../../embedded/runtime.ts';
import { isSlotWait } from '../../lib/errors/registry.ts';
import { runCli } from '../cli/run-cli.ts';
import { ledgerHolds } from '../support/invariants.ts';
import { waitUntil } from '../support/wait.ts';
import {
  eventsOf,
  failureOf,
  maintenanceEnded,
  maintenanceRequested,
  simInstant,
  startWorkflowSim,
  type WorkflowSim,
} from './harness.ts';
import { BLOCKED_SCENARIO } from './scenario.ts';

const NODES = { group: '', resource: 'nodes' };

async function cli(w: WorkflowSim, args: string[]): Promise<string> {
  const kubeconfig = join(mkdtempSync(join(tmpdir(), 'drainbridge-breaker-')), 'kubeconfig');
  writeFileSync(kubeconfig, w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/drainbridge')));
  const result = await runCli([...args, '--kubeconfig', kubeconfig]);
  assert.equal(result.code, 0, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

function waitMessages(w: WorkflowSim, execution: TrackedExecution): string[] {
  return w.taskCalls
    .filter((call) => call.executionId === execution.id && isSlotWait(call.error?.name))
    .map((call) => call.error?.message ?? '');
}

/** Requests node-1 with a deadline 3 simulated minutes away, and waits until it failed on it. */
async function failOnNode1(w: WorkflowSim, requestId: string): Promise<void> {
  await w.runtime.put(
    'Maintenance Requested',
    maintenanceRequested('node-1', { requestId, deadline: simInstant(w, 180) }),
  );
  const execution = w.runtime.executionsFor(requestId).at(-1);
  assert.ok(execution);
  const outcome = await execution.outcome;
  assert.equal(failureOf(outcome).name, 'EvacuationFailed');
}

async function restoreNode1(w: WorkflowSim, requestId: string): Promise<void> {
  await w.runtime.put('Maintenance Ended', maintenanceEnded('node-1', requestId));
  await waitUntil('node-1 is released', () => {
    const node = w.sim.store.list(NODES).items.find((n) => n.metadata.name === 'node-1');
    return node !== undefined && ledgerHolds(node) === 'none';
  });
}

describe('circuit breaker (DRAINBRIDGE_BREAKER)', () => {
  let w: WorkflowSim;
  before(async () => {
    w = await startWorkflowSim(BLOCKED_SCENARIO, { env: { DRAINBRIDGE_BREAKER: '2/1d' } });
  });
  after(async () => {
    await w?.stop();
  });

  it('two failed evacuations pause admission; resume re-opens it and the waiting request proceeds', async () => {
    await failOnNode1(w, 'first');
    await restoreNode1(w, 'first');
    assert.doesNotMatch(await cli(w, ['status']), /ADMISSION PAUSED/, 'one failure does not pause admission');
    await failOnNode1(w, 'second');
    await restoreNode1(w, 'second');

    const status = await cli(w, ['status']);
    assert.match(
      status,
      /ADMISSION PAUSED since \S+: 2 evacuations failed within 1d: node-1 \(DeadlineExceeded\), node-1 \(DeadlineExceeded\)/,
    );
    const published = eventsOf(w, 'Admission Paused', 'second') as {
      nodeName?: string;
      failures?: unknown[];
      pausedAt?: string;
    }[];
    assert.equal(published.length, 1, 'Admission Paused on the bus, once, from the failure that tripped it');
    assert.equal(published[0]?.nodeName, 'node-1');
    assert.equal(published[0]?.failures?.length, 2);
    assert.equal(w.busEvents.filter((e) => e.detailType === 'Admission Paused').length, 1);
    const events = w.sim.store.list({ group: '', resource: 'events' }).items as unknown as {
      reason?: string;
      type?: string;
      involvedObject?: { name?: string };
    }[];
    assert.ok(
      events.some((e) => e.reason === 'AdmissionPaused' && e.type === 'Warning' && e.involvedObject?.name === 'node-1'),
      'a Warning Event on the node whose failure paused admission',
    );

    // node-3 holds nothing to drain: only the pause can keep it waiting.
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-3'));
    const waiting = w.runtime.executionsFor('req-node-3').at(-1);
    assert.ok(waiting);
    await waitUntil('node-3 waits on the paused admission', () =>
      waitMessages(w, waiting).some((m) => /node node-3: 2 evacuations failed within 1d/.test(m)),
    );
    assert.match(await cli(w, ['status']), /req-node-3 for node-3[\s\S]*waiting: 2 evacuations failed within 1d/);
    const node3 = w.sim.store.list(NODES).items.find((n) => n.metadata.name === 'node-3');
    assert.ok(node3 && ledgerHolds(node3) === 'none', 'node-3 was not admitted while paused');

    assert.match(await cli(w, ['resume']), /admission resumed by .*; it was paused: 2 evacuations failed/);
    const outcome = await waiting.outcome;
    assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
    assert.doesNotMatch(await cli(w, ['status']), /ADMISSION PAUSED/);
    // The first Admit step after the resume announced it on the bus, once, naming who and what it ended.
    const resumed = w.busEvents.filter((e) => e.detailType === 'Admission Resumed').map((e) => e.detail);
    assert.equal(resumed.length, 1, 'Admission Resumed on the bus, once');
    assert.match(String(resumed[0]?.requester), /@/);
    assert.match(String(resumed[0]?.reason), /^2 evacuations failed within 1d/);
    assert.equal(resumed[0]?.pausedAt, published[0]?.pausedAt);
    assert.match(await cli(w, ['resume']), /admission is not paused; nothing was changed/);
  });
});
