/**
 * Nova faults through the whole product: the packaged Evacuate and Restore state machines (embedded, with
 * the definition's own retry backoff) against the real Nova lab and the Kubernetes simulator, asserting
 * the fault suite's safety invariants on both sides (test/support/invariants.ts for the cluster,
 * ./invariants.ts for Nova). The Nova faults the pass meets directly — a revoked Keystone token, no valid
 * host, a dead destination compute, a migration stuck `running` — are in evacuate.e2e.ts with the same
 * invariants.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskCall } from '../../../embedded/executor.ts';
import { EmbeddedRuntime } from '../../../embedded/runtime.ts';
import { loadConfig } from '../../../lib/config/index.ts';
import { novaPortFor } from '../../../lib/workflow/nova-wiring.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../../sim/drainbridge.ts';
import { uncleanParts } from '../../support/clean-error.ts';
import { watchInvariants } from '../../support/invariants.ts';
import { assertNovaInvariants, novaStart } from './invariants.ts';
import {
  bootServers,
  connect,
  deleteAllServers,
  HOSTS,
  LAB_DIR,
  type Lab,
  labCtl,
  migrationsInFlightFrom,
  setServiceEnabled,
  waitFor,
} from './support.ts';

const NODE = 'compute-1';
/** How long nova-api stays down: longer than one pass's own HTTP retries, shorter than the workflow's. */
const OUTAGE_SECONDS = 12;

async function labEnv(): Promise<Record<string, string>> {
  const text = await readFile(join(LAB_DIR, 'openrc'), 'utf8');
  const env: Record<string, string> = {};
  for (const match of text.matchAll(/^export (OS_[A-Z_]+)=(.*)$/gm)) env[match[1] as string] = match[2] as string;
  return env;
}

describe('Nova faults through the packaged state machines (real Nova)', () => {
  let lab: Lab;
  let cluster: DrainbridgeCluster;
  let runtime: EmbeddedRuntime;
  const calls: TaskCall[] = [];
  const events: { detailType: string; detail: Record<string, unknown> }[] = [];

  before(async () => {
    lab = await connect();
    await deleteAllServers(lab);
    for (const host of HOSTS) await setServiceEnabled(lab, host, true);
    cluster = await startDrainbridgeCluster({
      scenario: { name: 'nova-faults', speed: 1, nodes: HOSTS.map((name) => ({ name })) },
    });
    const config = loadConfig({
      KUBECONFIG: cluster.kubeconfigPath,
      DRAINBRIDGE_NOVA: 'true',
      DRAINBRIDGE_NOVA_MAX_CONCURRENT_MIGRATIONS: '2',
    });
    const env = await labEnv();
    runtime = await EmbeddedRuntime.create({
      config,
      // No retry override: the definition's own backoff (2 s doubling to 30 s, 6 attempts) rides out
      // the outage, as it would on AWS.
      waitMs: 0,
      nova: (c, base) => novaPortFor(c, { ...base, env }),
      onTask: (call) => calls.push(call),
      onBusEvent: (detailType, detail) => events.push({ detailType, detail: detail as Record<string, unknown> }),
    });
  });
  after(async () => {
    runtime?.stop();
    await cluster?.stop();
    await labCtl('start', 'nova-api').catch(() => '');
    if (lab) {
      await deleteAllServers(lab);
      for (const host of HOSTS) await setServiceEnabled(lab, host, true);
    }
  });

  it('nova-api down mid-evacuation: retried, the evacuation finishes; servers kept, nova-compute safe', async () => {
    const ids = await bootServers(lab, NODE, 3, 'api-down');
    const start = await novaStart(lab, ids);
    const k8s = watchInvariants(cluster.sim, { maxHeldNodes: 1 });
    await runtime.put('Maintenance Requested', {
      version: '1',
      requestId: 'api-down',
      requester: 'e2e',
      origin: 'manual',
      target: { nodeName: NODE },
      reason: 'e2e: nova-api outage',
      drain: { ignoreDaemonSets: true },
    });
    const [execution] = runtime.executionsFor('api-down');
    assert.ok(execution);
    await waitFor('a live migration in flight', async () => (await migrationsInFlightFrom(lab, NODE, ids)) > 0, 120);
    await labCtl('stop', 'nova-api');
    const downAt = calls.length;
    await sleep(OUTAGE_SECONDS * 1000); // the outage's length, not a wait for an assertion
    await labCtl('start', 'nova-api');
    const outcome = await execution.outcome;
    assert.equal(outcome.ok, true, outcome.ok ? '' : outcome.error.message);

    const felt = calls.slice(downAt).filter((call) => call.error?.name === 'TransientError');
    assert.ok(felt.length > 0, 'the outage was felt (TransientError) and retried');
    for (const call of felt) assert.deepEqual(uncleanParts(call.error?.message ?? ''), [], call.error?.message);
    await assertNovaInvariants(lab, start, { source: NODE, service: 'ours', requestId: 'api-down' });
    for (const id of ids) assert.notEqual((await lab.nova.getServer(id))?.host, NODE, 'moved off');

    await runtime.put('Maintenance Ended', {
      version: '1',
      requestId: 'api-down',
      requester: 'e2e',
      origin: 'manual',
      target: { nodeName: NODE },
    });
    await runtime.settle();
    await assertNovaInvariants(lab, start, { source: NODE, service: 'enabled' });
    k8s.assertHeld();
    k8s.stop();
  });
});
