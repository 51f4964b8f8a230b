/**
 * The live display's frame on a terminal that is modelled here: rows that scroll into a scrollback, a
 * cursor that `ESC[nB` moves down without scrolling (as real terminals do). Lines printed above a frame
 * that grows and shrinks at the bottom of the screen all stay, in order; the frame is drawn once, at
 * the bottom, never taller than the screen.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitFrame, terminalFrame } from '../../../../cli/output/frame.ts';

const ESC = String.fromCharCode(27);

/** A terminal of `rows`×`columns`: what it shows and what scrolled off the top. */
function terminal(columns: number, rows: number) {
  const history: string[] = [];
  const screen: string[] = Array.from({ length: rows }, () => '');
  let row = 0;
  let column = 0;
  const lineFeed = () => {
    column = 0;
    row++;
    if (row === rows) {
      history.push(screen.shift() ?? '');
      screen.push('');
      row = rows - 1;
    }
  };
  const put = (char: string) => {
    if (column === columns) lineFeed();
    const line = (screen[row] ?? '').padEnd(column);
    screen[row] = line.slice(0, column) + char + line.slice(column + 1);
    column++;
  };
  const control = (params: string, code: string) => {
    const n = Number(params || '1');
    if (code === 'A') row = Math.max(0, row - n);
    else if (code === 'B') row = Math.min(rows - 1, row + n);
    else if (code === 'G') column = 0;
    else if (code === 'K') screen[row] = params === '2' ? '' : (screen[row] ?? '').slice(0, column);
  };
  return {
    columns,
    rows,
    isTTY: true,
    write(text: string) {
      for (let i = 0; i < text.length; i++) {
        const char = text[i] as string;
        if (char === ESC) {
          const match = /^\[(\??[0-9;]*)([A-Za-z])/.exec(text.slice(i + 1)) as RegExpExecArray;
          if (!match[1]?.startsWith('?')) control(match[1] ?? '', match[2] ?? '');
          i += match[0].length;
        } else if (char === '\n') lineFeed();
        else put(char);
      }
      return true;
    },
    /** Scrollback and screen, blank lines at the bottom dropped. */
    lines(): string[] {
      const all = [...history, ...screen].map((line) => line.trimEnd());
      while (all.length > 0 && all.at(-1) === '') all.pop();
      return all;
    },
  };
}

describe('the live frame on a terminal', () => {
  it('keeps every printed line when the frame grows at the bottom of the screen (no drift)', () => {
    const tty = terminal(60, 10);
    const frame = terminalFrame(tty);
    const printed: string[] = [];
    const frameWith = (bars: number) =>
      ['title', ...Array.from({ length: bars }, (_, i) => `  bar ${i}`), '  waiting for:', '    a wait'].join('\n');
    for (let i = 0; i < 30; i++) {
      const line = `line ${i}`;
      printed.push(line);
      frame.print(line, frameWith(1));
      // A bar inserted above an unchanged tail: log-update's partial redraw moved the cursor down past
      // the screen's last row here, and the next erase took printed lines with it.
      frame.show(frameWith(1 + (i % 3)));
      frame.show(frameWith(1 + ((i + 1) % 3)));
    }
    frame.show(frameWith(2));
    frame.finish();
    const lines = tty.lines();
    assert.deepEqual(
      lines.filter((l) => l.startsWith('line ')),
      printed,
      lines.join('\n'),
    );
    assert.deepEqual(lines.slice(-5), ['title', '  bar 0', '  bar 1', '  waiting for:', '    a wait']);
    assert.equal(lines.filter((l) => l === 'title').length, 1, 'one frame, at the bottom');
  });

  it('is cut to the screen: at most rows − 1 lines of columns − 1 characters', () => {
    const fitted = fitFrame(['a'.repeat(100), ...Array.from({ length: 30 }, (_, i) => `l${i}`)].join('\n'), 40, 8);
    const lines = fitted.split('\n');
    assert.equal(lines.length, 7);
    assert.equal(lines[0], `${'a'.repeat(38)}…`);
    const tty = terminal(40, 8);
    const frame = terminalFrame(tty);
    frame.print('above', fitted);
    frame.show(`${fitted}\nmore`);
    assert.deepEqual(tty.lines().slice(0, 2), ['above', `${'a'.repeat(38)}…`], 'the printed line stays above');
  });
});
