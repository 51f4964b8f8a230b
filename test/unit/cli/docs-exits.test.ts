/**
 * docs/cli.md's table of exit statuses is the one `--help` prints (EXIT_MEANINGS in cli/exit-codes.ts):
 * the same statuses, in the same order, with the same words (the page's `code` marks aside).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { EXIT, EXIT_MEANINGS, type ExitName } from '../../../cli/exit-codes.ts';

const CLI_DOC = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');

/** The rows `| status | meaning |` of docs/cli.md's exit-status table. */
function tableRows(text: string): [string, string][] {
  const start = text.indexOf('| status | meaning');
  assert.ok(start >= 0, 'docs/cli.md has the exit-status table');
  const lines = text.slice(start).split('\n');
  const rows: [string, string][] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim().replaceAll('`', ''));
    rows.push([cells[0] ?? '', cells[1] ?? '']);
  }
  return rows;
}

describe('the exit-status table in docs/cli.md', () => {
  it('equals EXIT_MEANINGS, status by status', () => {
    const expected = (Object.keys(EXIT) as ExitName[]).map((name): [string, string] => [
      String(EXIT[name]),
      EXIT_MEANINGS[name],
    ]);
    assert.deepEqual(tableRows(CLI_DOC), expected);
  });

  it('the check sees a difference', () => {
    const changed = CLI_DOC.replace('| 3      | `plan`:', '| 3      | `plan` (dry):');
    assert.notDeepEqual(tableRows(changed), tableRows(CLI_DOC));
  });
});
