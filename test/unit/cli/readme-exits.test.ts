/**
 * The README's table of exit statuses is the one `--help` prints (EXIT_MEANINGS in cli/exit-codes.ts):
 * the same statuses, in the same order, with the same words (the README's `code` marks aside).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { EXIT, EXIT_MEANINGS, type ExitName } from '../../../cli/exit-codes.ts';

const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

/** The rows `| status | meaning |` of the README's exit-status table. */
function readmeRows(text: string): [string, string][] {
  const start = text.indexOf('| status | meaning');
  assert.ok(start >= 0, 'the README has the exit-status table');
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

describe('the README exit-status table', () => {
  it('equals EXIT_MEANINGS, status by status', () => {
    const expected = (Object.keys(EXIT) as ExitName[]).map((name): [string, string] => [
      String(EXIT[name]),
      EXIT_MEANINGS[name],
    ]);
    assert.deepEqual(readmeRows(README), expected);
  });

  it('the check sees a difference', () => {
    const changed = README.replace('| 3      | `plan`:', '| 3      | `plan` (dry):');
    assert.notDeepEqual(readmeRows(changed), readmeRows(README));
  });
});
