/**
 * `drainbridge repair NODE` as an operator runs it (a separate process, against the simulator): it shows
 * every record of the node it cannot read and what it would write, writes nothing without a yes, and with
 * `--yes` rewrites the ledger, the admission queue, the owner claim and the branch states — after which
 * the workflow reads them again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LEDGER_ANNOTATION, readLedger } from '../../lib/node/ledger.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { assertCleanError } from '../support/clean-error.ts';
import { drainbridge } from '../support/cli.ts';
import { assertNoWrites } from '../support/request-log.ts';

const NODES = { group: '', resource: 'nodes' };
const LEASES = { group: 'coordination.k8s.io', resource: 'leases' };
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };
const T = '2026-01-02T03:04:05.000Z';

describe('drainbridge repair NODE', () => {
  let cluster: DrainbridgeCluster;
  const run = (args: string[]) => drainbridge(['repair', ...args, '--kubeconfig', cluster.adminKubeconfigPath]);

  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'small', speed: 50 });
    const { store } = cluster.sim;
    store.mutate(NODES, { name: 'node-1' }, (node) => {
      node.metadata.annotations = {
        ...node.metadata.annotations,
        [LEDGER_ANNOTATION]: JSON.stringify({
          holds: { 'req-a': { requester: 'alice', origin: 'manual', since: T }, 'req-b': 7 },
          released: { old: 'yesterday' },
          changes: 'cordoned',
        }),
      };
      (node.spec as Record<string, unknown>).unschedulable = true;
      return node;
    });
    store.create(LEASES, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'drainbridge-admission',
        namespace: 'drainbridge',
        annotations: { 'drainbridge.io/admission-queue': '[1, 2' },
      },
      spec: {},
    });
    store.create(EVACUATIONS, {
      apiVersion: 'drainbridge.io/v1alpha1',
      kind: 'Evacuation',
      metadata: {
        name: 'req-a',
        labels: { 'drainbridge.io/node': 'node-1' },
        annotations: { 'drainbridge.io/owner': '{"executionId": 5}' },
      },
      spec: { requestId: 'req-a', nodeName: 'node-1' },
      status: { branches: { pods: { version: '3', state: { pods: 'gone', moved: {} }, moved: 2, total: 4 } } },
    });
  });
  after(async () => {
    await cluster?.stop();
  });

  it("another node shows only the cluster-wide record (the admission queue), not node-1's", async () => {
    const mark = cluster.sim.requestLog.mark();
    const result = await run(['node-2']);
    assert.equal(result.code, 5, 'refused: not confirmed');
    assert.match(result.stdout, /node node-2: 1 record\(s\) cannot be read/);
    assert.match(result.stdout, /admission queue/);
    assert.doesNotMatch(result.stdout, /ledger|owner claim/);
    assertNoWrites(cluster.sim, mark, 'repair of node-2 without --yes');
  });

  it('shows what it found and would write; without --yes on a non-terminal it writes nothing', async () => {
    const mark = cluster.sim.requestLog.mark();
    const result = await run(['node-1']);
    assert.equal(result.code, 5, 'refused: not confirmed');
    assert.match(result.stdout, /node node-1: 4 record\(s\) cannot be read/);
    assert.match(result.stdout, /ledger \(node annotation drainbridge\.io\/ledger\) of node node-1/);
    assert.match(result.stdout, /kept hold req-a \(manual, alice/);
    assert.match(result.stdout, /dropped hold req-b: 7 is not a hold/);
    assert.match(result.stdout, /dropped tombstone old/);
    assert.match(result.stdout, /admission queue \(Lease annotation drainbridge\.io\/admission-queue\)/);
    assert.match(result.stdout, /owner claim \(Evacuation annotation drainbridge\.io\/owner\) of Evacuation req-a/);
    assert.match(result.stdout, /pods branch state of Evacuation req-a/);
    assertCleanError(result.stderr, ['add --yes'], 'the refusal');
    assertNoWrites(cluster.sim, mark, 'repair without --yes');
  });

  it('with --yes writes each repair; the records read again', async () => {
    const result = await run(['node-1', '--yes']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /repaired 4 record\(s\) on node node-1/);
    const { store } = cluster.sim;
    const node = store.get(NODES, undefined, 'node-1');
    const ledger = readLedger(node as never);
    assert.deepEqual(Object.keys(ledger.holds), ['req-a']);
    assert.deepEqual(ledger.released, {});
    assert.equal(ledger.changes?.cordoned, false, "the cordon is not known to be drainbridge's: restore leaves it");
    assert.equal(ledger.changes?.priorUnschedulable, true);
    const lease = store.get(LEASES, 'drainbridge', 'drainbridge-admission');
    assert.equal(lease?.metadata.annotations?.['drainbridge.io/admission-queue'], '{}');
    const record = store.get(EVACUATIONS, undefined, 'req-a') as unknown as {
      metadata: { annotations?: Record<string, string> };
      status: { branches: { pods: { version: string; state?: unknown; moved?: number } } };
    };
    assert.equal(record.metadata.annotations?.['drainbridge.io/owner'], undefined);
    assert.equal(record.status.branches.pods.state, undefined, 'the branch state is reset');
    assert.equal(record.status.branches.pods.moved, 2, 'the counts people read are kept');
    const again = await run(['node-1']);
    assert.match(again.stdout, /nothing to repair/);
  });

  it('refuses bad usage with the usage text and writes nothing', async () => {
    const mark = cluster.sim.requestLog.mark();
    const none = await drainbridge(['repair', '--kubeconfig', cluster.adminKubeconfigPath]);
    assert.equal(none.code, 2);
    assertCleanError(none.stderr, ['missing NODE', "Run 'drainbridge repair --help'"]);
    const missing = await run(['node-9', '--yes']);
    assert.equal(missing.code, 2);
    assertCleanError(missing.stderr, ['node-9', /not found|NotFound/]);
    assertNoWrites(cluster.sim, mark, 'bad usage');
  });
});
