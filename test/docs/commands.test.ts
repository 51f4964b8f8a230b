/**
 * Every shell block of README.md and docs/*.md runs as written (test/docs/run-block.ts runs one; the
 * markers are described in test/docs/blocks.ts). Blocks for AWS, the Nova lab, the image, CI and the
 * new-user session are reported as skipped with where they are checked instead.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findKubectl } from '../../sim/kubectl.ts';
import { documentedBlocks, NOT_IN_SIMULATOR, notRunHere, runOnCluster } from './run-block.ts';

describe('every shell block of README.md and docs/ runs as written', () => {
  const blocks = documentedBlocks();

  it('every block is classified (a doc-test marker of a known kind, with its reason or ready line)', () => {
    const problems = blocks.filter((b) => b.problem).map((b) => `${b.file}:${b.line}: ${b.problem}`);
    assert.deepEqual(problems, []);
    assert.ok(blocks.length > 0, 'the pages have shell blocks');
  });

  it('the simulator-gap list names blocks that exist', () => {
    for (const pending of NOT_IN_SIMULATOR) {
      assert.ok(
        blocks.some((b) => b.file === pending.file && b.body.trimStart().startsWith(pending.startsWith)),
        `listed block ${pending.file}: ${pending.startsWith}`,
      );
    }
  });

  // The pages' commands are kubectl's as much as drainbridge's; CI has kubectl (test/fidelity fails without).
  const noKubectl = findKubectl() ? undefined : 'kubectl not found on this machine';
  if (noKubectl && process.env.CI === 'true') it('kubectl is present in CI', () => assert.fail(noKubectl));
  for (const block of blocks) {
    if (block.kind === undefined || block.problem) continue;
    const skip = notRunHere(block) ?? noKubectl ?? false;
    it(`${block.file}:${block.line} (${block.kind})`, { skip, timeout: 300_000 }, () => runOnCluster(block));
  }
});
