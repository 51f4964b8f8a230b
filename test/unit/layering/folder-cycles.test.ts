/**
 * The parent↔child folder check (scripts/check-folder-cycles.ts, part of `npm run check:layers`): a folder
 * and its own subfolder importing each other is refused, one direction alone is kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parentChildCycles, relativeSpecifiers } from '../../../scripts/check-folder-cycles.ts';

describe('parent↔child folder cycles', () => {
  it('refuses a parent whose own file imports its child while the child imports the parent', () => {
    const cycles = parentChildCycles([
      ['lib/branches/registry.ts', 'lib/branches/pods/definition.ts'],
      ['lib/branches/pods/definition.ts', 'lib/branches/branch.ts'],
    ]);
    assert.deepEqual(
      cycles.map((c) => [c.parent, c.child]),
      [['lib/branches', 'lib/branches/pods']],
    );
    assert.deepEqual(cycles[0]?.up, ['lib/branches/pods/definition.ts', 'lib/branches/branch.ts']);
  });

  it('counts a grandchild as part of its child', () => {
    const cycles = parentChildCycles([
      ['lib/sources/agent.ts', 'lib/sources/clouds/aws/source.ts'],
      ['lib/sources/clouds/aws/source.ts', 'lib/sources/notice.ts'],
    ]);
    assert.deepEqual(
      cycles.map((c) => [c.parent, c.child]),
      [['lib/sources', 'lib/sources/clouds']],
    );
  });

  it('keeps one direction alone, and siblings (dependency-cruiser judges those)', () => {
    assert.deepEqual(
      parentChildCycles([
        ['lib/branches/registry.ts', 'lib/branches/pods/definition.ts'],
        ['lib/branches/pods/definition.ts', 'lib/branches/contract/branch.ts'],
        ['lib/sources/cordon/source.ts', 'lib/sources/types.ts'],
        ['lib/sources/forwarder/forwarder.ts', 'lib/sources/cordon/source.ts'],
      ]),
      [],
    );
  });

  it('reads static, type-only, re-exporting and dynamic imports', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      "export { c } from './c/index.ts';",
      "const d = await import('../../d.ts');",
      "import './side-effect.ts';",
      "import { z } from 'zod';",
    ].join('\n');
    assert.deepEqual(relativeSpecifiers(text), ['./a.ts', '../b.ts', './c/index.ts', '../../d.ts', './side-effect.ts']);
  });
});
