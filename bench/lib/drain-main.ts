/**
 * The drain section: for each case and repetition, kubectl drain and a drainbridge evacuation, each on
 * its own fresh simulator, alternating which goes first; the oracle once per case (the physical floor's
 * check); then a block per case and the case's target rows.
 */
import { type BenchCase, defaultCases } from './cases.ts';
import type { BenchOptions } from './options.ts';
import { totalOf } from './requests.ts';
import { type RunResult, runOnce, type Tool } from './run-case.ts';
import type { SectionReport } from './section.ts';
import { summarize } from './summary.ts';
import { caseTargets, renderCase } from './table.ts';

/** Printed with every report: the two tools wait differently, and both in real time. */
export const POLLING_NOTE = [
  'How the tools wait (both in real time; the simulator speed scales only the cluster: grace periods, pod start-up):',
  '  kubectl drain: one goroutine per pod; a PDB-refused eviction (429) is retried every 5 s; deletion polled every 1 s.',
  '  drainbridge:   a pods pass evicts what the PDBs allow, then waits on watches (pods, PDBs, node; at most 30 s) and',
  '                 evicts again as soon as a pod left or a budget allows more; a pass that changed nothing throws',
  '                 NotYetDone, re-run by Step Functions Retry (2 s × 1.5, at most 30 s, full jitter).',
  '  oracle:        every 20 ms, evicts whatever the PDBs status allows (the physical floor, measured).',
].join('\n');

const MIN_RUN_MS = 10_000;

function runLine(result: RunResult, elapsedMs: number): string {
  const total = totalOf(result.requests);
  const head = `[${(elapsedMs / 1000).toFixed(0).padStart(5)} s] ${result.case} #${result.repetition + 1} ${result.tool.padEnd(11)}`;
  const moved = `${result.podsMoved}/${result.podsMoved + result.podsLeft} pods moved`;
  if (!result.ok) return `${head} FAILED after ${(result.wallMs / 1000).toFixed(1)} s (${moved}): ${result.failure}`;
  const left = result.podsLeft > 0 ? `, ${result.podsLeft} pods LEFT on the node` : '';
  return `${head} drained in ${(result.wallMs / 1000).toFixed(1)} s: ${result.podsMoved} pods moved, ${total.total} requests (${total.evictions} evictions)${left}`;
}

/** kubectl first on even repetitions, drainbridge first on odd ones; the oracle once, after the first pair. */
function orderFor(repetition: number): Tool[] {
  const pair: Tool[] = repetition % 2 === 0 ? ['kubectl', 'drainbridge'] : ['drainbridge', 'kubectl'];
  return repetition === 0 ? [...pair, 'oracle'] : pair;
}

async function runAll(cases: readonly BenchCase[], options: BenchOptions, kubectl: string): Promise<RunResult[]> {
  const started = performance.now();
  const deadline = started + options.totalLimitMs;
  const results: RunResult[] = [];
  for (const benchCase of cases) {
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      for (const tool of orderFor(repetition)) {
        const remainingMs = deadline - performance.now();
        if (remainingMs < MIN_RUN_MS) {
          console.log(`time limit reached: skipping ${benchCase.name} #${repetition + 1} ${tool}`);
          continue;
        }
        const timeoutMs = Math.min(options.runTimeoutMs, remainingMs);
        const result = await runOnce(benchCase, tool, repetition, { kubectl, timeoutMs });
        results.push(result);
        console.log(runLine(result, performance.now() - started));
      }
    }
  }
  return results;
}

/** Runs the drain section; `kubectl` is the binary to compare with. */
export async function runDrainSection(options: BenchOptions, kubectl: string): Promise<SectionReport> {
  const cases = defaultCases(options.speed).filter((c) => options.cases.includes(c.name));
  console.log(
    `drainbridge vs kubectl drain — simulator speed ${options.speed}×, ${options.repetitions} repetition(s) per tool, ` +
      `alternating, a fresh simulator per run; kubectl ${kubectl}`,
  );
  console.log(`${POLLING_NOTE}\n`);
  const runs = await runAll(cases, options, kubectl);
  const summary = summarize(runs);
  const blocks = summary.map((caseSummary) =>
    renderCase(
      caseSummary,
      cases.find((c) => c.name === caseSummary.case),
    ),
  );
  return {
    text: blocks.join('\n\n'),
    rows: summary.flatMap(caseTargets),
    json: { speed: options.speed, cases, note: POLLING_NOTE, summary, runs },
    ok: runs.every((run) => run.ok && run.podsLeft === 0),
  };
}
