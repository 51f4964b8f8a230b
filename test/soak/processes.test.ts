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
import { Child } from '../../soak/processes.ts';

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
