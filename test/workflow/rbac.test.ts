/**
 * The ServiceAccount in deploy/ can do exactly what drainbridge calls, and nothing more. Representative
 * runs of every command (plan, evacuate — succeeding, waiting for a slot and failing at a deadline —
 * abort, restore — one of them deleting an expired record —, repair, and an evacuation with
 * --disable-eviction) go to the simulator as drainbridge's ServiceAccount; the calls are read from the simulator's request log and compared with the rules of
 * deploy/rbac/drainbridge.yaml (ClusterRole and the Lease Role) and deploy/rbac/disable-eviction.yaml.
 * A new call without a rule fails (it is also refused with 403 during the runs), and so does a rule no
 * run uses.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { LEDGER_ANNOTATION } from '../../lib/node/ledger.ts';
import { OWNER_ANNOTATION } from '../../lib/workflow/ownership.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import type { RequestRecord } from '../../sim/server/request-log.ts';
import { drainbridge } from '../support/cli.ts';
import { DRAINBRIDGE_SA } from '../support/request-log.ts';

const DEPLOY = new URL('../../deploy/rbac/', import.meta.url);

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
 * Rules the runs here cannot reach without KubeVirt migrations in flight and the restart opt-in: the
 * KubeVirt suite (test/workflow/kubevirt.test.ts) runs as this ServiceAccount and asserts from the request
 * log that drainbridge created its migrations, deleted exactly its own on Restore, and read the VMs'
 * VirtualMachines for the restart opt-in — so each of these is used by a call there.
 */
const USED_BY_THE_KUBEVIRT_SUITE = new Set([
  'create kubevirt.io/virtualmachineinstancemigrations',
  'delete kubevirt.io/virtualmachineinstancemigrations',
  'get kubevirt.io/virtualmachines',
]);

const allows = (rule: Rule, call: ReturnType<typeof callOf>) =>
  rule.apiGroups.includes(call.group) &&
  rule.resources.includes(call.resource) &&
  rule.verbs.includes(call.verb) &&
  (rule.namespace === undefined || rule.namespace === call.namespace);

describe('RBAC: the ServiceAccount in deploy/ can do exactly what the code calls', () => {
  let cluster: DrainbridgeCluster;
  let adminKubeconfig: string;
  const run = async (args: string[], expectCode = 0) => {
    const result = await drainbridge([...args, '--kubeconfig', cluster.kubeconfigPath]);
    assert.equal(result.code, expectCode, `drainbridge ${args.join(' ')}:\n${result.stdout}\n${result.stderr}`);
    return result;
  };

  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'small', speed: 100 });
    adminKubeconfig = cluster.adminKubeconfigPath;
    // The representative runs, each as a person (or Lambda) would run it.
    await run(['plan', 'node-1', '--ignore-daemonsets'], 3); // dry-run evictions; exit 3: the bare pod blocks
    await run(['evacuate', 'node-1', '--ignore-daemonsets', '--force', '--request-id', 'rbac-1']);
    // A second node with the only slot taken: waits in line, then fails at its deadline (RecordFailure).
    const deadline = new Date(Date.now() + 3_000).toISOString();
    await run(['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'rbac-2', '--deadline', deadline], 1);
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
      'deploy/rbac/disable-eviction.yaml',
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
    cluster.sim.requestLog
      .all({ user: DRAINBRIDGE_SA })
      .filter((r) => r.resource !== '' && r.verb !== '' && !ALLOWED_TO_EVERYONE.has(`${r.group}/${r.resource}`));

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
            if (USED_BY_THE_KUBEVIRT_SUITE.has(`${verb} ${group}/${resource}`)) continue;
            if (!made.some((call) => allows(single, call)))
              unused.push(`${verb} ${group || 'core'}/${resource} (${rule.from})`);
          }
        }
      }
    }
    assert.deepEqual(unused, [], 'rules no run used');
  });
});
