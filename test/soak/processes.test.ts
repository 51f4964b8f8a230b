/**
 * The soak's process wrapper: a command that cannot start (its interpreter gone, as when node_modules is
 * reinstalled under a running soak) ends as a failed command with the reason in its log, and the soak
 * goes on to judge the run instead of dying on an unhandled 'error' event (seen at minute 50 of a
 * 60-minute run, 28 Nov).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Child, Replica } from '../../soak/processes.ts';
import { waitUntil } from '../support/wait.ts';

test('a command whose interpreter is missing exits 127 with the reason in its log and tail', async () => {
  const logFile = join(mkdtempSync(join(tmpdir(), 'soak-processes-')), 'cli.log');
  const child = new Child(['evacuate', 'node-1'], {}, logFile, '/nonexistent/node_modules/node/bin/node');
  const exit = await child.exited;
  assert.deepEqual(exit, { code: 127, signal: null });
  assert.match(child.tail.join('\n'), /could not start drainbridge evacuate: .*ENOENT/);
  assert.deepEqual(child.crashLines, [], 'not counted as a drainbridge crash');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.match(readFileSync(logFile, 'utf8'), /could not start drainbridge evacuate/);
});

test('a replica that exits unasked starts again, as a Deployment restarts it; a retired one does not', {
  timeout: 60_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'soak-replica-'));
  // `run` with a flag it does not know exits 2 at once: a replica that ends without being asked to.
  const replica = new Replica('run-x', ['run', '--no-such-flag'], {}, dir);
  replica.start();
  await waitUntil('the replica was started a second time', () => replica.lives().length >= 2, 30_000);
  const [first] = replica.lives();
  assert.equal(first?.exit?.code, 2, 'the first life exited 2, unasked');
  assert.equal(first?.sentSignal, undefined);
  await replica.retire('SIGTERM');
  await waitUntil('the last life ended', () => replica.lives().every((life) => life.exit !== undefined), 30_000);
  const lives = replica.lives().length;
  await new Promise((resolve) => setTimeout(resolve, 12_000));
  assert.equal(replica.lives().length, lives, 'retired: not started again');
});
