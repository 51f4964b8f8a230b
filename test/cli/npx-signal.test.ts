/**
 * Ctrl-C through `npx drainbridge`, as a terminal sends it: SIGINT to the whole foreground process group
 * (npm, the shell npm runs the bin with, drainbridge). npx must exit with drainbridge's own status — here
 * `drainbridge sim`, whose status on a signal is 0 — not with the one the shell in between or npm's own
 * forwarding of the signal would give (130): the project's .npmrc runs the bin through bash, which hands
 * the process over, and drainbridge reads npm's forwarded copy of the signal as the same Ctrl-C.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';

const ROOT = new URL('../../', import.meta.url).pathname;

describe('Ctrl-C through npx', () => {
  it('npx exits with drainbridge’s status (sim: 0 on SIGINT), not 130', async () => {
    // detached: a process group of its own, as a shell gives a foreground job. The environment a person
    // has: without the test runner's NODE_TEST_CONTEXT, which makes a node process report to the runner.
    const { NODE_TEST_CONTEXT: _runner, ...env } = process.env;
    const child = spawn('npx', ['drainbridge', 'sim', '--port', '0', '--no-tls'], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('close', (code, signal) => resolve({ code, signal }));
    });
    const killer = setTimeout(() => process.kill(-(child.pid ?? 0), 'SIGKILL'), 60_000);
    try {
      for (const until = Date.now() + 50_000; !/drainbridge sim: serving/.test(out); ) {
        assert.ok(Date.now() < until, `the simulator did not start:\n${out}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      process.kill(-(child.pid ?? 0), 'SIGINT');
      const ended = await exited;
      assert.deepEqual(ended, { code: 0, signal: null }, out);
      assert.match(out, /drainbridge sim: SIGINT, stopping/);
    } finally {
      clearTimeout(killer);
    }
  });
});
