/**
 * How requests waited for the limit's slots (--max-held), from the held-node samples (observe.ts records one
 * only when the set changes, so each sample stands until the next). The checker judges requests-end on the
 * time a request was not behind a full limit; the report prints how the line went.
 */
import type { HeldSample, RequestHistory, SoakLog } from './log.ts';

/** Each sample with the instant it stopped standing (the next sample's, or the end of the log). */
function spans(log: Pick<SoakLog, 'held' | 'endedAt'>): { sample: HeldSample; until: number }[] {
  return log.held.map((sample, i) => ({ sample, until: log.held[i + 1]?.at ?? log.endedAt }));
}

type Line = Pick<SoakLog, 'held' | 'endedAt' | 'maxHeldNodes'>;

/** Milliseconds within [from, to) when every slot of the limit was held by nodes other than `node`. */
export function fullByOthersMs(log: Line, node: string, from: number, to: number): number {
  let total = 0;
  for (const { sample, until } of spans(log)) {
    if (sample.held.filter((n) => n !== node).length < log.maxHeldNodes) continue;
    const overlap = Math.min(to, until) - Math.max(from, sample.at);
    if (overlap > 0) total += overlap;
  }
  return total;
}

/** When a request's own time begins: a notice's request waits for its planned start by design. */
export const requestFrom = (r: RequestHistory): number => Math.max(r.firstSeenAt, r.startAt ?? 0);

/**
 * The longest stretch a request spent not holding its node while a slot was free: the line's slowness
 * (a missed wake-up, a failover) rather than the limit's.
 */
export function longestFreeSlotWaitMs(log: SoakLog, r: RequestHistory): { ms: number; at: number } {
  const from = requestFrom(r);
  const to = r.endedAt ?? log.endedAt;
  let stretch = 0;
  let best = { ms: 0, at: from };
  for (const { sample, until } of spans(log)) {
    const overlap = Math.min(to, until) - Math.max(from, sample.at);
    if (overlap <= 0) continue;
    const waiting = !sample.held.includes(r.node) && sample.held.filter((n) => n !== r.node).length < log.maxHeldNodes;
    stretch = waiting ? stretch + overlap : 0;
    if (stretch > best.ms) best = { ms: stretch, at: Math.max(from, sample.at) + overlap - stretch };
  }
  return best;
}

/** The report's lines on the line: how long the limit was full, and the longest waits behind it and beside a free slot. */
export function waitLines(log: SoakLog): string[] {
  const all = spans(log);
  const runMs = all.reduce((n, s) => n + (s.until - s.sample.at), 0);
  const fullMs = all
    .filter((s) => s.sample.held.length >= log.maxHeldNodes)
    .reduce((n, s) => n + (s.until - s.sample.at), 0);
  const ended = log.requests.filter((r) => r.endedAt !== undefined);
  const behind = ended
    .map((r) => ({ r, ms: fullByOthersMs(log, r.node, requestFrom(r), r.endedAt ?? 0) }))
    .sort((a, b) => b.ms - a.ms)[0];
  const free = log.requests.map((r) => ({ r, ...longestFreeSlotWaitMs(log, r) })).sort((a, b) => b.ms - a.ms)[0];
  const s = (ms: number): string => `${Math.round(ms / 1000)} s`;
  return [
    `the line: all ${log.maxHeldNodes} slots held ${s(fullMs)} of ${s(runMs)} sampled`,
    `  longest time behind a full limit: ${behind ? `${s(behind.ms)} (${behind.r.requestId})` : 'none'}`,
    `  longest wait with a slot free: ${free ? `${s(free.ms)} (${free.r.requestId}, from ${new Date(free.at).toISOString()})` : 'none'}`,
  ];
}
