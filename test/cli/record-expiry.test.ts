/**
 * Evacuation records expire (lib/progress/expiry.ts): after `drainbridge restore`, `kubectl get
 * evacuations` still lists the request's record until DRAINBRIDGE_RECORD_TTL_HOURS have passed since its
 * Restore finished; then the next admission or Restore deletes it. A record still needed — its node still
 * held by the request, an execution still claiming it — stays past its time, and a late duplicate of an
 * expired request is dropped on the ledger's tombstone without writing anything (no record comes back).
 * Real commands as drainbridge's ServiceAccount, real kubectl as the admin; time passes by moving a
 * record's `restore.finishedAt` back (the only thing the sweep reads the time from).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ENDED_LABEL, RESTORED_LABEL } from '../../lib/progress/expiry.ts';
import { OWNER_ANNOTATION } from '../../lib/workflow/owner-record.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { assertNoNoise, runCli } from './run-cli.ts';

const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };
const HOUR = 3_600_000;

describe('Evacuation records expire after their request was restored', () => {
  let cluster: DrainbridgeCluster;
  // Two slots: one node stays held while another is evacuated (the "still held" record below).
  const env = { DRAINBRIDGE_MAX_HELD_NODES: '2' };

  before(async () => {
    cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 50 });
  });
  after(async () => {
    await cluster?.stop();
  });

  async function drainbridge(expected: number, args: string[], extraEnv: Record<string, string> = {}) {
    const result = await runCli([...args, '--kubeconfig', cluster.kubeconfigPath], { ...env, ...extraEnv });
    assert.equal(result.code, expected, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
    assert.equal(assertNoNoise(result.stdout + result.stderr), undefined);
    return result;
  }

  /** What `kubectl get evacuations` lists, by name (the admin's view; the simulator serves from this process). */
  async function listed(selector?: string): Promise<string[]> {
    const args = ['--kubeconfig', cluster.adminKubeconfigPath, 'get', 'evacuations', '-o', 'name'];
    const { stdout } = await promisify(execFile)('kubectl', selector ? [...args, '-l', selector] : args);
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/^evacuation\.drainbridge\.io\//, ''))
      .sort();
  }

  /**
   * Moves the record's Restore end, and the owner mark its evacuation left, `hours` into the past; with
   * `owner`, an execution claims the request now.
   */
  function restoredAgo(name: string, hours: number, owner?: string): void {
    cluster.sim.store.mutate(EVACUATIONS, { name }, (record) => {
      const object = record as unknown as {
        metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
        status: { restore?: Record<string, string> };
      };
      const at = new Date(Date.now() - hours * HOUR).toISOString();
      object.status.restore = { startedAt: at, ...object.status.restore, finishedAt: at };
      object.metadata.labels = { ...object.metadata.labels, [RESTORED_LABEL]: 'true' };
      // The owner mark the evacuation left ages with it; `owner` is an execution claiming the request now.
      const mark = object.metadata.annotations?.[OWNER_ANNOTATION];
      const claim = owner
        ? { executionId: owner, seen: new Date().toISOString() }
        : mark && {
            ...JSON.parse(mark),
            seen: new Date(Date.parse(JSON.parse(mark).seen) - hours * HOUR).toISOString(),
          };
      if (claim)
        object.metadata.annotations = { ...object.metadata.annotations, [OWNER_ANNOTATION]: JSON.stringify(claim) };
      return record;
    });
  }

  /** Moves a never-held request's end, and the owner mark its execution left, `hours` into the past. */
  function endedAgo(name: string, hours: number): void {
    cluster.sim.store.mutate(EVACUATIONS, { name }, (record) => {
      const object = record as unknown as {
        metadata: { annotations?: Record<string, string> };
        status: { endedAt?: string };
      };
      object.status.endedAt = new Date(Date.now() - hours * HOUR).toISOString();
      const mark = object.metadata.annotations?.[OWNER_ANNOTATION];
      if (mark) {
        const seen = new Date(Date.parse(JSON.parse(mark).seen) - hours * HOUR).toISOString();
        object.metadata.annotations = {
          ...object.metadata.annotations,
          [OWNER_ANNOTATION]: JSON.stringify({ ...JSON.parse(mark), seen }),
        };
      }
      return record;
    });
  }

  it('kubectl lists a restored record until its TTL, then not; a late duplicate writes nothing', async () => {
    await drainbridge(0, ['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'exp-1']);
    await drainbridge(0, ['restore', 'node-2']);
    assert.deepEqual(await listed(), ['exp-1']);
    assert.deepEqual(await listed(`${RESTORED_LABEL}=true`), ['exp-1'], 'the finished Restore labelled it');

    // 2 h later, with the default TTL (24 h): the next admission keeps it.
    restoredAgo('exp-1', 2);
    await drainbridge(0, ['evacuate', 'node-3', '--ignore-daemonsets', '--request-id', 'exp-2']);
    assert.deepEqual(await listed(), ['exp-1', 'exp-2']);
    // With DRAINBRIDGE_RECORD_TTL_HOURS=1, the Restore's sweep deletes it; exp-2, restored just now, stays.
    await drainbridge(0, ['restore', 'node-3'], { DRAINBRIDGE_RECORD_TTL_HOURS: '1' });
    assert.deepEqual(await listed(), ['exp-2']);

    // 25 h later: the next admission deletes exp-2 with the default TTL.
    restoredAgo('exp-2', 25);
    await drainbridge(0, ['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'exp-3']);
    assert.deepEqual(await listed(), ['exp-3']);
    await drainbridge(0, ['restore', 'node-2']);

    // A late duplicate of exp-1 (its record gone, its tombstone on node-2 still there): refused, no write.
    const mark = cluster.sim.requestLog.mark();
    const duplicate = await drainbridge(5, ['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'exp-1']);
    assert.match(duplicate.stderr, /request exp-1 was already released from node node-2; not cordoning again/);
    const writes = cluster.sim.requestLog
      .writes({ since: mark })
      .filter((r) => r.resource === 'evacuations' || r.resource === 'nodes');
    assert.deepEqual(
      writes.map((r) => `${r.verb} ${r.path}`),
      [],
      'neither the record nor the node was written',
    );
    assert.deepEqual(await listed(), ['exp-3'], 'the expired record did not come back');
  });

  it('a record still needed stays past its TTL: its node still held by the request, or an execution claiming it', async () => {
    // exp-4 holds node-2 (drained, not restored); its record made to look restored long ago.
    await drainbridge(0, ['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'exp-4']);
    restoredAgo('exp-4', 100);
    // exp-3 was restored, but an execution claims it right now (e.g. one cancelled by the Restore, finishing a step).
    restoredAgo('exp-3', 100, 'arn:aws:states:eu-west-1:123456789012:execution:drainbridge-evacuate:still-running');
    // An admission sweeps: both stay.
    await drainbridge(0, ['evacuate', 'node-3', '--ignore-daemonsets', '--request-id', 'exp-5']);
    assert.deepEqual(await listed(), ['exp-3', 'exp-4', 'exp-5']);
    // Once the claim is old and the hold released, they go at the next sweep.
    cluster.sim.store.mutate(EVACUATIONS, { name: 'exp-3' }, (record) => {
      const annotations = (record.metadata as { annotations?: Record<string, string> }).annotations ?? {};
      delete annotations[OWNER_ANNOTATION];
      return record;
    });
    await drainbridge(0, ['restore', 'node-2']);
    await drainbridge(0, ['restore', 'node-3']);
    assert.deepEqual(await listed(), ['exp-5'], 'exp-3 and exp-4 expired; exp-5 was restored just now');
  });

  it('a request that failed in line, never holding its node, ends there and its record expires alike', async () => {
    // Both slots taken; exp-8 waits in line for node-1 until its deadline and fails, never having held it.
    await drainbridge(0, ['evacuate', 'node-2', '--ignore-daemonsets', '--request-id', 'exp-6']);
    await drainbridge(0, ['evacuate', 'node-3', '--ignore-daemonsets', '--request-id', 'exp-7']);
    // Far enough ahead for the command to start on a loaded machine; it waits in line until then.
    const deadline = new Date(Date.now() + 60_000).toISOString();
    const failed = await runCli(
      [
        'evacuate',
        'node-1',
        '--ignore-daemonsets',
        '--request-id',
        'exp-8',
        '--deadline',
        deadline,
        '--kubeconfig',
        cluster.kubeconfigPath,
      ],
      env,
    );
    assert.equal(failed.code, 1, failed.stdout + failed.stderr);
    assert.match(failed.stderr, /DeadlineExceeded/);
    assert.deepEqual(await listed(`${ENDED_LABEL}=true`), ['exp-8'], 'the failed, never-held request ended');
    // 25 h later, the next Restore's sweep deletes it (exp-6 is restored just now and stays).
    endedAgo('exp-8', 25);
    await drainbridge(0, ['restore', 'node-2']);
    assert.ok(!(await listed()).includes('exp-8'), `exp-8 expired: ${(await listed()).join(', ')}`);
    await drainbridge(0, ['restore', 'node-3']);
  });
});
