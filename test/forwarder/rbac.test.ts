/**
 * The forwarder's ServiceAccount can do exactly what the forwarder calls, and nothing more. A real
 * `drainbridge forwarder` process runs as drainbridge/drainbridge-forwarder (bound as deploy/ binds it)
 * through what it does in a cluster — it takes the Lease (none exists yet: read, create), renews it,
 * publishes a cordon and its uncordon, adopts a NodeMaintenance (finalizer, BeginMaintenance Event, status
 * mirrored from the evacuation the embedded workflow runs), ends it on deletion (finalizer removed,
 * RemovedMaintenance), refuses one that node-maintenance-operator handles (a Warning Event), reads the
 * NodeMaintenance CRD, and releases the Lease on SIGTERM. Its calls, from the simulator's request log, are
 * compared with the rules of deploy/base/rbac/forwarder.yaml both ways: a call without a rule fails (it is
 * also refused with 403 during the run), and so does a rule no call used.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { EmbeddedRuntime } from '../../embedded/runtime.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import type { RequestRecord } from '../../sim/server/request-log.ts';
import {
  DrainbridgeProcess,
  FORWARDER_USER,
  spreadScenario,
  startTestCluster,
  type TestCluster,
  waitUntil,
} from './harness.ts';

const ROLE_FILE = 'deploy/base/rbac/forwarder.yaml';

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
  readonly resourceNames?: string[];
  /** A Role's namespace (a ClusterRole's rules hold everywhere). */
  readonly namespace?: string;
  readonly from: string;
}

function rulesOf(file: string): Rule[] {
  const docs = parseAllDocuments(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')).map((d) => d.toJS());
  return docs
    .filter((doc) => doc?.kind === 'ClusterRole' || doc?.kind === 'Role')
    .flatMap((role) =>
      (role.rules as Omit<Rule, 'from'>[]).map((rule) => ({
        ...rule,
        from: `${role.kind} ${role.metadata.name}`,
        ...(role.kind === 'Role' ? { namespace: role.metadata.namespace } : {}),
      })),
    );
}

/** One call as RBAC sees it. */
interface Call {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  readonly namespace: string;
  readonly name: string;
}

const callOf = (record: RequestRecord): Call => ({
  group: record.group,
  resource: record.subresource ? `${record.resource}/${record.subresource}` : record.resource,
  verb: record.verb,
  namespace: record.namespace,
  name: record.name,
});

const allows = (rule: Rule, call: Call): boolean =>
  rule.apiGroups.includes(call.group) &&
  rule.resources.includes(call.resource) &&
  rule.verbs.includes(call.verb) &&
  (rule.namespace === undefined || rule.namespace === call.namespace) &&
  (rule.resourceNames === undefined || rule.resourceNames.includes(call.name));

const describeCall = (call: Call): string =>
  `${call.verb} ${call.group || 'core'}/${call.resource}${call.name ? ` ${call.name}` : ''} in ${call.namespace || '(cluster)'}`;

const NM = (name: string, node: string, finalizers: string[] = []) =>
  JSON.stringify({
    apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
    kind: 'NodeMaintenance',
    metadata: { name, ...(finalizers.length > 0 ? { finalizers } : {}) },
    spec: { nodeName: node, reason: 'rbac test' },
  });

describe('RBAC: the forwarder ServiceAccount in deploy/ can do exactly what the forwarder calls', () => {
  let cluster: TestCluster;
  let runtime: EmbeddedRuntime;
  let endpoint: EventBridgeEndpoint;
  let forwarder: DrainbridgeProcess;

  before(async () => {
    cluster = await startTestCluster(spreadScenario(4, { replicas: 4 }));
    const config = loadConfig({
      KUBECONFIG: await cluster.kubeconfigFor('drainbridge'),
      DRAINBRIDGE_MAX_HELD_NODES: '3',
      DRAINBRIDGE_DRAIN_IGNORE_DAEMONSETS: 'true',
    });
    runtime = await EmbeddedRuntime.create({ config, retryIntervalMs: 50, waitMs: 0 });
    endpoint = await startEventBridgeEndpoint(runtime.bus);
    forwarder = new DrainbridgeProcess(
      [
        'forwarder',
        '--kubeconfig',
        await cluster.kubeconfigFor('drainbridge-forwarder'),
        '--cordon-evacuates',
        'all',
        '--metrics-address',
        '127.0.0.1:0',
        '--identity',
        'fwd-rbac',
        '--shutdown-grace',
        '5',
      ],
      {
        AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'test-secret',
        DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '3',
      },
    );
    await forwarder.waitForLog('leader election: this replica leads', {}, 60_000);
    const kubectl = async (args: string[], input?: string) => {
      const result = await cluster.kubectl.run(args, input === undefined ? {} : { input });
      assert.equal(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`);
    };
    const recordPhase = async (node: string) =>
      (await cluster.admin.listEvacuations()).find((r) => r.spec.nodeName === node)?.status?.phase;

    // A cordon and its uncordon.
    await kubectl(['cordon', 'node-1']);
    await waitUntil('node-1 drained', async () => (await recordPhase('node-1')) === 'NodeDrained', 60_000);
    await kubectl(['uncordon', 'node-1']);
    await forwarder.waitForLog('node uncordoned: maintenance ends', { node: 'node-1' });

    // A NodeMaintenance: adopted, evacuated, its status mirrored; deleted: ended, released, gone.
    await kubectl(['create', '-f', '-'], NM('nm-node-2', 'node-2'));
    await waitUntil(
      'nm-node-2 Succeeded',
      async () =>
        (await cluster.kubectl.run(['get', 'nm', 'nm-node-2', '-o', 'jsonpath={.status.phase}'])).stdout ===
        'Succeeded',
      60_000,
    );
    await kubectl(['delete', 'nodemaintenance', 'nm-node-2', '--timeout=60s']);

    // One node-maintenance-operator handles: refused with a Warning Event.
    await kubectl(['create', '-f', '-'], NM('nm-by-nmo', 'node-3', ['foregroundDeleteNodeMaintenance']));
    await forwarder.waitForLog('NodeMaintenance refused: node-maintenance-operator acts on it', {
      nodeMaintenance: 'nm-by-nmo',
    });

    // SIGTERM: the Lease is released (an update).
    const mark = cluster.sim.requestLog.mark();
    forwarder.kill('SIGTERM');
    assert.deepEqual(await forwarder.exited, { code: 0, signal: null });
    assert.ok(
      cluster.sim.requestLog
        .all({ since: mark, user: FORWARDER_USER, resource: 'leases', verb: 'update', succeeded: true })
        .some((r) => r.name === 'drainbridge-forwarder'),
      'the Lease was released on SIGTERM',
    );
  });
  after(async () => {
    forwarder?.kill('SIGKILL');
    await forwarder?.exited;
    runtime?.stop();
    await endpoint?.close();
    await cluster?.stop();
  });

  const rules = () => rulesOf(ROLE_FILE);
  const calls = () =>
    cluster.sim.requestLog.all({ user: FORWARDER_USER }).filter((r) => r.resource !== '' && r.verb !== '');

  it('every call the forwarder made is allowed by a rule (and none was refused with 403)', () => {
    assert.ok(calls().length > 0, 'the forwarder made calls');
    const refused = calls()
      .filter((r) => r.status === 403)
      .map((r) => `${r.verb} ${r.path}`);
    assert.deepEqual(refused, [], 'calls the ServiceAccount was refused');
    const unruled = new Set(
      calls()
        .map(callOf)
        .filter((call) => !rules().some((rule) => allows(rule, call)))
        .map(describeCall),
    );
    assert.deepEqual([...unruled], [], 'calls without a rule');
  });

  it('every rule is used by a call: nothing more than the forwarder needs', () => {
    const made = calls().map(callOf);
    const unused: string[] = [];
    for (const rule of rules()) {
      for (const group of rule.apiGroups) {
        for (const resource of rule.resources) {
          for (const verb of rule.verbs) {
            const single = { ...rule, apiGroups: [group], resources: [resource], verbs: [verb] };
            if (!made.some((call) => allows(single, call)))
              unused.push(`${verb} ${group || 'core'}/${resource} (${rule.from})`);
          }
        }
      }
    }
    assert.deepEqual(unused, [], 'rules no call used');
  });
});
