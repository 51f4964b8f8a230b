/**
 * The live display in a real terminal: `drainbridge demo` in tmux at 80×24 and 160×45, the screen read
 * while it runs (`capture-pane`) and the whole scrollback at the end. What a person sees must be true:
 *  - a bar per branch that has work, from its first pass; none for a branch that is off or empty
 *    (the demo's Nova, KubeVirt and infra-pods branches move nothing);
 *  - a blocker leaves the frame once it no longer holds; each wait once under "waiting for:";
 *  - each item line printed once, none lost when the output outgrows the screen;
 *  - the frame never taller than the terminal; the last frames coherent (restore ends `done`), and
 *    no frame below `== summary`.
 * And the same run piped (plain) and as JSON: each item line and each item event once.
 * Skipped only when tmux is not installed.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { runCli } from './run-cli.ts';

const BIN = new URL('../../bin/drainbridge.js', import.meta.url).pathname;
const HAS_TMUX = spawnSync('tmux', ['-V']).status === 0;

/** The demo's frame title (cli/commands/demo.ts) and a bar line. */
const TITLE = /^drainbridge demo: node-1 · /;
const BAR = /^ {2}(\S+) +\[[█░]+\] /;
/** Item lines: a pod asked, a pod gone, a budget's hold, a VM or server moved. */
const ITEM =
  /^\[\+\d+\.\ds\] ((evicting|deleting) pod \S+|pod\/\S+ (evicted|deleted)|PodDisruptionBudget .*|(vmi|server) \S+ .*)$/;

interface TmuxRun {
  /** The visible screen, read every ~150 ms while the demo ran. */
  readonly screens: readonly string[][];
  /** Scrollback and screen at the end. */
  readonly all: readonly string[];
}

function tmux(socket: string, args: readonly string[]): string {
  return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
}

/** Runs the demo in a detached tmux session of `columns`×`rows` and reads its screen as it runs. */
async function demoInTmux(columns: number, rows: number): Promise<TmuxRun> {
  const socket = `drainbridge-test-${process.pid}-${columns}x${rows}`;
  const command = `'${process.execPath}' '${BIN}' demo; echo "EXIT=$?"; sleep 300`;
  tmux(socket, ['new-session', '-d', '-s', 'demo', '-x', String(columns), '-y', String(rows), command]);
  const screens: string[][] = [];
  try {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const screen = tmux(socket, ['capture-pane', '-p', '-t', 'demo']).split('\n');
      screens.push(screen);
      if (screen.some((line) => line.startsWith('EXIT='))) break;
      assert.ok(Date.now() < deadline, `the demo did not end in 90 s:\n${screen.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const all = tmux(socket, ['capture-pane', '-p', '-S', '-', '-t', 'demo']).split('\n');
    return { screens, all };
  } finally {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
  }
}

/** The frame on a screen: from the last title line to the end (blank lines at the bottom dropped). */
function frameOf(screen: readonly string[]): string[] {
  const start = screen.findLastIndex((line) => TITLE.test(line));
  if (start < 0) return [];
  const frame = screen.slice(start);
  while (frame.length > 0 && frame.at(-1)?.trim() === '') frame.pop();
  return frame;
}

function assertOnce(lines: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const line of lines) {
    assert.ok(!seen.has(line), `${what} printed twice: ${line}`);
    seen.add(line);
  }
}

/** `[+1.2s] evicting pod x` → `evicting pod x` */
const words = (line: string) => line.replace(/^\[\+\d+\.\ds\] /, '');

function assertTruthfulFrames(run: TmuxRun, rows: number): void {
  let sawPodsWorking = false;
  for (const screen of run.screens) {
    const frame = frameOf(screen);
    if (frame.length === 0 || screen.some((line) => line.startsWith('EXIT='))) continue;
    assert.ok(frame.length <= rows - 1, `a frame of ${frame.length} lines on ${rows} rows:\n${frame.join('\n')}`);
    const bars = frame.flatMap((line) => BAR.exec(line)?.[1] ?? []);
    assert.deepEqual(
      bars.filter((name) => name !== 'pods'),
      [],
      `only branches with work are drawn:\n${frame.join('\n')}`,
    );
    if (frame.some((line) => /^ {2}pods +\[.*\] [01]\/2 pods evicted/.test(line))) sawPodsWorking = true;
    const waits = frame.slice(frame.indexOf('  waiting for:') + 1).filter((line) => line.startsWith('    '));
    if (frame.includes('  waiting for:')) assertOnce(waits, 'a wait');
    // Nothing is evicted while the bare pod blocks: once an eviction shows, its blocker must be gone.
    const evicting = screen.some((line) => / evicting pod shop\//.test(line));
    const blocked = frame.some((line) => /blocked: .*default\/debug/.test(line));
    assert.ok(!(evicting && blocked), `a blocker that no longer holds is shown:\n${screen.join('\n')}`);
  }
  assert.ok(sawPodsWorking, 'the pods bar is drawn while the pods branch works, not only when it is done');
}

function assertScrollback(run: TmuxRun): void {
  const items = run.all.filter((line) => ITEM.test(line));
  assertOnce(items.map(words), 'an item line');
  assert.equal(items.filter((line) => / evicting pod shop\/web-/.test(line)).length, 2, run.all.join('\n'));
  assert.equal(items.filter((line) => / pod\/web-\S+ evicted$/.test(line)).length, 2, run.all.join('\n'));
  // No line lost: every item line the screen ever showed is in the scrollback at the end.
  const kept = new Set(items.map(words));
  for (const screen of run.screens) {
    for (const line of screen.filter((l) => ITEM.test(l))) assert.ok(kept.has(words(line)), `lost: ${line}`);
  }
  const summary = run.all.indexOf('== summary');
  assert.ok(summary > 0, 'the summary is printed');
  const after = run.all.slice(summary);
  assert.ok(
    !after.some((line) => TITLE.test(line) || BAR.test(line)),
    `a frame below == summary:\n${after.join('\n')}`,
  );
  const titles = run.all.filter((line) => TITLE.test(line));
  assert.equal(titles.length, 2, `one final frame per run (evacuate, restore):\n${titles.join('\n')}`);
  for (const title of titles) assert.match(title, / · done · \d+ s$/, 'each run’s last frame says it is done');
}

describe('the live display in a real terminal (tmux)', { skip: HAS_TMUX ? false : 'tmux is not installed' }, () => {
  for (const [columns, rows] of [
    [80, 24],
    [160, 45],
  ] as const) {
    it(`at ${columns}×${rows}: true bars and waits, each item line once, none lost, coherent last frames`, async () => {
      const run = await demoInTmux(columns, rows);
      assert.ok(run.all.includes('EXIT=0'), run.all.join('\n'));
      assertTruthfulFrames(run, rows);
      assertScrollback(run);
    });
  }
});

describe('the demo piped and as JSON', () => {
  it('plain: each item line once', async () => {
    const result = await runCli(['demo']);
    assert.equal(result.code, 0, result.stderr);
    const items = result.stdout.split('\n').filter((line) => ITEM.test(line));
    assert.ok(items.length >= 4, result.stdout);
    assertOnce(items.map(words), 'an item line');
  });

  it('json: each item event once (the same ask re-observed is not an event again)', async () => {
    const result = await runCli(['demo', '--output', 'json']);
    assert.equal(result.code, 0, result.stderr);
    const events = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; change?: string; item?: { id: string; askedAt?: string } })
      .filter((event) => event.type === 'item');
    assert.ok(events.length >= 4, result.stdout);
    assertOnce(
      events.map((event) => `${event.change} ${event.item?.id} ${event.item?.askedAt}`),
      'an item event',
    );
  });
});
