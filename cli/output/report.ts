/**
 * The picture of an evacuation, for the maintenance ticket: a timeline with the phases on top, a bar per
 * branch, then one row per pod, VMI and server from asked-to-move to gone, its waits (a budget's hold, a
 * retry) and blockers marked on it. SVG alone (`--svg`), or an HTML page with the SVG inline and a table
 * of the same rows (`--html`). Self-contained: no script, no external stylesheet, font or image; every
 * name is user data and escaped. Pure: from the timeline (timeline.ts) read from the Evacuation record.
 */
import type { ItemTimeline, Span } from '../../lib/model/timeline.ts';
import type { EvacuationTimeline } from './timeline.ts';

/** Text for XML and HTML, in content and in quoted attributes. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const WIDTH = 1200;
const LABEL_WIDTH = 330;
const RIGHT = 20;
const ROW = 16;
const PHASE_ROW = 22;
const CHART_LEFT = LABEL_WIDTH + 10;
const CHART_WIDTH = WIDTH - CHART_LEFT - RIGHT;

const COLOURS = {
  pod: '#4a7fc1',
  vmi: '#7b5ea7',
  server: '#2f8f6b',
  wait: '#e8a33d',
  blocker: '#c8423b',
  open: '#9aa5b1',
  branch: '#56606b',
  phases: ['#dbe7f3', '#e6e0f0', '#dcefe6', '#f4ead7', '#f0dcdc', '#e3e6ea'],
} as const;

const ms = (iso: string | undefined): number | undefined => {
  const value = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isFinite(value) ? value : undefined;
};

/** Every instant the timeline names. */
function instants(timeline: EvacuationTimeline): number[] {
  const spans = (list: readonly Span[]) => list.flatMap((span) => [span.from, span.to]);
  // Every time in the timeline is drainbridge's clock (requestedAt too: never the record's creationTimestamp).
  const all = [
    timeline.requestedAt,
    ...timeline.phases.map((phase) => phase.at),
    timeline.restore?.startedAt,
    timeline.restore?.finishedAt,
    ...timeline.branches.flatMap((branch) => [branch.startedAt, branch.finishedAt, ...spans(branch.blockers)]),
    ...timeline.items.flatMap((item) => [item.askedAt, item.goneAt, ...spans(item.waits), ...spans(item.blockers)]),
  ];
  return all.flatMap((iso) => ms(iso) ?? []);
}

interface Scale {
  readonly start: number;
  readonly end: number;
  x(at: number): number;
}

function scaleOf(timeline: EvacuationTimeline): Scale {
  const known = instants(timeline);
  const start = known.length > 0 ? Math.min(...known) : 0;
  const last = Math.max(start + 1_000, ...known);
  // A margin after the last instant, so that the last phase (and what was still open) shows.
  const end = last + (last - start) * 0.04;
  return { start, end, x: (at) => CHART_LEFT + ((at - start) / (end - start)) * CHART_WIDTH };
}

/** `+1m30s`, `+45s`, `+2h05m`. */
export function offset(msSinceStart: number): string {
  const seconds = Math.round(msSinceStart / 1000);
  if (seconds < 60) return `+${seconds}s`;
  if (seconds < 3600) return `+${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `+${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** A tick step that gives about 8 ticks: 1 s … 1 day. */
function tickStep(spanMs: number): number {
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
  return (steps.find((s) => spanMs / (s * 1000) <= 10) ?? 86400) * 1000;
}

/** A rectangle from `from` to `to` (ms), at `y` with `height`; `attributes` raw, `title` escaped. */
interface Box {
  readonly from: number;
  readonly to: number;
  readonly y: number;
  readonly height: number;
}

function rect(scale: Scale, box: Box, attributes: string, title: string): string {
  const x = scale.x(box.from);
  const width = Math.max(2, scale.x(box.to) - x);
  return `<rect x="${x.toFixed(1)}" y="${box.y}" width="${width.toFixed(1)}" height="${box.height}" ${attributes}><title>${escapeXml(title)}</title></rect>`;
}

function spanTitle(span: Span, what: string): string {
  const to = span.to ?? 'still at the end of the record';
  const budget = span.budget ? ` (PodDisruptionBudget ${span.budget})` : '';
  return `${what} ${span.code}${budget}: ${span.from} → ${to}${span.reason ? `\n${span.reason}` : ''}`;
}

function spanMarks(scale: Scale, spans: readonly Span[], y: number, kind: 'wait' | 'blocker'): string[] {
  return spans.map((span) => {
    const from = ms(span.from) ?? scale.start;
    const to = ms(span.to) ?? scale.end;
    const colour = kind === 'wait' ? COLOURS.wait : COLOURS.blocker;
    const height = kind === 'wait' ? ROW - 6 : 4;
    const top = kind === 'wait' ? y + 3 : y + ROW - 4;
    return rect(
      scale,
      { from, to, y: top, height: height },
      `class="${kind}" fill="${colour}" fill-opacity="0.85"`,
      spanTitle(span, kind === 'wait' ? 'waited for' : 'blocked by'),
    );
  });
}

function itemTitle(item: ItemTimeline): string {
  const route = item.source || item.target ? `\n${item.source ?? '?'} → ${item.target ?? '?'}` : '';
  const asked = item.askedAt ? `\nasked ${item.askedAt}` : '\nnever asked to move';
  const gone = item.goneAt ? `\ngone ${item.goneAt}` : item.state === 'gone' ? '\ngone (time not recorded)' : '';
  return `${item.kind} ${item.name} (${item.state})${route}${asked}${gone}`;
}

/** The label a row carries: `pod shop/web-1`, `vmi vms/db  node-1 → node-3`. */
function rowLabel(item: ItemTimeline): string {
  const route =
    item.kind !== 'pod' && (item.source || item.target) ? `  ${item.source ?? '?'} → ${item.target ?? '?'}` : '';
  const text = `${item.kind} ${item.name}${route}`;
  return text.length > 52 ? `${text.slice(0, 51)}…` : text;
}

function itemRow(scale: Scale, item: ItemTimeline, y: number): string {
  const parts: string[] = [];
  const asked = ms(item.askedAt);
  const gone = ms(item.goneAt);
  if (asked !== undefined) {
    const open = gone === undefined;
    parts.push(
      rect(
        scale,
        { from: asked, to: gone ?? scale.end, y: y + 2, height: ROW - 4 },
        `class="move" fill="${open ? COLOURS.open : COLOURS[item.kind]}"`,
        itemTitle(item),
      ),
    );
  }
  parts.push(...spanMarks(scale, item.waits, y, 'wait'), ...spanMarks(scale, item.blockers, y, 'blocker'));
  const label = `<text x="${LABEL_WIDTH}" y="${y + ROW - 4}" text-anchor="end" class="label">${escapeXml(rowLabel(item))}<title>${escapeXml(itemTitle(item))}</title></text>`;
  return `<g class="item" data-kind="${item.kind}" data-name="${escapeXml(item.name)}" data-state="${item.state}">${label}${parts.join('')}</g>`;
}

function phaseBand(scale: Scale, timeline: EvacuationTimeline, y: number): string[] {
  const phases = timeline.phases;
  const parts = phases.map((phase, index) => {
    const from = ms(phase.at) ?? scale.start;
    const to = ms(phases[index + 1]?.at) ?? scale.end;
    const colour = COLOURS.phases[index % COLOURS.phases.length];
    const x = scale.x(from);
    const width = Math.max(2, scale.x(to) - x);
    const fits = Math.floor((width - 6) / 6.5);
    const name = phase.phase.length <= fits ? phase.phase : fits >= 4 ? `${phase.phase.slice(0, fits - 1)}…` : '';
    const label = name ? `<text x="${(x + 4).toFixed(1)}" y="${y + 15}" class="phase">${escapeXml(name)}</text>` : '';
    return `<g class="phase" data-phase="${escapeXml(phase.phase)}"><rect x="${x.toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${PHASE_ROW}" fill="${colour}"><title>${escapeXml(`${phase.phase} from ${phase.at}`)}</title></rect>${label}</g>`;
  });
  const restore = timeline.restore;
  if (restore?.startedAt) {
    const from = ms(restore.startedAt) ?? scale.end;
    const to = ms(restore.finishedAt) ?? scale.end;
    parts.push(
      rect(
        scale,
        { from, to, y: y, height: PHASE_ROW },
        'class="restore" fill="#c9d3dd"',
        `restore ${restore.startedAt} → ${restore.finishedAt ?? '…'}`,
      ),
    );
  }
  return [`<text x="${LABEL_WIDTH}" y="${y + 15}" text-anchor="end" class="label">phases</text>`, ...parts];
}

function axis(scale: Scale, top: number, bottom: number): string[] {
  const step = tickStep(scale.end - scale.start);
  const parts: string[] = [];
  for (let at = scale.start; at <= scale.end + 1; at += step) {
    const x = scale.x(at).toFixed(1);
    parts.push(
      `<line x1="${x}" y1="${top}" x2="${x}" y2="${bottom}" class="tick"/><text x="${x}" y="${top - 4}" text-anchor="middle" class="axis">${offset(at - scale.start)}</text>`,
    );
  }
  return parts;
}

const STYLE = [
  'text{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:11px;fill:#1f2933}',
  '.title{font-size:15px;font-weight:600}',
  '.label{font-size:11px}',
  '.axis{font-size:10px;fill:#52606d}',
  '.phase{font-size:11px}',
  '.tick{stroke:#d9dee3;stroke-width:1}',
  '.heading{font-weight:600;font-size:12px}',
].join('');

/** The whole picture as one SVG document (standalone, or inlined in the HTML page). */
export function renderSvg(timeline: EvacuationTimeline): string {
  const scale = scaleOf(timeline);
  const out: string[] = [];
  let y = 24;
  out.push(
    `<text x="10" y="${y}" class="title">${escapeXml(`Evacuation of ${timeline.nodeName} — request ${timeline.requestId}`)}</text>`,
  );
  y += 18;
  const started = new Date(scale.start).toISOString();
  out.push(
    `<text x="10" y="${y}" class="axis">${escapeXml(`from ${started} (+0s) · phase ${timeline.phase ?? 'unknown'} · ${timeline.items.length} items`)}</text>`,
  );
  y += 30;
  const axisTop = y;
  out.push(...phaseBand(scale, timeline, y));
  y += PHASE_ROW + 8;
  const groups = new Map<string, ItemTimeline[]>();
  for (const item of timeline.items) groups.set(item.branch, [...(groups.get(item.branch) ?? []), item]);
  for (const branch of timeline.branches) {
    const from = ms(branch.startedAt);
    out.push(
      `<text x="10" y="${y + ROW - 4}" class="heading">${escapeXml(`${branch.name}: ${branch.moved}/${branch.total} moved`)}</text>`,
    );
    if (from !== undefined) {
      const to = ms(branch.finishedAt) ?? scale.end;
      out.push(
        rect(
          scale,
          { from, to, y: y + 6, height: 4 },
          `class="branch" fill="${COLOURS.branch}"`,
          `branch ${branch.name}: ${branch.startedAt} → ${branch.finishedAt ?? '…'}`,
        ),
      );
    }
    out.push(...spanMarks(scale, branch.blockers, y, 'blocker'));
    y += ROW + 2;
    for (const item of groups.get(branch.name) ?? []) {
      out.push(itemRow(scale, item, y));
      y += ROW;
    }
    y += 8;
  }
  const legendY = y + 14;
  const legend = [
    [COLOURS.pod, 'pod: eviction accepted → gone'],
    [COLOURS.vmi, 'VMI: migration started → running elsewhere'],
    [COLOURS.server, 'server: migration started → on another host'],
    [COLOURS.open, 'not gone at the end of the record'],
    [COLOURS.wait, 'waited (PodDisruptionBudget, retry)'],
    [COLOURS.blocker, 'blocker'],
  ].map(([colour, text], index) => {
    const x = 10 + (index % 3) * 390;
    const ly = legendY + Math.floor(index / 3) * 18;
    return `<rect x="${x}" y="${ly - 9}" width="14" height="10" fill="${colour}"/><text x="${x + 20}" y="${ly}" class="axis">${escapeXml(text ?? '')}</text>`;
  });
  const height = legendY + 40;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escapeXml(`timeline of the evacuation of ${timeline.nodeName}`)}">`,
    `<style>${STYLE}</style>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    ...axis(scale, axisTop, y),
    ...out,
    ...legend,
    '</svg>',
  ].join('\n');
}

function duration(from: string | undefined, to: string | undefined): string {
  const a = ms(from);
  const b = ms(to);
  return a === undefined || b === undefined ? '' : `${((b - a) / 1000).toFixed(1)} s`;
}

function spansText(spans: readonly Span[]): string {
  return spans
    .map((span) => `${span.budget ? `PDB ${span.budget}` : span.code} ${span.from} → ${span.to ?? '…'}`)
    .join('; ');
}

const PAGE_STYLE = [
  'body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1f2933}',
  'h1{font-size:20px}',
  '.chart{overflow-x:auto}',
  'table{border-collapse:collapse;font-size:12px;margin-top:16px}',
  'th,td{border-bottom:1px solid #e4e7eb;padding:3px 8px;text-align:left;vertical-align:top}',
  'th{position:sticky;top:0;background:#f5f7fa}',
  'td.num{text-align:right;white-space:nowrap}',
  'dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;font-size:13px}',
  'dt{font-weight:600}',
].join('\n');

/** The HTML page: a summary, the SVG inline, and a table of every row. */
export function renderHtml(timeline: EvacuationTimeline, generatedAt: Date = new Date()): string {
  const facts: [string, string][] = [
    ['node', timeline.nodeName],
    ['request', timeline.requestId],
    ['phase', timeline.phase ?? 'unknown'],
    ['requested', timeline.requestedAt ?? 'unknown'],
    ...(timeline.reason ? ([['reason', timeline.reason]] as [string, string][]) : []),
    ...timeline.phases.map((phase): [string, string] => [phase.phase, phase.at]),
    ...(timeline.restore?.finishedAt ? ([['restored', timeline.restore.finishedAt]] as [string, string][]) : []),
    ...(timeline.lastError ? ([['error', timeline.lastError]] as [string, string][]) : []),
    ...timeline.unreadable.map((reason): [string, string] => ['unreadable', reason]),
  ];
  const rows = timeline.items.map((item) => {
    const cells = [
      item.kind,
      item.name,
      item.branch,
      item.state,
      item.askedAt ?? '',
      item.goneAt ?? '',
      duration(item.askedAt, item.goneAt),
      item.source || item.target ? `${item.source ?? '?'} → ${item.target ?? '?'}` : '',
      spansText(item.waits),
      spansText(item.blockers),
    ];
    const tds = cells.map((cell, index) => `<td${index === 6 ? ' class="num"' : ''}>${escapeXml(cell)}</td>`).join('');
    return `<tr class="item" data-kind="${item.kind}">${tds}</tr>`;
  });
  const branchBlockers = timeline.branches.flatMap((branch) =>
    branch.blockers.map(
      (span) =>
        `<li>${escapeXml(`${branch.name}: ${span.code} ${span.from} → ${span.to ?? '…'} ${span.reason ?? ''}`)}</li>`,
    ),
  );
  const title = `Evacuation of ${timeline.nodeName} (${timeline.requestId})`;
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeXml(title)}</title>`,
    `<style>\n${PAGE_STYLE}\n</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeXml(title)}</h1>`,
    `<dl>${facts.map(([term, value]) => `<dt>${escapeXml(term)}</dt><dd>${escapeXml(value)}</dd>`).join('')}</dl>`,
    `<div class="chart">\n${renderSvg(timeline)}\n</div>`,
    ...(branchBlockers.length > 0
      ? ['<h2>Blockers of no single item</h2>', `<ul>${branchBlockers.join('')}</ul>`]
      : []),
    '<table>',
    '<thead><tr><th>kind</th><th>name</th><th>branch</th><th>state</th><th>asked</th><th>gone</th><th>took</th><th>source → target</th><th>waits</th><th>blockers</th></tr></thead>',
    `<tbody>\n${rows.join('\n')}\n</tbody>`,
    '</table>',
    `<p><small>${escapeXml(`drainbridge report, from the Evacuation record, ${generatedAt.toISOString()}`)}</small></p>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
