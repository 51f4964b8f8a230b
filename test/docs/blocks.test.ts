/** The doc test's reading of markdown: which blocks are commands, how each is marked, how lines join. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandsOf, shellBlocks } from './blocks.ts';

const fence = '```';

describe('shell blocks of a page', () => {
  it('a marked block is classified; an output block (no language) is not a command', () => {
    const page = `intro\n\n<!-- doc-test: cluster -->\n\n${fence}sh\nkubectl get nodes\n${fence}\n\n${fence}\noutput\n${fence}\n`;
    const blocks = shellBlocks('p.md', page);
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0]?.kind, 'cluster');
    assert.equal(blocks[0]?.problem, undefined);
    assert.equal(blocks[0]?.line, 5);
  });

  it('an unmarked block, an unknown kind, a reason missing, a service without its ready line: each a problem', () => {
    const pages = [
      `${fence}bash\nls\n${fence}`,
      `<!-- doc-test: maybe -->\n${fence}sh\nls\n${fence}`,
      `<!-- doc-test: aws -->\n${fence}console\nls\n${fence}`,
      `<!-- doc-test: service -->\n${fence}sh\nnpx drainbridge run\n${fence}`,
    ];
    for (const page of pages) assert.ok(shellBlocks('p.md', page)[0]?.problem, page);
  });

  it('a service block keeps its ready pattern; an elsewhere block its reason', () => {
    const [service] = shellBlocks('p.md', `<!-- doc-test: service /leads now/ -->\n${fence}sh\nx\n${fence}`);
    assert.equal(service?.arg, '/leads now/');
    const [aws] = shellBlocks('p.md', `<!-- doc-test: aws; needs an AWS account -->\n${fence}sh\nx\n${fence}`);
    assert.equal(aws?.reason, 'needs an AWS account');
  });
});

describe('the commands of a block', () => {
  it('joins continuation lines, keeps heredocs, drops comment lines, reads # exit N', () => {
    const body = [
      '# a comment line',
      'drainbridge plan node-1   # exit 3: blocked',
      'aws eks thing \\',
      '  --flag x',
      "kubectl apply -f - <<'YAML'   # the medik8s way",
      'kind: NodeMaintenance',
      'YAML',
      "A='[1,",
      "  2]' \\",
      '  run',
    ].join('\n');
    const commands = commandsOf({ body, line: 10 });
    assert.deepEqual(
      commands.map((c) => [c.text, c.exit, c.line]),
      [
        ['drainbridge plan node-1', 3, 12],
        ['aws eks thing \\\n  --flag x', 0, 13],
        ["kubectl apply -f - <<'YAML'\nkind: NodeMaintenance\nYAML", 0, 15],
        ["A='[1,\n  2]' \\\n  run", 0, 18],
      ],
    );
  });
});
