/**
 * What `drainbridge demo` (npm start) and `drainbridge sim` write to the temporary directory — kubeconfigs
 * holding tokens — is gone when they exit: at the end, on Ctrl-C in the middle, on SIGTERM. Each run gets
 * its own TMPDIR, so the test sees only its own files.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli, startCli } from './run-cli.ts';

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function freshTmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-test-tmp-'));
  roots.push(dir);
  return dir;
}

describe('temporary files of the demo and the simulator', () => {
  it('the demo run to its end leaves nothing behind', async () => {
    const tmp = freshTmp();
    const result = await runCli(['demo'], { TMPDIR: tmp });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(readdirSync(tmp), []);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`the demo stopped with ${signal} in the middle leaves nothing behind`, async () => {
      const tmp = freshTmp();
      const demo = startCli(['demo'], { TMPDIR: tmp });
      await demo.waitFor(/== drainbridge plan/, 60_000);
      assert.ok(
        readdirSync(tmp).some((name) => name.startsWith('drainbridge-')),
        'the kubeconfig directory exists while the demo runs',
      );
      demo.child.kill(signal);
      const result = await demo.exited;
      assert.equal(result.code, signal === 'SIGINT' ? 130 : 143, result.stderr);
      assert.deepEqual(readdirSync(tmp), []);
    });
  }

  it('drainbridge sim removes the admin kubeconfig it wrote to the temporary directory when stopped', async () => {
    const tmp = freshTmp();
    const sim = startCli(['sim', '--scenario', 'small', '--port', '0'], { TMPDIR: tmp });
    const output = await sim.waitFor(/admin kubeconfig written to (\S+)/, 60_000);
    const path = /admin kubeconfig written to (\S+)/.exec(output)?.[1] ?? '';
    assert.ok(path.startsWith(tmp), path);
    assert.ok(readdirSync(tmp).length > 0);
    sim.child.kill('SIGINT');
    const result = await sim.exited;
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(readdirSync(tmp), []);
  });
});
