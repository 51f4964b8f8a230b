/**
 * What a run waits for right now, in a few short phrases, from its timeline: pods terminating, budgets
 * holding pods back, VMs and servers migrating, blockers. The heartbeat, the live display and the JSON
 * heartbeat say these. Pure.
 */
import type { ItemTimeline, Span } from '../../lib/domain/timeline.ts';
import { waitWords } from '../../embedded/progress.ts';
import type { EvacuationTimeline } from './timeline.ts';

/** Names shown in one phrase before `and N more`. */
const NAMES_SHOWN = 3;

function names(items: readonly string[]): string {
  const shown = items.slice(0, NAMES_SHOWN).join(', ');
  return items.length > NAMES_SHOWN ? `${shown} and ${items.length - NAMES_SHOWN} more` : shown;
}

function seconds(fromIso: string | undefined, now: number): string {
  if (!fromIso) return '';
  return ` (${Math.max(0, Math.round((now - Date.parse(fromIso)) / 1000))} s)`;
}

const openSpan = (spans: readonly Span[]) => spans.find((span) => span.to === undefined);

/** One phrase per thing awaited, the longest-waiting first within each kind. */
export function awaitedOf(timeline: EvacuationTimeline | undefined, now: number = Date.now()): string[] {
  if (!timeline) return [];
  const phrases: string[] = [];
  const present = timeline.items.filter((item) => item.state !== 'gone');
  const terminating = present.filter((item) => item.kind === 'pod' && item.state === 'moving');
  if (terminating.length > 0) {
    const oldest = terminating.map((item) => item.askedAt ?? '').sort()[0];
    const noun = terminating.length === 1 ? 'pod' : `${terminating.length} pods`;
    phrases.push(`${noun} to terminate: ${names(terminating.map((i) => i.name))}${seconds(oldest, now)}`);
  }
  const byBudget = new Map<string, { pods: string[]; since: string }>();
  const otherWaits: { item: ItemTimeline; span: Span }[] = [];
  for (const item of present) {
    const span = openSpan(item.waits);
    if (!span) continue;
    if (span.budget) {
      const entry = byBudget.get(span.budget) ?? { pods: [], since: span.from };
      entry.pods.push(item.name);
      if (span.from < entry.since) entry.since = span.from;
      byBudget.set(span.budget, entry);
    } else otherWaits.push({ item, span });
  }
  for (const [budget, entry] of byBudget) {
    const noun = entry.pods.length === 1 ? `pod ${entry.pods[0]}` : `${entry.pods.length} pods`;
    phrases.push(`PodDisruptionBudget ${budget} to allow ${noun}${seconds(entry.since, now)}`);
  }
  for (const item of present.filter((i) => i.kind !== 'pod' && i.state === 'moving')) {
    const to = item.target ? ` → ${item.target}` : '';
    phrases.push(`${item.kind} ${item.name} migrating ${item.source ?? '?'}${to}${seconds(item.askedAt, now)}`);
  }
  for (const { item, span } of otherWaits) {
    phrases.push(`${item.kind} ${item.name}: ${waitWords(span)}${seconds(span.from, now)}`);
  }
  const blockers = [
    ...timeline.branches.flatMap((branch) => branch.blockers),
    ...present.flatMap((item) => item.blockers),
  ].filter((span) => span.to === undefined);
  for (const span of blockers.slice(0, 2))
    phrases.push(`blocked: ${span.reason ?? span.code}${seconds(span.from, now)}`);
  if (blockers.length > 2) phrases.push(`and ${blockers.length - 2} more blockers`);
  return phrases;
}
