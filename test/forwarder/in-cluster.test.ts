/**
 * In-cluster access as a pod has it, against the simulator: a ServiceAccount directory (token, ca.crt,
 * namespace) of the forwarder's ServiceAccount, KUBERNETES_SERVICE_HOST/PORT naming the simulator, and
 * DRAINBRIDGE_SERVICE_ACCOUNT_DIR pointing at the directory. The lean client's endpoint (lib/clients/kube/http)
 * reaches the API server as that ServiceAccount and verifies the server with that CA (another CA is
 * refused); a directory without its files is a clear configuration error; and a real
 * `drainbridge forwarder` process with DRAINBRIDGE_KUBE_ACCESS=in-cluster — what the Deployment runs —
 * takes the Lease and publishes a cordon as that ServiceAccount.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { KubeHttpClient } from '../../lib/clients/kube/http/client.ts';
import { inClusterEndpoint, loadKubeEndpoint } from '../../lib/clients/kube/http/endpoint.ts';
import { ConfigError } from '../../lib/errors/index.ts';
import { ADMIN_USER } from '../../sim/auth/authenticator.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import { generateServingCertificate } from '../../sim/tls.ts';
import { waitUntil } from '../support/wait.ts';
import {
  DrainbridgeProcess,
  FORWARDER_USER,
  podEnvironment,
  serviceAccountDir,
  spreadScenario,
  startTestCluster,
  type TestCluster,
} from './harness.ts';

describe('in-cluster access: a ServiceAccount directory and KUBERNETES_SERVICE_HOST/PORT', () => {
  let cluster: TestCluster;
  let dir: string;

  before(async () => {
    cluster = await startTestCluster({ ...spreadScenario(2, { replicas: 0 }), workloads: [] });
    dir = await serviceAccountDir(cluster, 'drainbridge-forwarder');
  });
  after(async () => {
    await cluster?.stop();
  });

  it('the lean client reaches the API server as the ServiceAccount, verifying it with ca.crt', async () => {
    const env = podEnvironment(cluster, dir);
    const endpoint = await loadKubeEndpoint({ source: 'in-cluster' }, () => Promise.reject(new Error('not used')), env);
    assert.equal(endpoint.server.href, `${cluster.sim.url}/`);
    const client = new KubeHttpClient(endpoint, { retry: { attempts: 1 } });
    const mark = cluster.sim.requestLog.mark();
    try {
      const nodes = await client.listNodes();
      assert.deepEqual(
        nodes.map((node) => node.metadata?.name),
        ['node-1', 'node-2'],
      );
    } finally {
      client.close();
    }
    const users = cluster.sim.requestLog.all({ since: mark }).map((r) => r.user);
    assert.deepEqual(users, [FORWARDER_USER], 'the token of the directory was sent');
  });

  it('a ca.crt that did not sign the server certificate is refused', async () => {
    const other = generateServingCertificate();
    assert.ok(other, 'openssl makes a second certificate');
    const wrong = mkdtempSync(join(tmpdir(), 'drainbridge-sa-'));
    writeFileSync(join(wrong, 'token'), await cluster.sim.tokenFor('drainbridge/drainbridge-forwarder'));
    writeFileSync(join(wrong, 'ca.crt'), other.cert);
    const client = new KubeHttpClient(inClusterEndpoint(podEnvironment(cluster, wrong), wrong), {
      retry: { attempts: 1 },
    });
    try {
      await assert.rejects(client.listNodes(), /certificate|self.signed|verify/i);
    } finally {
      client.close();
      rmSync(wrong, { recursive: true, force: true });
    }
  });

  it('no token, no ca.crt or no KUBERNETES_SERVICE_HOST: a configuration error naming what is missing', () => {
    const empty = mkdtempSync(join(tmpdir(), 'drainbridge-sa-'));
    const env = podEnvironment(cluster, empty);
    assert.throws(
      () => inClusterEndpoint(env),
      (error: unknown) =>
        error instanceof ConfigError &&
        /DRAINBRIDGE_KUBE_ACCESS/.test(JSON.stringify(error.problems)) &&
        error.message.includes(`no ServiceAccount token at ${join(empty, 'token')}`) &&
        error.message.includes(`no cluster CA at ${join(empty, 'ca.crt')}`) &&
        error.message.includes('DRAINBRIDGE_SERVICE_ACCOUNT_DIR'),
    );
    assert.throws(
      () => inClusterEndpoint({ ...env, KUBERNETES_SERVICE_HOST: undefined }, dir),
      (error: unknown) => error instanceof ConfigError && error.message.includes('KUBERNETES_SERVICE_HOST is not set'),
    );
    rmSync(empty, { recursive: true, force: true });
  });

  describe('drainbridge forwarder in-cluster (a real process, as the Deployment runs it)', () => {
    let endpoint: EventBridgeEndpoint;
    let bus: InProcessBus;
    let forwarder: DrainbridgeProcess | undefined;

    before(async () => {
      bus = new InProcessBus({ rules: [], busName: 'drainbridge-dev', start: async () => undefined });
      endpoint = await startEventBridgeEndpoint(bus);
    });
    after(async () => {
      forwarder?.kill('SIGKILL');
      await forwarder?.exited;
      await endpoint?.close();
    });

    it('takes the Lease and publishes a cordon as the ServiceAccount of the directory', async () => {
      const mark = cluster.sim.requestLog.mark();
      forwarder = new DrainbridgeProcess(
        ['forwarder', '--cordon-evacuates', 'all', '--metrics-address', '127.0.0.1:0', '--identity', 'in-pod'],
        {
          ...podEnvironment(cluster, dir),
          DRAINBRIDGE_NAMESPACE: 'drainbridge',
          DRAINBRIDGE_EVENT_BUS: 'drainbridge-dev',
          AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
          AWS_REGION: 'eu-west-1',
          AWS_ACCESS_KEY_ID: 'AKIDTEST',
          AWS_SECRET_ACCESS_KEY: 'test-secret',
        },
      );
      await forwarder.waitForLog('leader election: this replica leads', {}, 60_000);
      assert.equal((await cluster.kubectl.run(['cordon', 'node-2'])).code, 0);
      await waitUntil('node-2 cordon on the bus', () =>
        bus.accepted.some(
          (e) =>
            e['detail-type'] === 'Node Cordoned' && (e.detail.target as { nodeName: string }).nodeName === 'node-2',
        ),
      );
      const lease = await cluster.admin.getLease('drainbridge', 'drainbridge-forwarder');
      assert.equal(lease.spec?.holderIdentity, 'in-pod');
      // Every request since it started came from the forwarder's ServiceAccount or the admin's kubectl.
      const users = new Set(cluster.sim.requestLog.all({ since: mark }).map((r) => r.user));
      users.delete(ADMIN_USER.username);
      assert.deepEqual([...users], [FORWARDER_USER]);
    });
  });
});
