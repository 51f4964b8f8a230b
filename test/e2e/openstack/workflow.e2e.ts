/**
 * The whole product against the real Nova: the packaged Evacuate and Restore state machines
 * (state-machines/definitions.json) run by the embedded executor, drainbridge running as its ServiceAccount
 * in the Kubernetes simulator, whose node `compute-1` is the Nova host `compute-1` (the default
 * mapping: the node name). Credentials come from the lab's openrc as OS_* variables, as an operator has them.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EmbeddedRuntime } from '../../../embedded/runtime.ts';
import { novaPortFor } from '../../../lib/branches/nova/wiring.ts';
import type { MaintenanceRequestedEvent } from '../../../lib/bus/contracts/contracts.ts';
import { loadConfig } from '../../../lib/config/index.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../../sim/drainbridge.ts';
import {
  bootServers,
  compute,
  connect,
  deleteAllServers,
  HOSTS,
  LAB_DIR,
  type Lab,
  setServiceEnabled,
} from './support.ts';

const NODE = 'compute-1';
const SERVERS = 4;

async function labEnv(): Promise<Record<string, string>> {
  const text = await readFile(join(LAB_DIR, 'openrc'), 'utf8');
  const env: Record<string, string> = {};
  for (const match of text.matchAll(/^export (OS_[A-Z_]+)=(.*)$/gm)) env[match[1] as string] = match[2] as string;
  return env;
}

const SCENARIO = {
  name: 'nova-workflow',
  speed: 50,
  nodes: HOSTS.map((name) => ({ name, labels: { 'node-role.kubernetes.io/compute': '' } })),
  namespaces: ['openstack'],
};

async function serviceOf(lab: Lab, host: string) {
  const [service] = await lab.nova.listComputeServices(host);
  assert.ok(service, `nova-compute on ${host}`);
  return service;
}

async function serversOn(lab: Lab, host: string): Promise<{ id: string; status: string }[]> {
  const { servers } = await compute<{ servers: { id: string; status: string }[] }>(
    lab,
    'GET',
    `/servers/detail?all_tenants=1&host=${host}`,
  );
  return servers;
}

function requested(requestId: string): MaintenanceRequestedEvent {
  return {
    version: '1',
    requestId,
    requester: 'e2e',
    origin: 'manual',
    target: { nodeName: NODE },
    reason: 'e2e workflow',
    drain: { ignoreDaemonSets: true },
  };
}

describe('Evacuate and Restore with the real Nova (packaged state machines, embedded)', () => {
  let lab: Lab;
  let cluster: DrainbridgeCluster;
  let runtime: EmbeddedRuntime;
  const outcomes: { detailType: string; detail: Record<string, unknown> }[] = [];

  /** Puts Maintenance Ended for `requestId` and waits for the Restore to finish. */
  async function endMaintenance(requestId: string): Promise<void> {
    await runtime.put('Maintenance Ended', {
      version: '1',
      requestId,
      requester: 'e2e',
      origin: 'manual',
      target: { nodeName: NODE },
    });
    await runtime.settle();
  }

  /** Puts Maintenance Requested for `requestId` and asserts that its evacuation succeeded. */
  async function evacuate(requestId: string): Promise<void> {
    await runtime.put('Maintenance Requested', requested(requestId));
    const outcome = await runtime.executionsFor(requestId)[0]?.outcome;
    assert.equal(outcome?.ok, true, outcome && !outcome.ok ? outcome.error.message : `no execution for ${requestId}`);
  }

  before(async () => {
    lab = await connect();
    await deleteAllServers(lab);
    for (const host of HOSTS) await setServiceEnabled(lab, host, true);
    cluster = await startDrainbridgeCluster({ scenario: SCENARIO });
    const config = loadConfig({
      KUBECONFIG: cluster.kubeconfigPath,
      DRAINBRIDGE_NOVA: 'true',
      DRAINBRIDGE_NOVA_MAX_CONCURRENT_MIGRATIONS: '2',
    });
    const env = await labEnv();
    runtime = await EmbeddedRuntime.create({
      config,
      retryIntervalMs: 500,
      connectors: { nova: (c, base) => novaPortFor(c, { ...base, env }) },
      onBusEvent: (detailType, detail) => outcomes.push({ detailType, detail: detail as Record<string, unknown> }),
    });
  });
  after(async () => {
    runtime?.stop();
    await cluster?.stop();
    if (lab) {
      await deleteAllServers(lab);
      for (const host of HOSTS) await setServiceEnabled(lab, host, true);
    }
  });

  it('evacuates the node: nova-compute disabled with our reason, every server ACTIVE elsewhere; restore re-enables', async () => {
    const ids = await bootServers(lab, NODE, SERVERS, 'wf');
    const started = Date.now();
    await runtime.put('Maintenance Requested', requested('wf-1'));
    const [evacuation] = runtime.executionsFor('wf-1');
    const outcome = await evacuation?.outcome;
    assert.equal(outcome?.ok, true, outcome && !outcome.ok ? outcome.error.message : 'no execution');
    console.log(`# timing: workflow evacuation of ${SERVERS} servers: ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const service = await serviceOf(lab, NODE);
    assert.equal(service.status, 'disabled');
    assert.match(service.disabledReason ?? '', /^drainbridge:wf-1:/);
    assert.deepEqual(await serversOn(lab, NODE), [], `${NODE} is empty`);
    for (const id of ids) {
      const { server } = await compute<{ server: { status: string; 'OS-EXT-SRV-ATTR:host': string } }>(
        lab,
        'GET',
        `/servers/${id}`,
      );
      assert.equal(server.status, 'ACTIVE');
      assert.notEqual(server['OS-EXT-SRV-ATTR:host'], NODE);
    }
    const succeeded = outcomes.find((e) => e.detailType === 'Evacuation Succeeded');
    assert.ok(succeeded, 'Evacuation Succeeded was published');
    assert.equal((succeeded.detail.progress as Record<string, { moved: number }>).nova?.moved, SERVERS);

    await endMaintenance('wf-1');
    assert.equal((await serviceOf(lab, NODE)).status, 'enabled', 'restore re-enabled the service');
    const restored = outcomes.find((e) => e.detailType === 'Node Restored');
    assert.equal(restored?.detail.novaServiceEnabled, true);
  });

  it('two requests hold the node: the first Restore leaves Nova disabled, the last one re-enables it', async () => {
    await evacuate('wf-a');
    await evacuate('wf-b');

    await endMaintenance('wf-a');
    assert.equal((await serviceOf(lab, NODE)).status, 'disabled', 'wf-b still holds the node');
    await endMaintenance('wf-b');
    assert.equal(
      (await serviceOf(lab, NODE)).status,
      'enabled',
      'the last Restore re-enabled the service wf-a disabled',
    );
  });

  it('leaves a service someone else disabled as it is, and says so', async () => {
    await setServiceEnabled(lab, NODE, false, 'hardware ticket 4711');
    await evacuate('wf-x');
    await endMaintenance('wf-x');
    const service = await serviceOf(lab, NODE);
    assert.equal(service.status, 'disabled');
    assert.equal(service.disabledReason, 'hardware ticket 4711');
    const restored = outcomes.filter((e) => e.detailType === 'Node Restored').at(-1);
    assert.ok(restored, 'Node Restored was published');
    assert.match(
      String((restored.detail.leftAlone as string[])[0]),
      /disabled by someone else \(reason: hardware ticket 4711\)/,
    );
  });

  it('a node that is not a Nova host (DRAINBRIDGE_NOVA_NODE_SELECTOR) is evacuated without touching Nova', async () => {
    await setServiceEnabled(lab, NODE, true);
    const ids = await bootServers(lab, NODE, 1, 'not-a-host');
    const env = await labEnv();
    const config = loadConfig({
      KUBECONFIG: cluster.kubeconfigPath,
      DRAINBRIDGE_NOVA: 'true',
      DRAINBRIDGE_NOVA_NODE_SELECTOR: 'openstack-compute-node=enabled',
    });
    const other = await EmbeddedRuntime.create({
      config,
      retryIntervalMs: 500,
      connectors: { nova: (c, base) => novaPortFor(c, { ...base, env }) },
    });
    try {
      await other.put('Maintenance Requested', requested('wf-plain'));
      const outcome = await other.executionsFor('wf-plain')[0]?.outcome;
      assert.equal(outcome?.ok, true, outcome && !outcome.ok ? outcome.error.message : 'no execution');
      assert.equal((await serviceOf(lab, NODE)).status, 'enabled', 'nova-compute untouched');
      assert.deepEqual(
        (await serversOn(lab, NODE)).map((s) => s.id),
        ids,
        'the server stays where it is',
      );
    } finally {
      other.stop();
    }
  });
});
