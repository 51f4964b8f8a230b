/** The Nova evacuation planner: pure, table-driven. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEFAULT_NOVA_OPTIONS,
  type NovaEvacuationOptions,
  type ObservedServer,
  type ServerProgress,
} from '../../../lib/branches/nova/model.ts';
import { advanceInFlight, dispositionOf, failureBlocker, planPass } from '../../../lib/branches/nova/planner.ts';

const NOW = new Date('2026-11-21T03:00:00Z');
const secondsAgo = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();

const server = (id: string, fields: Partial<ObservedServer> = {}): ObservedServer => ({
  id,
  name: `vm-${id}`,
  status: 'ACTIVE',
  host: 'src',
  taskState: null,
  ...fields,
});

const migrating = (fields: Partial<ServerProgress> = {}): ServerProgress => ({
  name: 'vm-a',
  phase: 'live-migrating',
  attempts: 1,
  sinceMigrationId: 10,
  startedAt: secondsAgo(5),
  ...fields,
});

const options = (o: Partial<NovaEvacuationOptions> = {}): NovaEvacuationOptions => ({ ...DEFAULT_NOVA_OPTIONS, ...o });

describe('advanceInFlight', () => {
  const cases: {
    name: string;
    progress: ServerProgress;
    observed: ObservedServer | null;
    options?: Partial<NovaEvacuationOptions>;
    phase: ServerProgress['phase'];
    action?: string;
    failure?: RegExp;
  }[] = [
    {
      name: 'completed migration and new host: moved',
      progress: migrating(),
      observed: server('a', { host: 'dst', migration: { id: 11, status: 'completed', destCompute: 'dst' } }),
      phase: 'moved',
    },
    {
      name: 'host changed but migration still running: in flight',
      progress: migrating(),
      observed: server('a', {
        host: 'dst',
        taskState: 'migrating',
        migration: { id: 11, status: 'running', destCompute: 'dst' },
      }),
      phase: 'live-migrating',
    },
    {
      name: 'record not there yet, task_state migrating: in flight',
      progress: migrating({ startedAt: secondsAgo(1) }),
      observed: server('a', { taskState: 'migrating' }),
      phase: 'live-migrating',
    },
    {
      name: 'no record long after the 202 and idle: failed attempt, back to pending',
      progress: migrating({ startedAt: secondsAgo(120) }),
      observed: server('a'),
      phase: 'pending',
      failure: /no migration record appeared/,
    },
    {
      name: "error with attempts left: pending, with Nova's reason",
      progress: migrating({ attempts: 1 }),
      observed: server('a', {
        migration: { id: 11, status: 'error', destCompute: null },
        failure: 'No valid host was found.',
      }),
      phase: 'pending',
      failure: /No valid host/,
    },
    {
      name: 'error on the last attempt: failed',
      progress: migrating({ attempts: 3 }),
      observed: server('a', { migration: { id: 11, status: 'error', destCompute: null } }),
      phase: 'failed',
      failure: /migration 11 ended error/,
    },
    {
      name: 'error but task_state still set: wait for Nova to settle',
      progress: migrating(),
      observed: server('a', { taskState: 'migrating', migration: { id: 11, status: 'error', destCompute: null } }),
      phase: 'live-migrating',
    },
    {
      name: 'server went to ERROR: failed attempt',
      progress: migrating({ attempts: 3 }),
      observed: server('a', { status: 'ERROR', migration: { id: 11, status: 'error', destCompute: null } }),
      phase: 'failed',
      failure: /went to ERROR/,
    },
    {
      name: 'server deleted meanwhile: nothing left to move',
      progress: migrating(),
      observed: null,
      phase: 'moved',
    },
    {
      name: 'running past the abort timeout: abort',
      progress: migrating({ startedAt: secondsAgo(20) }),
      observed: server('a', { taskState: 'migrating', migration: { id: 11, status: 'running', destCompute: 'dst' } }),
      options: { abortAfterSeconds: 10 },
      phase: 'live-migrating',
      action: 'abort',
    },
    {
      name: 'abort already requested: not again',
      progress: migrating({ startedAt: secondsAgo(20), abortRequested: true }),
      observed: server('a', { taskState: 'migrating', migration: { id: 11, status: 'running', destCompute: 'dst' } }),
      options: { abortAfterSeconds: 10 },
      phase: 'live-migrating',
    },
    {
      name: 'accepted (not abortable) past the timeout: wait',
      progress: migrating({ startedAt: secondsAgo(20) }),
      observed: server('a', { taskState: 'migrating', migration: { id: 11, status: 'accepted', destCompute: 'dst' } }),
      options: { abortAfterSeconds: 10 },
      phase: 'live-migrating',
    },
    {
      name: 'record completed but the server still migrating on the source, within twice the timeout: wait',
      progress: migrating({ startedAt: secondsAgo(15), abortRequested: true }),
      observed: server('a', {
        status: 'MIGRATING',
        taskState: 'migrating',
        migration: { id: 11, status: 'completed', destCompute: 'dst' },
      }),
      options: { abortAfterSeconds: 10 },
      phase: 'live-migrating',
    },
    {
      name: 'record completed but the server still migrating on the source past twice the timeout: given up, named',
      progress: migrating({ startedAt: secondsAgo(21), attempts: 1 }),
      observed: server('a', {
        status: 'MIGRATING',
        taskState: 'migrating',
        migration: { id: 11, status: 'completed', destCompute: 'dst' },
      }),
      options: { abortAfterSeconds: 10, maxAttempts: 3 },
      phase: 'failed',
      failure:
        /still MIGRATING \(task_state migrating\) on src 21s .*migration 11 is completed \(to dst\): left to Nova/,
    },
    {
      name: 'abort requested and still running past twice the timeout: given up',
      progress: migrating({ startedAt: secondsAgo(25), abortRequested: true }),
      observed: server('a', {
        status: 'MIGRATING',
        taskState: 'migrating',
        migration: { id: 11, status: 'running', destCompute: 'dst' },
      }),
      options: { abortAfterSeconds: 10 },
      phase: 'failed',
      failure: /migration 11 is running/,
    },
    {
      name: 'running, first seen past twice the timeout and never aborted: abort first, not given up',
      progress: migrating({ startedAt: secondsAgo(25) }),
      observed: server('a', {
        status: 'MIGRATING',
        taskState: 'migrating',
        migration: { id: 11, status: 'running', destCompute: 'dst' },
      }),
      options: { abortAfterSeconds: 10 },
      phase: 'live-migrating',
      action: 'abort',
    },
    {
      name: 'abort asked for 3 s ago, past twice the timeout: the abort gets its own timeout, wait',
      progress: migrating({ startedAt: secondsAgo(25), abortRequested: true, abortRequestedAt: secondsAgo(3) }),
      observed: server('a', {
        status: 'MIGRATING',
        taskState: 'migrating',
        migration: { id: 11, status: 'running', destCompute: 'dst' },
      }),
      options: { abortAfterSeconds: 10 },
      phase: 'live-migrating',
    },
    {
      name: 'abort asked for 11 s ago and still running: given up, the abort named',
      progress: migrating({ startedAt: secondsAgo(25), abortRequested: true, abortRequestedAt: secondsAgo(11) }),
      observed: server('a', {
        status: 'MIGRATING',
        taskState: 'migrating',
        migration: { id: 11, status: 'running', destCompute: 'dst' },
      }),
      options: { abortAfterSeconds: 10 },
      phase: 'failed',
      failure: /migration 11 is running \(to dst\), aborted by drainbridge and not yet ended: left to Nova/,
    },
    {
      name: 'no record and still migrating past twice the timeout: given up',
      progress: migrating({ startedAt: secondsAgo(130) }),
      observed: server('a', { status: 'MIGRATING', taskState: 'migrating' }),
      options: { abortAfterSeconds: 60 },
      phase: 'failed',
      failure: /no migration record: left to Nova/,
    },
    {
      name: 'running past force-complete: force-complete',
      progress: migrating({ startedAt: secondsAgo(3) }),
      observed: server('a', { taskState: 'migrating', migration: { id: 11, status: 'running', destCompute: 'dst' } }),
      options: { forceCompleteAfterSeconds: 2 },
      phase: 'live-migrating',
      action: 'force-complete',
    },
    {
      name: 'cancelled (after our abort) on the last attempt: failed',
      progress: migrating({ attempts: 1, abortRequested: true }),
      observed: server('a', { migration: { id: 11, status: 'cancelled', destCompute: 'dst' } }),
      options: { maxAttempts: 1 },
      phase: 'failed',
      failure: /cancelled/,
    },
    {
      name: 'cold migration waiting for confirmation: confirm',
      progress: migrating({ phase: 'cold-migrating' }),
      observed: server('a', {
        status: 'VERIFY_RESIZE',
        host: 'dst',
        migration: { id: 11, status: 'finished', destCompute: 'dst' },
      }),
      phase: 'cold-migrating',
      action: 'confirm',
    },
    {
      name: 'cold migration confirmed, SHUTOFF on the new host: moved',
      progress: migrating({ phase: 'cold-migrating', confirmRequested: true }),
      observed: server('a', {
        status: 'SHUTOFF',
        host: 'dst',
        migration: { id: 11, status: 'confirmed', destCompute: 'dst' },
      }),
      phase: 'moved',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const step = advanceInFlight(c.progress, c.observed, {
        sourceHost: 'src',
        options: options(c.options),
        now: NOW,
      });
      assert.equal(step.progress.phase, c.phase);
      assert.equal(step.action?.kind, c.action);
      if (c.failure) assert.match(step.progress.lastFailure ?? '', c.failure);
    });
  }
});

describe('dispositionOf', () => {
  const table: [string, Partial<ObservedServer>, Partial<NovaEvacuationOptions>, string][] = [
    ['ACTIVE', {}, {}, 'start:live-migrate'],
    ['PAUSED', { status: 'PAUSED' }, {}, 'start:live-migrate'],
    ['SHUTOFF by default', { status: 'SHUTOFF' }, {}, 'blocker:NotLiveMigratable'],
    ['SHUTOFF with cold migration', { status: 'SHUTOFF' }, { shutoffPolicy: 'cold-migrate' }, 'start:cold-migrate'],
    ['ERROR', { status: 'ERROR' }, {}, 'blocker:NotLiveMigratable'],
    ['SHELVED_OFFLOADED', { status: 'SHELVED_OFFLOADED' }, {}, 'blocker:NotLiveMigratable'],
    ['RESCUE', { status: 'RESCUE' }, {}, 'blocker:NotLiveMigratable'],
    ['SUSPENDED', { status: 'SUSPENDED' }, {}, 'blocker:NotLiveMigratable'],
    ['BUILD (passes on its own)', { status: 'BUILD' }, {}, 'wait'],
    ['ACTIVE but busy', { taskState: 'rebooting' }, {}, 'wait'],
  ];
  for (const [name, fields, opts, expected] of table) {
    test(name, () => {
      const d = dispositionOf(server('a', fields), options(opts));
      const got = 'start' in d ? `start:${d.start}` : 'blocker' in d ? `blocker:${d.blocker.code}` : 'wait';
      assert.equal(got, expected);
    });
  }
});

describe('planPass', () => {
  const plan = (
    onHost: ObservedServer[],
    servers: Record<string, ServerProgress> = {},
    o: Partial<NovaEvacuationOptions> = {},
    inFlight: Record<string, ObservedServer | null> = {},
  ) => planPass({ sourceHost: 'src', servers, observation: { onHost, inFlight }, options: options(o), now: NOW });

  test('starts no more than the concurrency limit, in name order', () => {
    const result = plan([server('c'), server('a'), server('b')], {}, { maxConcurrentMigrations: 2 });
    assert.deepEqual(
      result.actions.map((a) => [a.kind, a.serverId]),
      [
        ['live-migrate', 'a'],
        ['live-migrate', 'b'],
      ],
    );
    assert.equal(result.progressed, true);
    assert.equal(result.done, false);
  });

  test('in-flight migrations (ours and untracked) use up the limit', () => {
    const ours = { a: migrating() };
    const result = plan(
      [server('a', { taskState: 'migrating' }), server('b', { taskState: 'migrating' }), server('c')],
      ours,
      { maxConcurrentMigrations: 2 },
      { a: server('a', { taskState: 'migrating' }) },
    );
    assert.deepEqual(result.actions, []);
    assert.equal(result.inFlight, 2);
  });

  test('a server that landed after the disable is picked up from the fresh listing', () => {
    const result = plan([server('late')], { a: migrating({ phase: 'moved', destination: 'dst' }) });
    assert.deepEqual(result.actions, [{ kind: 'live-migrate', serverId: 'late' }]);
    assert.equal(result.servers.late?.phase, 'pending');
  });

  test('empty host and nothing in flight: done', () => {
    const result = plan(
      [],
      { a: migrating() },
      {},
      { a: server('a', { host: 'dst', migration: { id: 11, status: 'completed', destCompute: 'dst' } }) },
    );
    assert.equal(result.done, true);
    assert.equal(result.moved, 1);
    assert.equal(result.progressed, true);
  });

  test('nothing changed: not progressed', () => {
    const result = plan(
      [server('a', { taskState: 'migrating' })],
      { a: migrating() },
      {},
      { a: server('a', { taskState: 'migrating', migration: { id: 11, status: 'running', destCompute: 'dst' } }) },
    );
    assert.equal(result.progressed, false);
    assert.deepEqual(result.actions, []);
  });

  test('blockers: SHUTOFF and exhausted attempts, never started', () => {
    const failed = migrating({ phase: 'failed', attempts: 3, lastFailure: 'No valid host was found.' });
    const result = plan([server('a', { status: 'SHUTOFF' }), server('b')], { b: failed });
    assert.deepEqual(result.actions, []);
    assert.deepEqual(
      result.blockers.map((b) => [b.code, b.item?.uid]),
      [
        ['NotLiveMigratable', 'a'],
        ['NoValidHost', 'b'],
      ],
    );
    assert.equal(result.done, false);
  });

  test('a failed attempt with attempts left is started again in the same pass', () => {
    const result = plan(
      [server('a')],
      { a: migrating({ attempts: 1 }) },
      {},
      { a: server('a', { migration: { id: 11, status: 'error', destCompute: null } }) },
    );
    assert.deepEqual(result.actions, [{ kind: 'live-migrate', serverId: 'a' }]);
  });
});

test('failureBlocker names the server, the attempts and the cause', () => {
  const blocker = failureBlocker(
    'id-1',
    migrating({ name: 'db-1', attempts: 3, lastFailure: 'migration 12 ended error' }),
  );
  assert.equal(blocker.code, 'MigrationFailed');
  assert.equal(blocker.reason, 'server db-1 (id-1) could not be migrated after 3 attempt(s): migration 12 ended error');
});
