/**
 * What a run waits for right now, in a few short phrases, from its timeline: pods terminating, budgets
 * holding pods back, VMs and servers migrating, blockers. The heartbeat, the live display and the JSON
 * heartbeat say these. Pure.
 */

import { waitWords } from '../../embedded/progress.ts';
import type { ItemTimeline, Span } from '../../lib/model/timeline.ts';
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

function terminatingPhrase(present: readonly ItemTimeline[], now: number): string[] {
  const terminating = present.filter((item) => item.kind === 'pod' && item.state === 'moving');
  if (terminating.length === 0) return [];
  const oldest = terminating.map((item) => item.askedAt ?? '').sort()[0];
  const noun = terminating.length === 1 ? 'pod' : `${terminating.length} pods`;
  return [`${noun} to terminate: ${names(terminating.map((i) => i.name))}${seconds(oldest, now)}`];
}

/** Open waits: a budget's once with the pods it holds, any other wait per item. */
function waitPhrases(present: readonly ItemTimeline[], now: number): string[] {
  const byBudget = new Map<string, { pods: string[]; since: string }>();
  const others: string[] = [];
  for (const item of present) {
    const span = openSpan(item.waits);
    // An item held by a blocker waits for that blocker: said once, as a blocker (blockerPhrases).
    if (span && !span.budget && openSpan(item.blockers)) continue;
    if (!span?.budget) {
      if (span) others.push(`${item.kind} ${item.name}: ${waitWords(span)}${seconds(span.from, now)}`);
      continue;
    }
    const entry = byBudget.get(span.budget) ?? { pods: [], since: span.from };
    entry.pods.push(item.name);
    if (span.from < entry.since) entry.since = span.from;
    byBudget.set(span.budget, entry);
  }
  const budgets = [...byBudget].map(([budget, entry]) => {
    const noun = entry.pods.length === 1 ? `pod ${entry.pods[0]}` : `${entry.pods.length} pods`;
    return `PodDisruptionBudget ${budget} to allow ${noun}${seconds(entry.since, now)}`;
  });
  return [...budgets, ...others];
}

function blockerPhrases(timeline: EvacuationTimeline, present: readonly ItemTimeline[], now: number): string[] {
  const spans = [...timeline.branches.flatMap((b) => b.blockers), ...present.flatMap((i) => i.blockers)];
  // One phrase per blocker sentence (two branches can report the same pod), from its first report.
  const bySentence = new Map<string, Span>();
  for (const span of spans.filter((s) => s.to === undefined)) {
    const sentence = span.reason ?? span.code;
    const earlier = bySentence.get(sentence);
    if (!earlier || span.from < earlier.from) bySentence.set(sentence, span);
  }
  const open = [...bySentence.values()].sort((a, b) => a.from.localeCompare(b.from));
  const phrases = open.slice(0, 2).map((span) => `blocked: ${span.reason ?? span.code}${seconds(span.from, now)}`);
  if (open.length > 2) phrases.push(`and ${open.length - 2} more blockers`);
  return phrases;
}

/** One phrase per thing awaited, the longest-waiting first within each kind. */
export function awaitedOf(timeline: EvacuationTimeline | undefined, now: number = Date.now()): string[] {
  if (!timeline) return [];
  const present = timeline.items.filter((item) => item.state !== 'gone');
  const migrating = present
    .filter((item) => item.kind !== 'pod' && item.state === 'moving')
    .map((item) => {
      const to = item.target ? ` → ${item.target}` : '';
      return `${item.kind} ${item.name} migrating ${item.source ?? '?'}${to}${seconds(item.askedAt, now)}`;
    });
  return [
    ...terminatingPhrase(present, now),
    ...waitPhrases(present, now),
    ...migrating,
    ...blockerPhrases(timeline, present, now),
  ];
}
