/** The soak's summary: the seed, faults and events by kind, requests by outcome, each invariant and its breaches. */
import { INVARIANTS, rssFloors, type Verdict } from './checker.ts';
import type { SoakLog } from './log.ts';
import { waitLines } from './waits.ts';
import type { SoakWorld } from './world.ts';

const FAULTS = /^(API |watches |replica |conflicting |node agent |metadata server )/;

function table(rows: [string, number][]): string[] {
  return rows.sort((a, b) => b[1] - a[1]).map(([name, n]) => `  ${String(n).padStart(6)}  ${name}`);
}

export function requestsByOutcome(log: SoakLog): [string, number][] {
  const counts = new Map<string, number>();
  for (const r of log.requests)
    counts.set(r.outcome ?? 'never ended', (counts.get(r.outcome ?? 'never ended') ?? 0) + 1);
  return [...counts];
}

function requestsByOrigin(log: SoakLog): [string, number][] {
  const counts = new Map<string, number>();
  for (const r of log.requests) counts.set(r.origin ?? 'unknown', (counts.get(r.origin ?? 'unknown') ?? 0) + 1);
  return [...counts];
}

function cliByExit(w: SoakWorld): [string, number][] {
  const counts = new Map<string, number>();
  for (const run of w.cli) {
    const key = `${run.command} exit ${run.exit ? (run.exit.code ?? run.exit.signal) : 'running'}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts];
}

const mib = (bytes: number | undefined): string => `${Math.round((bytes ?? 0) / 2 ** 20)} MiB`;

function rssLines(log: SoakLog): string[] {
  const lines = log.replicas.flatMap((l) => {
    const floors = rssFloors(l);
    if (!floors) return [];
    const peak = Math.max(...(l.rssByMinute ?? [l.rssAtMinute5 ?? 0, l.rssAtEnd ?? 0]));
    return [`  ${l.replica} (pid ${l.pid}): ${mib(floors.atMinute5)} → ${mib(floors.atEnd)} (peak ${mib(peak)})`];
  });
  return lines.length === 0 ? ['  none lived five minutes'] : lines;
}

/** With --nova: what the soak saw of Nova (the lab's hosts, the servers booted, what moved and who disabled what). */
function novaLines(log: SoakLog): string[] {
  const nova = log.nova;
  if (!nova) return [];
  const hosts = Object.entries(nova.nodeOf).map(([host, node]) => `${host} (${node})`);
  const byDrainbridge = nova.serviceChanges.filter(
    (c) => c.status === 'disabled' && c.reason?.startsWith('drainbridge:'),
  );
  const moves = nova.serverChanges.filter((c, i, all) => {
    const before = all.slice(0, i).findLast((p) => p.id === c.id);
    return before !== undefined && before.host !== c.host && c.host !== null;
  });
  return [
    `nova: hosts ${hosts.join(', ')}; ${nova.servers.length} servers booted; ${nova.samples} samples of Nova (${nova.failedSamples} unanswered)`,
    `  ${byDrainbridge.length} disables by drainbridge seen, ${nova.operatorDisables.length} by the operator; ${moves.length} server moves between hosts seen`,
  ];
}

export function report(w: SoakWorld, log: SoakLog, verdict: Verdict, minutes: number): string {
  const events = [...w.counts];
  const faults = events.filter(([kind]) => FAULTS.test(kind));
  const others = events.filter(([kind]) => !FAULTS.test(kind));
  const faultTotal = faults.reduce((n, [, c]) => n + c, 0);
  const lines = [
    `soak: ${minutes} min, ${w.nodes.length} nodes, seed ${log.seed} (replay: npm run soak -- --seed ${log.seed} --minutes ${minutes})`,
    `faults injected: ${faultTotal} across ${faults.length} kinds`,
    ...table(faults),
    `events: ${others.reduce((n, [, c]) => n + c, 0)}`,
    ...table(others),
    `requests: ${log.requests.length} by outcome`,
    ...table(requestsByOutcome(log)),
    ...log.requests
      .filter((r) => !r.outcome)
      .slice(0, 10)
      .map(
        (r) => `    never ended: ${r.requestId} (${r.node}, ${r.origin ?? '?'}, last phase ${r.lastPhase ?? 'none'})`,
      ),
    ...waitLines(log),
    'requests by origin',
    ...table(requestsByOrigin(log)),
    'CLI commands by exit',
    ...table(cliByExit(w)),
    'replica RSS (each process that lived five minutes in its role — a replica that took the lead, from when it first led: floor of its first 5 minutes from then → floor of its last 5)',
    ...rssLines(log),
    ...novaLines(log),
    'invariants (facts judged, breaches):',
    ...INVARIANTS.map((invariant) => {
      const broken = verdict.violations.filter((v) => v.invariant === invariant).length;
      return `  ${broken === 0 ? 'held  ' : 'BROKEN'}  ${invariant}: ${verdict.checked[invariant]} judged${broken ? `, ${broken} broken` : ''}`;
    }),
  ];
  for (const v of verdict.violations.slice(0, 50)) lines.push(`  ✗ ${v.invariant}: ${v.detail}`);
  if (verdict.violations.length > 0) {
    lines.push(
      `FAILED: ${[...new Set(verdict.violations.map((v) => v.invariant))].join(', ')} broken (seed ${log.seed})`,
    );
  } else lines.push(`every invariant held (seed ${log.seed})`);
  return lines.join('\n');
}
