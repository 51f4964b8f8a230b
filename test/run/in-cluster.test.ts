/**
 * `drainbridge run` in-cluster, as deploy/overlays/run runs it: DRAINBRIDGE_KUBE_ACCESS=in-cluster with a
 * pod's ServiceAccount directory (token, ca.crt, namespace) of drainbridge/drainbridge-run and
 * KUBERNETES_SERVICE_HOST/PORT naming the simulator. run reaches the cluster two ways — the forwarder
 * through the lean client (lib/clients/kube/http's inClusterEndpoint), the workflow and the resumption through
 * client-node (lib/config's in-cluster KubeConfig) — and both must read that directory: a cordon is
 * evacuated, and every request it made (the Lease and watches, the evictions and node writes) came as the
 * ServiceAccount of the directory.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_USER } from '../../sim/auth/authenticator.ts';
import {
  type DrainbridgeProcess,
  podEnvironment,
  RUN_USER,
  serviceAccountDir,
  spreadScenario,
  startRun,
  startTestCluster,
  type TestCluster,
} from '../forwarder/harness.ts';
import { waitUntil } from '../support/wait.ts';

describe('drainbridge run in-cluster (a ServiceAccount directory, KUBERNETES_SERVICE_HOST/PORT)', () => {
  let cluster: TestCluster;
  let run: DrainbridgeProcess | undefined;

  before(async () => {
    cluster = await startTestCluster(spreadScenario(3, { replicas: 3 }));
  });
  after(async () => {
    run?.kill('SIGKILL');
    await run?.exited;
    await cluster?.stop();
  });

  it('evacuates a cordoned node, every request made as the ServiceAccount of the directory', async () => {
    const mark = cluster.sim.requestLog.mark();
    run = await startRun(cluster, {
      identity: 'run-in-pod',
      cordonEvacuates: 'all',
      inCluster: true,
      env: {
        ...podEnvironment(cluster, await serviceAccountDir(cluster, 'drainbridge-run')),
        DRAINBRIDGE_NAMESPACE: 'drainbridge',
      },
    });
    assert.equal((await cluster.kubectl.run(['cordon', 'node-2'])).code, 0);
    await waitUntil(
      'node-2 drained',
      async () =>
        (await cluster.admin.listEvacuations()).find((r) => r.spec.nodeName === 'node-2')?.status?.phase ===
        'NodeDrained',
      60_000,
      { context: () => run?.output.slice(-10).join('\n') ?? '' },
    );
    const mine = cluster.sim.requestLog.all({ since: mark }).filter((r) => r.user !== ADMIN_USER.username);
    assert.deepEqual([...new Set(mine.map((r) => r.user))], [RUN_USER]);
    const made = new Set(mine.map((r) => `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}`));
    // The forwarder's lean client: the run Lease and the node watch.
    assert.ok(made.has('update leases') && made.has('watch nodes'), [...made].join(', '));
    // The workflow's client-node client: the evictions and the node's cordon and ledger.
    assert.ok(made.has('create pods/eviction') && made.has('patch nodes'), [...made].join(', '));
    assert.equal((await cluster.admin.getLease('drainbridge', 'drainbridge-run')).spec?.holderIdentity, 'run-in-pod');
  });
});
