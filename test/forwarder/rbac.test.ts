/**
 * The forwarder's ServiceAccount can do exactly what the forwarder calls, and nothing more. A real
 * `drainbridge forwarder` process runs as drainbridge/drainbridge-forwarder (bound as deploy/ binds it)
 * through what it does in a cluster — it takes the Lease (none exists yet: read, create), renews it,
 * publishes a cordon and its uncordon, adopts a NodeMaintenance (finalizer, BeginMaintenance Event, medik8s's
 * node Lease read, created and renewed in medik8s-leases, status mirrored from the evacuation the embedded
 * workflow runs), ends it on deletion (the node Lease deleted, finalizer removed, RemovedMaintenance), refuses one that node-maintenance-operator handles (a Warning Event), reads the
 * NodeMaintenance CRD, and releases the Lease on SIGTERM. Its calls, from the simulator's request log, are
 * compared with the rules of deploy/base/rbac/forwarder.yaml both ways: a call without a rule fails (it is
 * also refused with 403 during the run), and so does a rule no call used. The same for the role of
 * deploy/overlays/forwarder-nmo (node-maintenance-operator installed), applied in place of the base's, and a
 * forwarder without NodeMaintenance handling (DRAINBRIDGE_NODE_MAINTENANCE=false, as that overlay sets it).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { EmbeddedRuntime } from '../../embedded/runtime.ts';
import { InProcessBus } from '../../lib/bus/in-process-bus.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../../sim/eventbridge/endpoint.ts';
import { findKubectl } from '../../sim/kubectl.ts';
import type { RequestRecord } from '../../sim/server/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import { DrainbridgeProcess, FORWARDER_USER, spreadScenario, startTestCluster, type TestCluster } from './harness.ts';

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

/** The rules of every Role and ClusterRole in a YAML stream. */
function rulesOf(yaml: string): Rule[] {
  const docs = parseAllDocuments(yaml).map((d) => d.toJS());
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

const isSelfReview = (record: RequestRecord): boolean =>
  (record.group === 'authorization.k8s.io' || record.group === 'authentication.k8s.io') &&
  record.resource.startsWith('self');

const describeCall = (call: Call): string =>
  `${call.verb} ${call.group || 'core'}/${call.resource}${call.name ? ` ${call.name}` : ''} in ${call.namespace || '(cluster)'}`;

/** The two checks: every call the forwarder made has a rule (none refused), and every rule had a call. */
function checkBothWays(rules: () => Rule[], log: () => RequestRecord[]): void {
  // The startup preflight's questions (who am I, may I) need no rule: Kubernetes grants them to every
  // authenticated user (ClusterRole system:basic-user).
  const calls = () => log().filter((r) => r.resource !== '' && r.verb !== '' && !isSelfReview(r));

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
}

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

  checkBothWays(
    () => rulesOf(readFileSync(new URL(`../../${ROLE_FILE}`, import.meta.url), 'utf8')),
    () => cluster.sim.requestLog.all({ user: FORWARDER_USER }),
  );
});

describe('RBAC: the forwarder role of deploy/overlays/forwarder-nmo (node-maintenance-operator installed) is what a forwarder without NodeMaintenance handling calls', () => {
  let cluster: TestCluster;
  let forwarder: DrainbridgeProcess;
  let endpoint: EventBridgeEndpoint | undefined;
  let rendered: string;

  before(async () => {
    cluster = await startTestCluster({ ...spreadScenario(2, { replicas: 0 }), workloads: [] });
    const kubectl = findKubectl();
    assert.ok(kubectl, 'kubectl renders the overlay');
    rendered = execFileSync(
      kubectl,
      ['kustomize', new URL('../../deploy/overlays/forwarder-nmo', import.meta.url).pathname],
      {
        encoding: 'utf8',
      },
    );
    // The overlay's roles replace the base's in the cluster (the forwarder's ClusterRole and Lease Role).
    const roles = parseAllDocuments(rendered)
      .map((doc) => doc.toJS())
      .filter(
        (doc) =>
          (doc?.kind === 'ClusterRole' || doc?.kind === 'Role') &&
          doc.metadata.name.startsWith('drainbridge-forwarder'),
      );
    assert.equal(roles.length, 2);
    for (const role of roles) cluster.sim.apply(stringify(role), 'deploy/overlays/forwarder-nmo');
    const bus = new InProcessBus({ rules: [], busName: 'drainbridge', start: async () => undefined });
    endpoint = await startEventBridgeEndpoint(bus);
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
        'fwd-nmo',
      ],
      {
        AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'test-secret',
        DRAINBRIDGE_NODE_MAINTENANCE: 'false',
        DRAINBRIDGE_FORWARDER_LEASE_SECONDS: '3',
      },
    );
    await forwarder.waitForLog('leader election: this replica leads', {}, 60_000);
    assert.equal((await cluster.kubectl.run(['cordon', 'node-1'])).code, 0);
    await waitUntil('the cordon on the bus', () => bus.accepted.some((e) => e['detail-type'] === 'Node Cordoned'));
    forwarder.kill('SIGTERM');
    assert.deepEqual(await forwarder.exited, { code: 0, signal: null });
  });
  after(async () => {
    forwarder?.kill('SIGKILL');
    await forwarder?.exited;
    await endpoint?.close();
    await cluster?.stop();
  });

  checkBothWays(
    () => rulesOf(rendered).filter((rule) => rule.from.includes('drainbridge-forwarder')),
    () => cluster.sim.requestLog.all({ user: FORWARDER_USER }),
  );
});
