/**
 * On AWS the forwarder wakes requests waiting in line (issue 23): a real `drainbridge forwarder` process,
 * with the forwarder's own RBAC (deploy/base/rbac/forwarder.yaml), watches the admission Lease and sends
 * the task token a waiting Evacuate parked there back with the real `@aws-sdk/client-sfn`, to a
 * SendTaskSuccess endpoint on loopback (sim/stepfunctions/endpoint.ts) that hands it to the embedded
 * executor running the Evacuate machine — so the wake-up ends a Task that really waits. A wake-up lost
 * on the way still ends in admission, at WaitForSlot's fallback (10 s, real time here).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EmbeddedRuntime, type TrackedExecution } from '../../embedded/runtime.ts';
import { ADMISSION_LEASE, readQueue } from '../../lib/admission/records.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { isHeld, readLedger } from '../../lib/node/ledger.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import { type StepFunctionsEndpoint, startStepFunctionsEndpoint } from '../../sim/stepfunctions/endpoint.ts';
import { waitUntil } from '../support/wait.ts';
import { failureOf, maintenanceEnded, maintenanceRequested } from '../workflow/harness.ts';
import { IDLE_NODES_SCENARIO } from '../workflow/scenario.ts';
import { DrainbridgeProcess, startTestCluster, type TestCluster } from './harness.ts';

const NAMESPACE = 'drainbridge';

describe('the forwarder wakes Step Functions executions waiting in line (SendTaskSuccess)', () => {
  let cluster: TestCluster;
  let runtime: EmbeddedRuntime;
  let bus: EventBridgeEndpoint;
  let sfn: StepFunctionsEndpoint;
  let forwarder: DrainbridgeProcess;

  before(async () => {
    // Idle nodes, not even a DaemonSet: each evacuation is admission and a cordon.
    cluster = await startTestCluster({ ...IDLE_NODES_SCENARIO, name: 'wake-sfn', workloads: [] });
    // The definitions' own waits (no test schedule): WaitForSlot's fallback is its TimeoutSeconds, 10 s.
    runtime = await EmbeddedRuntime.create({
      config: loadConfig({ KUBECONFIG: await cluster.kubeconfigFor('drainbridge') }),
    });
    bus = await startEventBridgeEndpoint(runtime.bus);
    sfn = await startStepFunctionsEndpoint((token) => runtime.executor.sendTaskSuccess(token));
    forwarder = new DrainbridgeProcess(
      ['forwarder', '--kubeconfig', await cluster.kubeconfigFor('drainbridge-forwarder'), '--identity', 'fwd-a'],
      {
        AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url,
        AWS_ENDPOINT_URL_SFN: sfn.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'test-secret',
      },
    );
    await forwarder.waitForLog('leader election: this replica leads');
  });
  after(async () => {
    forwarder?.kill('SIGKILL');
    await forwarder?.exited;
    runtime?.stop();
    await sfn?.close();
    await bus?.close();
    await cluster?.stop();
  });

  async function request(node: string): Promise<TrackedExecution> {
    await runtime.put('Maintenance Requested', maintenanceRequested(node));
    const execution = runtime.executionsFor(`req-${node}`).at(-1);
    assert.ok(execution, `an Evacuate started for ${node}`);
    return execution;
  }

  async function succeeds(execution: TrackedExecution): Promise<void> {
    const outcome = await execution.outcome;
    assert.equal(outcome.ok, true, `${failureOf(outcome).name}: ${failureOf(outcome).message}`);
  }

  async function parkedToken(node: string): Promise<string> {
    return await waitUntil(
      `req-${node} parks a wake-up token`,
      async () => {
        const lease = await cluster.admin.getLease(NAMESPACE, ADMISSION_LEASE);
        return (readQueue(lease)[`req-${node}`] as { wake?: string } | undefined)?.wake;
      },
      30_000,
      { everyMs: 50 },
    );
  }

  async function heldAfterRelease(node: string, released: string): Promise<number> {
    await runtime.put('Maintenance Ended', maintenanceEnded(released));
    const releasedAt = Date.now();
    await waitUntil(`${node} is held`, async () => isHeld(readLedger(await cluster.admin.getNode(node))), 30_000, {
      everyMs: 50,
    });
    return Date.now() - releasedAt;
  }

  it('sends the parked token back as the slot frees; the waiting Task takes it', async () => {
    await succeeds(await request('node-1'));
    const second = await request('node-2');
    const token = await parkedToken('node-2');
    const waitedMs = await heldAfterRelease('node-2', 'node-1');
    await succeeds(second);
    const calls = sfn.calls.filter((call) => call.taskToken === token);
    assert.deepEqual(calls, [{ taskToken: token, output: '{}', delivered: true }], JSON.stringify(sfn.calls));
    assert.ok(waitedMs < 5_000, `admitted ${waitedMs} ms after the release: a wake-up, not the 10 s fallback`);
  });

  it('a wake-up lost on the way: the request is admitted at its fallback all the same', async () => {
    const heal = sfn.loseWakeUps();
    try {
      const third = await request('node-3');
      const token = await parkedToken('node-3');
      await heldAfterRelease('node-3', 'node-2');
      await succeeds(third);
      assert.ok(
        sfn.calls.some((call) => call.taskToken === token && !call.delivered),
        'the forwarder sent the wake-up (and it was lost)',
      );
    } finally {
      heal();
    }
    await runtime.put('Maintenance Ended', maintenanceEnded('node-3'));
    await waitUntil('node-3 is released', async () => !isHeld(readLedger(await cluster.admin.getNode('node-3'))));
    await runtime.settle();
  });
});
