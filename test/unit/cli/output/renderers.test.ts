/** The renderers of a run and of a report, from made-up timelines: lines, JSON, the live frame, HTML and SVG. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { XMLValidator } from 'fast-xml-parser';
import { parseDocument } from 'htmlparser2';
import { awaitedOf } from '../../../../cli/output/awaited.ts';
import { type ItemChange, ItemWatch } from '../../../../cli/output/items.ts';
import { jsonRenderer } from '../../../../cli/output/json.ts';
import { bar, liveFrame, liveRenderer } from '../../../../cli/output/live.ts';
import { plainRenderer } from '../../../../cli/output/plain.ts';
import { escapeXml, offset, renderHtml, renderSvg } from '../../../../cli/output/report.ts';
import type { EvacuationTimeline } from '../../../../cli/output/timeline.ts';
import type { EvacuationObject } from '../../../../lib/clients/kube/paths.ts';
import type { ItemTimeline, Span } from '../../../../lib/model/timeline.ts';

const ESC = String.fromCharCode(27);
const T0 = Date.parse('2026-11-21T03:00:00Z');
const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

function pod(name: string, more: Partial<ItemTimeline> = {}): ItemTimeline {
  return { kind: 'pod', branch: 'pods', id: `uid-${name}`, name, state: 'gone', waits: [], blockers: [], ...more };
}

function timeline(items: ItemTimeline[], more: Partial<EvacuationTimeline> = {}): EvacuationTimeline {
  return {
    requestId: 'r-1',
    nodeName: 'node-1',
    phase: 'NodeDrained',
    phases: [
      { phase: 'NodeCordoned', at: iso(0) },
      { phase: 'NodeDraining', at: iso(1) },
      { phase: 'NodeDrained', at: iso(60) },
    ],
    deletes: false,
    branches: [
      {
        name: 'pods',
        startedAt: iso(1),
        finishedAt: iso(60),
        total: items.length,
        moved: items.length,
        inFlight: 0,
        skipped: 0,
        reported: true,
        blockers: [],
      },
    ],
    items,
    unreadable: [],
    ...more,
  };
}

/** A fake clock with a timer the test ticks. */
function clock() {
  let now = T0;
  let tick: (() => void) | undefined;
  return {
    now: () => now,
    every: (_ms: number, fn: () => void) => {
      tick = fn;
      return () => {
        tick = undefined;
      };
    },
    advance(ms: number) {
      for (let step = 0; step < ms; step += 500) {
        now += 500;
        tick?.();
      }
    },
  };
}

describe('the report', () => {
  const hostile = '<script>alert("x")</script>';

  it('escapes names (user data): a pod called <script> is text, never markup', () => {
    const page = renderHtml(timeline([pod(`shop/${hostile}`, { askedAt: iso(2), goneAt: iso(5) })]));
    assert.ok(!page.includes('<script'), 'no script element anywhere');
    const document = parseDocument(page);
    const text = JSON.stringify(
      document.children.map(function all(node): unknown {
        const n = node as { data?: string; children?: unknown[] };
        return n.data ?? (n.children as never[] | undefined)?.map(all);
      }),
    );
    assert.ok(text.includes('shop/<script>alert(\\"x\\")</script>'), 'the name reads as written');
    assert.equal(escapeXml(`a&b"'<>`), 'a&amp;b&quot;&#39;&lt;&gt;');
    assert.equal(XMLValidator.validate(renderSvg(timeline([pod(hostile)]))), true);
  });

  it('draws hundreds of rows: each a bar and a table row, the SVG well-formed', () => {
    const items = Array.from({ length: 500 }, (_, index) =>
      pod(`shop/web-${index}`, {
        askedAt: iso(2 + index / 10),
        goneAt: iso(4 + index / 10),
        waits:
          index % 7 === 0
            ? [{ code: 'DisruptionBudget', budget: 'shop/web', from: iso(1), to: iso(2 + index / 10) }]
            : [],
      }),
    );
    const svg = renderSvg(timeline(items));
    assert.equal(XMLValidator.validate(svg), true);
    assert.equal(svg.match(/<g class="item"/g)?.length, 500);
    assert.equal(svg.match(/class="wait"/g)?.length, Math.ceil(500 / 7));
    const page = renderHtml(timeline(items));
    assert.equal(page.match(/<tr class="item"/g)?.length, 500);
    const height = Number(/height="(\d+)"/.exec(svg)?.[1]);
    assert.ok(height > 500 * 16, 'one 16-px row each: readable, not squeezed');
  });

  it('marks what was still open at the end of the record, and times as offsets', () => {
    const svg = renderSvg(timeline([pod('shop/stuck', { state: 'moving', askedAt: iso(3) })]));
    assert.match(svg, /class="move" fill="#9aa5b1"/, 'not gone: drawn grey to the end');
    assert.equal(offset(45_000), '+45s');
    assert.equal(offset(90_000), '+1m30s');
    assert.equal(offset(2 * 3600_000 + 5 * 60_000), '+2h05m');
  });
});

describe('item changes from records', () => {
  // The pods branch's entry at `version` (each write of its state counts one up), and other branches'.
  const evacuation = (state: unknown, version = '1', more: Record<string, unknown> = {}): EvacuationObject => ({
    apiVersion: 'drainbridge.io/v1alpha1',
    kind: 'Evacuation',
    metadata: { name: 'r-1' },
    spec: { requestId: 'r-1', nodeName: 'node-1' },
    status: { branches: { pods: { version, state, ...more } } },
  });

  it('the first record is the baseline; then an eviction, a departure, in order', () => {
    const watch = new ItemWatch();
    const before = { pods: { u1: { name: 'shop/old', attempts: 0, evictedAt: iso(0) } }, moved: {} };
    assert.deepEqual(
      watch.update({ kind: 'written', record: evacuation(before) }),
      [],
      'what happened before is not told',
    );
    const asked = { ...before, pods: { ...before.pods, u2: { name: 'shop/web', attempts: 0, evictedAt: iso(5) } } };
    const round = watch.update({ kind: 'round', requestId: 'r-1', branch: 'pods', state: asked, at: new Date(T0) });
    assert.deepEqual(
      round.map((c) => [c.change, 'item' in c ? c.item.name : '']),
      [['asked', 'shop/web']],
    );
    const gone = {
      pods: { u1: before.pods.u1 },
      moved: { u2: 'shop/web' },
      departures: { u2: { evictedAt: iso(5), goneAt: iso(8) } },
    };
    const changes: ItemChange[] = watch.update({ kind: 'written', record: evacuation(gone, '2') });
    assert.deepEqual(
      changes.map((c) => [c.change, 'item' in c ? c.item.name : '']),
      [['gone', 'shop/web']],
    );
    assert.deepEqual(
      watch.update({
        kind: 'written',
        record: { ...evacuation(gone, '2'), spec: { requestId: 'other', nodeName: 'n' } },
      }),
      [],
      "another request's record is not this run's",
    );
  });

  it('tells each ask once: a record another branch writes (the pods state as last written) does not undo a round', () => {
    const watch = new ItemWatch();
    const before = { pods: {}, moved: {} };
    watch.update({ kind: 'written', record: evacuation(before) });
    const asked = { pods: { u2: { name: 'shop/web', attempts: 0, evictedAt: iso(5) } }, moved: {} };
    const told: string[] = [];
    const note = (changes: ItemChange[]) =>
      told.push(...changes.map((c) => `${c.change} ${'item' in c ? c.item.name : c.branch}`));
    note(watch.update({ kind: 'round', requestId: 'r-1', branch: 'pods', state: asked, at: new Date(T0) }));
    // The Nova branch writes: the record still has the pods state of version 1 (before the round).
    note(watch.update({ kind: 'written', record: evacuation(before) }));
    note(watch.update({ kind: 'round', requestId: 'r-1', branch: 'pods', state: asked, at: new Date(T0) }));
    // The pods pass writes what its rounds saw; a later execution (a continued evacuation) reads it again.
    note(watch.update({ kind: 'written', record: evacuation(asked, '2') }));
    note(watch.update({ kind: 'written', record: evacuation(asked, '2') }));
    assert.deepEqual(told, ['asked shop/web']);
    assert.equal(watch.timeline?.items[0]?.askedAt, iso(5), 'the round stays laid over the older record');
  });

  it('a blocker ends when a round no longer sees it, before the pass writes; each blocker is told once', () => {
    const watch = new ItemWatch();
    const debug = { kind: 'Pod' as const, uid: 'u9', name: 'default/debug' };
    const spans = [{ code: 'BarePod', from: iso(1), reason: 'declare no controller', item: debug }];
    const state = { pods: {}, moved: {} };
    watch.update({ kind: 'written', record: evacuation(state) });
    const told: string[] = [];
    const note = (changes: ItemChange[]) => told.push(...changes.map((c) => c.change));
    note(watch.update({ kind: 'written', record: evacuation(state, '1', { blockerSpans: spans }) }));
    const round = (blockers: { code: 'BarePod'; reason: string; item: typeof debug }[], at: number) =>
      watch.update({ kind: 'round', requestId: 'r-1', branch: 'pods', state, at: new Date(T0 + at * 1000), blockers });
    note(round([{ code: 'BarePod', reason: 'declare no controller', item: debug }], 2));
    assert.equal(watch.timeline?.items[0]?.blockers[0]?.to, undefined, 'still there: still open');
    note(round([], 9));
    assert.equal(watch.timeline?.items[0]?.blockers[0]?.to, iso(9), 'the round saw it gone');
    // The pass ends and writes the span closed at its own time: not told again.
    const closed = [{ ...spans[0], to: iso(12) }];
    note(watch.update({ kind: 'written', record: evacuation(state, '2', { blockerSpans: closed }) }));
    assert.deepEqual(told, ['blocker', 'blocker-ended']);
  });
});

describe('plain lines', () => {
  it('says each pod in kubectl’s words, a budget’s hold once, a VM’s route; beats naming what is awaited', () => {
    const lines: string[] = [];
    const c = clock();
    const renderer = plainRenderer((line) => lines.push(line), {
      start: T0,
      heartbeatMs: 8_000,
      now: c.now,
      every: c.every,
    });
    const held = (name: string) =>
      pod(name, { state: 'blocked', waits: [{ code: 'DisruptionBudget', budget: 'shop/web', from: iso(0) }] });
    renderer.event({
      kind: 'item',
      at: T0,
      change: { change: 'wait', item: held('shop/b'), span: held('shop/b').waits[0] as never },
    });
    renderer.event({
      kind: 'item',
      at: T0,
      change: { change: 'wait', item: held('shop/c'), span: held('shop/c').waits[0] as never },
    });
    renderer.event({
      kind: 'item',
      at: T0,
      change: { change: 'asked', item: pod('shop/a', { state: 'moving' }), deletes: false },
    });
    renderer.event({ kind: 'item', at: T0, change: { change: 'gone', item: pod('shop/a'), deletes: false } });
    const vm: ItemTimeline = { ...pod('vms/db'), kind: 'vmi', branch: 'kubevirt', source: 'node-1', target: 'node-3' };
    renderer.event({ kind: 'item', at: T0, change: { change: 'gone', item: vm, deletes: false } });
    const server: ItemTimeline = {
      ...pod('app-1'),
      kind: 'server',
      branch: 'nova',
      source: 'compute-1',
      target: 'compute-2',
    };
    renderer.event({ kind: 'item', at: T0, change: { change: 'gone', item: server, deletes: false } });
    assert.deepEqual(lines, [
      '[+0.0s] PodDisruptionBudget shop/web holds back pod shop/b (evicted as soon as it allows)',
      '[+0.0s] evicting pod shop/a',
      '[+0.0s] pod/a evicted',
      '[+0.0s] vmi vms/db migrated node-1 → node-3',
      '[+0.0s] server app-1 migrated compute-1 → compute-2',
    ]);
    renderer.event({
      kind: 'timeline',
      at: T0,
      timeline: timeline([held('shop/b'), held('shop/c'), pod('shop/d', { state: 'moving', askedAt: iso(0) })]),
    });
    c.advance(8_000);
    assert.equal(
      lines.at(-1),
      '[+8.0s] still waiting — pod to terminate: shop/d (8 s); PodDisruptionBudget shop/web to allow 2 pods (8 s)',
    );
    renderer.close();
  });

  it('a deleted pod (--disable-eviction) is said so', () => {
    const lines: string[] = [];
    const renderer = plainRenderer((line) => lines.push(line), { start: T0, now: () => T0, every: () => () => {} });
    renderer.event({ kind: 'item', at: T0, change: { change: 'asked', item: pod('shop/a'), deletes: true } });
    renderer.event({ kind: 'item', at: T0, change: { change: 'gone', item: pod('shop/a'), deletes: true } });
    assert.deepEqual(lines, ['[+0.0s] deleting pod shop/a', '[+0.0s] pod/a deleted']);
  });
});

describe('JSON lines', () => {
  it('one parseable object per event, the same wait said once, a heartbeat with what is awaited', () => {
    const lines: string[] = [];
    const c = clock();
    const renderer = jsonRenderer((line) => lines.push(line), {
      start: T0,
      heartbeatMs: 8_000,
      now: c.now,
      every: c.every,
    });
    const waiting = {
      executionId: 'e',
      stateName: 'PodsPass',
      functionKey: 'pass',
      error: { name: 'NotYetDone', message: 'pods: 0/2 moved' },
    };
    renderer.event({ kind: 'task', at: T0, call: waiting });
    renderer.event({ kind: 'task', at: T0, call: waiting });
    renderer.event({
      kind: 'item',
      at: T0,
      change: { change: 'asked', item: pod('shop/a', { state: 'moving', askedAt: iso(0) }), deletes: false },
    });
    renderer.event({ kind: 'note', at: T0, text: 'evacuating node-1' });
    c.advance(8_000);
    renderer.close();
    const objects = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      objects.map((o) => o.type),
      ['waiting', 'item', 'message', 'heartbeat'],
    );
    assert.deepEqual((objects[1]?.item as ItemTimeline | undefined)?.name, 'shop/a');
    assert.deepEqual(objects[3]?.awaiting, ['pods: 0/2 moved']);
    assert.equal(objects[3]?.elapsedSeconds, 8);
  });
});

describe('the live display', () => {
  it('draws a bar per branch and the waits; scrolls item lines above; ends leaving the last frame', () => {
    assert.equal(bar(1, 4, 8), '[██░░░░░░]');
    assert.equal(bar(0, 0, 4), '[████]', 'nothing to move is full');
    const frame = liveFrame({
      title: 'drainbridge evacuate node-1',
      phase: 'NodeDraining',
      elapsedSeconds: 12,
      branches: new Map([['pods', { total: 4, moved: 1, inFlight: 2, skipped: 1, done: false }]]),
      waits: ['PodDisruptionBudget shop/web to allow 2 pods (5 s)'],
      width: 100,
    });
    assert.equal(
      frame,
      [
        'drainbridge evacuate node-1 · NodeDraining · 12 s',
        `  pods     ${bar(1, 4)} 1/4 pods evicted, 2 in flight, 1 skipped`,
        '  waiting for:',
        '    PodDisruptionBudget shop/web to allow 2 pods (5 s)',
      ].join('\n'),
    );
    let screen = '';
    const write = (text: string) => {
      screen += text;
      return true;
    };
    const terminal = { write, columns: 100, rows: 30, isTTY: true };
    const c = clock();
    const live = liveRenderer(terminal, {
      start: T0,
      title: 'drainbridge evacuate node-1',
      now: c.now,
      every: c.every,
    });
    live.event({
      kind: 'task',
      at: T0,
      call: {
        executionId: 'e',
        stateName: 'PodsPass',
        functionKey: 'pass',
        output: { branch: 'pods', done: false, progress: { total: 2, moved: 1, inFlight: 1, skipped: 0 } },
      },
    });
    live.event({ kind: 'item', at: T0, change: { change: 'gone', item: pod('shop/a'), deletes: false } });
    live.print('a line of the command');
    live.close();
    assert.match(screen, /pods +\[█{12}░{12}\] 1\/2 pods evicted, 1 in flight/);
    assert.match(screen, /\[\+0\.0s\] pod\/a evicted/);
    assert.match(screen, /a line of the command/);
    assert.ok(screen.includes(`${ESC}[2K`), 'redrawn in place');
  });
});

describe('what a run waits for', () => {
  it('says each blocker once: a VM blocked and its blocker, one pod reported by two branches', () => {
    const reason = 'VMI vms/db is not live-migratable';
    const db: ItemTimeline = {
      ...pod('vms/db', { state: 'blocked' }),
      kind: 'vmi',
      branch: 'kubevirt',
      waits: [{ code: 'Blocked', from: iso(1), reason }],
      blockers: [{ code: 'MigrationFailed', from: iso(1), reason }],
    };
    const bare = 'cannot delete Pods that declare no controller: default/debug';
    const debug = (branch: string) =>
      pod('default/debug', { branch, state: 'blocked', blockers: [{ code: 'BarePod', from: iso(0), reason: bare }] });
    const phrases = awaitedOf(timeline([db, debug('pods'), debug('infra-pods')]), T0 + 10_000);
    assert.deepEqual(phrases, [`blocked: ${bare} (10 s)`, `blocked: ${reason} (9 s)`]);
    const ended = debug('pods');
    const gone = { ...ended, blockers: [{ ...(ended.blockers[0] as Span), to: iso(5) }] };
    assert.deepEqual(awaitedOf(timeline([gone]), T0 + 10_000), [], 'a blocker that ended is not awaited');
  });
});

describe('the live display, run by run', () => {
  const task = (functionKey: string, executionId: string) => ({
    kind: 'task' as const,
    at: T0,
    call: { executionId, stateName: functionKey, functionKey, output: {} },
  });
  const record = (moved: number) => ({
    kind: 'timeline' as const,
    at: T0,
    timeline: timeline([pod('shop/a', { state: moved > 0 ? 'gone' : 'moving', askedAt: iso(1) })], {
      phase: 'NodeDraining',
      branches: [
        { name: 'pods', total: 1, moved, inFlight: 1 - moved, skipped: 0, reported: true, blockers: [] },
        { name: 'nova', total: 0, moved: 0, inFlight: 0, skipped: 0, reported: true, finishedAt: iso(1), blockers: [] },
      ],
    }),
  });

  it('an evacuation: a bar for the branch with work from the first record, none for an empty one; a restore: none', () => {
    let screen = '';
    const write = (text: string) => {
      screen += text;
      return true;
    };
    const terminal = { write, columns: 100, rows: 30, isTTY: true };
    const c = clock();
    const live = liveRenderer(terminal, { start: T0, title: 'demo', now: c.now, every: c.every });
    live.event(task('admit', 'evacuate-1'));
    live.event(record(0));
    assert.match(screen, /pods +\[░+\] 0\/1 pods evicted, 1 in flight\n/, 'drawn while it works');
    live.event({ kind: 'bus', at: T0, detailType: 'Evacuation Succeeded', detail: { nodeName: 'node-1' } });
    const evacuated = screen.length;
    live.print('== restore');
    // The restore reads the record the stopped evacuation left (NodeDraining, a branch midway).
    live.event(task('resolveTarget', 'restore-1'));
    live.event(record(0));
    live.event({ kind: 'bus', at: T0, detailType: 'Node Restored', detail: { nodeName: 'node-1' } });
    live.print('== summary');
    live.close();
    const restore = screen.slice(evacuated);
    assert.doesNotMatch(restore, /pods +\[/, 'the restore moves nothing: no bar');
    assert.match(restore, /demo · done · 0 s/, 'the restore ends done');
    assert.doesNotMatch(screen, /nova +\[/, 'an empty branch is not drawn');
    const plain = screen.replace(new RegExp(`${ESC}\\[[?0-9;]*[A-Za-z]`, 'g'), '');
    assert.ok(
      plain.trimEnd().endsWith('== summary'),
      `nothing drawn below the summary: ${JSON.stringify(plain.slice(-80))}`,
    );
  });
});
