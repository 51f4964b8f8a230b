/**
 * Progress lines for a person watching an embedded run: one line when something changes (a phase, a
 * branch's counts, what blocks it), never a line per poll. Pure formatting plus a small de-duplicator.
 */

import { wordsOf } from '../lib/branches/registry.ts';
import { isSlotWait } from '../lib/errors/registry.ts';
import type { ItemTimeline, Span } from '../lib/model/timeline.ts';
import type { TaskCall } from './executor.ts';

interface PassOutputShape {
  branch?: string;
  done?: boolean;
  progress?: { total: number; moved: number; inFlight: number; skipped: number };
  blockers?: string[];
  /** Items in flight, one line each (KubeVirt migrations: `vms/app-1 Running node-1 → node-2 (40 s)`). */
  detail?: string[];
}

/**
 * The line for a pass step's output, e.g. `pods: 3/10 pods evicted, 2 in flight, 4 skipped`. A branch that
 * ended with nothing to do (Nova off, no KubeVirt, no infra pods) gets no line: `nova: 0/0 … — done` read
 * as if Nova had been looked at, and the live display draws no bar for such a branch either.
 */
export function passLine(output: PassOutputShape): string | undefined {
  if (!output.branch || !output.progress) return undefined;
  const { total, moved, inFlight, skipped } = output.progress;
  if (output.done && total + inFlight + skipped === 0 && !output.blockers?.length) return undefined;
  const parts = [`${moved}/${total} ${wordsOf(output.branch).moved}`];
  if (inFlight > 0) parts.push(`${inFlight} in flight`);
  if (skipped > 0) parts.push(`${skipped} skipped`);
  const done = output.done ? ' — done' : '';
  const detail = output.detail?.length ? ` (${output.detail.join('; ')})` : '';
  return `${output.branch}: ${parts.join(', ')}${detail}${done}`;
}

interface VmMoveShape {
  name: string;
  status: string;
  phase?: string;
  sourceNode: string;
  targetNode?: string;
}

/** The KubeVirt VMs of an `Evacuation Progress` event, summed up: `VMs: 2 moved, 1 migrating (vms/a Running node-1 → node-2)`. */
function vmsLine(vms: readonly VmMoveShape[]): string {
  const counts = new Map<string, number>();
  for (const vm of vms) counts.set(vm.status, (counts.get(vm.status) ?? 0) + 1);
  const moving = vms
    .filter((vm) => vm.status === 'migrating')
    .map((vm) => `${vm.name} ${vm.phase ?? 'Pending'} ${vm.sourceNode} → ${vm.targetNode ?? '?'}`);
  const summary = [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
  return `VMs: ${summary}${moving.length > 0 ? ` (${moving.join('; ')})` : ''}`;
}

/** The line for a task call, or undefined when it says nothing new for a person. */
export function taskLine(call: TaskCall): string | undefined {
  if (call.error) {
    // NotYetDone carries "<branch>: x/y moved …; blocked: …" — the waiting reason is the news.
    if (call.error.name === 'NotYetDone') return `waiting — ${call.error.message}`;
    if (isSlotWait(call.error.name)) return `waiting for a maintenance slot — ${call.error.message}`;
    // A duplicate or taken-over request is dropped on purpose: not a failure.
    if (call.error.name === 'SkipEvent') return `skipped — ${call.error.message}`;
    return `${call.stateName} failed: ${call.error.name}: ${call.error.message}`;
  }
  const output = call.output as PassOutputShape | undefined;
  if (call.functionKey === 'pass') return output ? passLine(output) : undefined;
  return undefined;
}

/** Prints each distinct line once per execution, with the time since `start`. */
export function createProgressPrinter(
  write: (line: string) => void,
  start = Date.now(),
): (line: string | undefined) => void {
  let last = '';
  return (line) => {
    if (!line || line === last) return;
    last = line;
    write(`[+${((Date.now() - start) / 1000).toFixed(1)}s] ${line}`);
  };
}

/** A line for an event on the bus (requests and outcomes). */
export function busLine(detailType: string, detail: Record<string, unknown>): string {
  const node = String(detail.nodeName ?? (detail.target as { nodeName?: string } | undefined)?.nodeName ?? '');
  switch (detailType) {
    case 'Evacuation Progress': {
      const vms = detail.vms as VmMoveShape[] | undefined;
      return vms ? vmsLine(vms) : `phase ${String(detail.phase)} (node ${node})`;
    }
    case 'Evacuation Succeeded':
      return `evacuation of ${node} succeeded in ${Number(detail.durationSeconds).toFixed(1)}s`;
    case 'Evacuation Failed': {
      const error = detail.error as { name: string; message: string };
      // Whether the node is cordoned is read and said by the command at the end, not assumed here.
      return `evacuation of ${node} FAILED: ${error.name}: ${error.message}`;
    }
    case 'Node Restored':
      return `node ${node} restored: ${detail.lastHold ? (detail.uncordoned ? 'uncordoned' : 'left cordoned (it was cordoned before)') : 'other holds remain, still cordoned'}`;
    default:
      return `${detailType} (request ${String(detail.requestId)})`;
  }
}

/** `shop/web-1` → `web-1` (kubectl's `pod/NAME evicted` names the pod without its namespace). */
function bareName(name: string): string {
  return name.slice(name.indexOf('/') + 1);
}

/**
 * The line for an item asked to move or gone, in kubectl's words for pods: `evicting pod shop/web-1`,
 * `pod/web-1 evicted`; `vmi vms/db migrated node-1 → node-3`; `server app-1 migrated compute-1 → compute-2`.
 */
export function itemLine(item: ItemTimeline, change: 'asked' | 'gone', deletes = false): string {
  if (item.kind === 'pod') return podLine(item.name, change, deletes);
  const noun = item.kind === 'vmi' ? 'vmi' : 'server';
  const source = item.source ?? '?';
  if (change === 'asked') return `migrating ${noun} ${item.name} from ${source}`;
  if (item.target === undefined) return `${noun} ${item.name} left ${source}`;
  if (item.target === '(deleted)') return `${noun} ${item.name} left ${source} (deleted)`;
  return `${noun} ${item.name} migrated ${source} → ${item.target}`;
}

function podLine(name: string, change: 'asked' | 'gone', deletes: boolean): string {
  if (change === 'asked') return `${deletes ? 'deleting' : 'evicting'} pod ${name}`;
  return `pod/${bareName(name)} ${deletes ? 'deleted' : 'evicted'}`;
}

/** What a wait is for, in words: `PodDisruptionBudget shop/web`, `a retry (migration failed: …)`. */
export function waitWords(span: Span): string {
  if (span.budget) return `PodDisruptionBudget ${span.budget}`;
  const why = span.reason ? ` (${span.reason})` : '';
  switch (span.code) {
    case 'Retry':
      return `a retry${why}`;
    case 'External':
      return `its external controller${why}`;
    case 'Waiting':
      // The reason says it already: `waiting for a free migration slot (…)`.
      return span.reason?.replace(/^waiting for /, '') ?? 'its turn';
    default:
      return `${span.code}${why}`;
  }
}

/** `vmi vms/db waits for a retry (…)`, `pod shop/web-1 waits for PodDisruptionBudget shop/web`. */
export function waitLine(item: ItemTimeline, span: Span): string {
  if (span.code === 'Blocked') return `${item.kind} ${item.name} blocked: ${span.reason ?? 'a blocker'}`;
  return `${item.kind} ${item.name} waits for ${waitWords(span)}`;
}
