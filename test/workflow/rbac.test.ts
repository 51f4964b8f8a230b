/**
 * The ServiceAccount in deploy/ can do exactly what drainbridge calls, and nothing more. Representative
 * runs of every command (plan, evacuate — succeeding, waiting for a slot and failing when aborted —
 * abort, restore — one of them deleting an expired record —, repair, and an evacuation with
 * --disable-eviction) go to the simulator as drainbridge's ServiceAccount, and so does a KubeVirt
 * evacuation through the packaged state machines (a migration a Restore deletes, a VM the restart opt-in
 * restarts); the calls are read from the simulators' request logs and compared with the rules of
 * deploy/base/rbac/drainbridge.yaml (ClusterRole and the Lease Role) and deploy/base/rbac/disable-eviction.yaml.
 * A new call without a rule fails (it is also refused with 403 during the runs), and so does a rule no
 * run uses.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { OWNER_ANNOTATION } from '../../lib/workflow/owner-record.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import type { RequestRecord } from '../../sim/server/request-log.ts';
import { drainbridge } from '../support/cli.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';
import { waitUntil } from '../support/wait.ts';
import { maintenanceEnded, maintenanceRequested, startWorkflowSim } from './harness.ts';
import { byDrainbridge, kubeVirtScenario, launcherEvictions, migrationsDeleted } from './kubevirt-scenario.ts';

const DEPLOY = new URL('../../deploy/base/rbac/', import.meta.url);
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
  /** Set for a Role's rules: the namespace it grants in. */
  readonly namespace?: string;
  readonly from: string;
}

/** The rules of every Role and ClusterRole in a manifest file. */
function rulesOf(file: string): Rule[] {
  const docs = parseAllDocuments(readFileSync(new URL(file, DEPLOY), 'utf8')).map((d) => d.toJS());
  return docs
    .filter((doc) => doc?.kind === 'ClusterRole' || doc?.kind === 'Role')
    .flatMap((role) =>
      (role.rules as Omit<Rule, 'from'>[]).map((rule) => ({
        ...rule,
        from: `${file} ${role.kind} ${role.metadata.name}`,
        ...(role.kind === 'Role' ? { namespace: role.metadata.namespace } : {}),
      })),
    );
}

/** One call as RBAC sees it: group, resource (with subresource), verb, and the namespace for namespaced ones. */
function callOf(record: RequestRecord): { group: string; resource: string; verb: string; namespace: string } {
  const resource = record.subresource ? `${record.resource}/${record.subresource}` : record.resource;
  return { group: record.group, resource, verb: record.verb, namespace: record.namespace };
}

/**
 * The preflight's reviews (who am I, may I …): every authenticated user may create them (Kubernetes'
 * default ClusterRole system:basic-user, which the simulator grants too), so deploy/ has no rule for them.
 */
const ALLOWED_TO_EVERYONE = new Set([
  'authentication.k8s.io/selfsubjectreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
]);

/**
 * The KubeVirt calls (creating and deleting migrations, reading VirtualMachines for the restart opt-in):
 * the packaged state machines, embedded, as this ServiceAccount under deploy/base/rbac on the simulated
 * KubeVirt — an Evacuate whose live migration is still running when a Restore deletes it, beside a VM of
 * evictionStrategy None that the restart opt-in restarts. Returns drainbridge's calls from its request log.
 */
async function kubeVirtRun(): Promise<RequestRecord[]> {
  const w = await startWorkflowSim(
    kubeVirtScenario({
      vms: [
        { name: 'app', strategy: 'LiveMigrate', migrationSeconds: 600 },
        { name: 'legacy', strategy: 'None', runStrategy: 'Always' },
      ],
    }),
    { env: { DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE: 'true' } },
  );
  try {
    await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain: { ignoreDaemonSets: true } }));
    const history = w.sim.kubevirt?.history;
    assert.ok(history, 'the simulator runs KubeVirt');
    await history.when(
      (h) => h.migrations((r) => byDrainbridge(r) && r.phases.some((p) => p.phase === 'Running')).length === 1,
      600_000,
    );
    await waitUntil('the restart opt-in restarted vms/legacy', () => launcherEvictions(w).length === 1, 30_000);
    await w.runtime.put('Maintenance Ended', maintenanceEnded('node-1'));
    await w.runtime.settle();
    assert.equal(migrationsDeleted(w).length, 1, 'the Restore deleted the running migration');
    return w.sim.requestLog.all({ user: DRAINBRIDGE_SA });
  } finally {
    await w.stop();
  }
}

const allows = (rule: Rule, call: ReturnType<typeof callOf>) =>
  rule.apiGroups.includes(call.group) &&
  rule.resources.includes(call.resource) &&
  rule.verbs.includes(call.verb) &&
  (rule.namespace === undefined || rule.namespace === call.namespace);

describe('RBAC: the ServiceAccount in deploy/ can do exactly what the code calls', () => {
  let cluster: DrainbridgeCluster;
  let adminKubeconfig: string;
  let kubeVirtCalls: RequestRecord[] = [];
  const run = async (args: string[], expectCode = 0) => {
    const result = await drainbridge([...args, '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(result.code, expectCode, `drainbridge ${args.join(' ')}:\n${result.stdout}\n${result.stderr}`);
    return result;
  };

  before(async () => {
    kubeVirtCalls = await kubeVirtRun();
    cluster = await startDrainbridgeCluster({ scenario: 'small', speed: 100 });
    adminKubeconfig = cluster.adminKubeconfigPath;
    // The representative runs, each as a person (or Lambda) would run it.
    await run(['plan', 'node-1', '--ignore-daemonsets'], 3); // dry-run evictions; exit 3: the bare pod blocks
    await run(['evacuate', 'node-1', '--ignore-daemonsets', '--force', '--request-id', 'rbac-1']);
    // A second node with the only slot taken: waits in line until an operator aborts it (RecordFailure).
    const waiting = run(['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'rbac-2'], 1);
    await waitUntil(
      'rbac-2 waits for a slot',
      () => cluster.sim.store.get(EVACUATIONS, undefined, 'rbac-2') !== undefined,
      30_000,
    );
    await run(['abort', 'node-2', '--request-id', 'rbac-2']);
    await waiting;
    await run(['abort', 'node-1', '--request-id', 'rbac-1']);
    await run(['restore', 'node-1', '--request-id', 'rbac-1']);
    // A damaged ledger, repaired by the ServiceAccount (lists the node's Evacuation records).
    cluster.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-3' }, (node) => {
      node.metadata.annotations = { ...node.metadata.annotations, [LEDGER_ANNOTATION]: '{"holds": 1}' };
      return node;
    });
    await run(['repair', 'node-3', '--yes']);
    // --disable-eviction with its optional role bound.
    cluster.sim.apply(
      readFileSync(new URL('disable-eviction.yaml', DEPLOY), 'utf8'),
      'deploy/base/rbac/disable-eviction.yaml',
    );
    await run(['evacuate', 'node-3', '--ignore-daemonsets', '--force', '--disable-eviction', '--request-id', 'rbac-3']);
    // rbac-1's record as two days after its Restore: the next Restore deletes it (record expiry).
    cluster.sim.store.mutate({ group: 'drainbridge.io', resource: 'evacuations' }, { name: 'rbac-1' }, (record) => {
      const twoDaysAgo = new Date(Date.now() - 48 * 3_600_000).toISOString();
      const object = record as unknown as { metadata: { annotations?: Record<string, string> }; status: object };
      object.status = { ...object.status, restore: { startedAt: twoDaysAgo, finishedAt: twoDaysAgo } };
      delete object.metadata.annotations?.[OWNER_ANNOTATION];
      return record;
    });
    await run(['restore', 'node-3', '--request-id', 'rbac-3']);
    assert.equal(
      cluster.sim.store.get({ group: 'drainbridge.io', resource: 'evacuations' }, undefined, 'rbac-1'),
      undefined,
      'the expired record was deleted',
    );
    assert.ok(adminKubeconfig);
  });
  after(async () => {
    await cluster?.stop();
  });

  const rules = () => [...rulesOf('drainbridge.yaml'), ...rulesOf('disable-eviction.yaml')];
  const calls = () =>
    [...cluster.sim.requestLog.all({ user: DRAINBRIDGE_SA }), ...kubeVirtCalls].filter(
      (r) => r.resource !== '' && r.verb !== '' && !ALLOWED_TO_EVERYONE.has(`${r.group}/${r.resource}`),
    );

  it('every call drainbridge made is allowed by a rule (and none was refused with 403)', () => {
    const refused = calls()
      .filter((r) => r.status === 403)
      .map((r) => `${r.verb} ${r.path}`);
    assert.deepEqual(refused, [], 'calls the ServiceAccount was refused');
    const unruled = new Set(
      calls()
        .map(callOf)
        .filter((call) => !rules().some((rule) => allows(rule, call)))
        .map((call) => `${call.verb} ${call.group || 'core'}/${call.resource} in ${call.namespace || '(cluster)'}`),
    );
    assert.deepEqual([...unruled], [], 'calls without a rule');
  });

  it('every rule is used by a call: nothing more than the code needs', () => {
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
    assert.deepEqual(unused, [], 'rules no run used');
  });
});
