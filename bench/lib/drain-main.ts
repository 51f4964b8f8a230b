/**
 * The drain benchmark: for each case and repetition, kubectl drain and a drainbridge evacuation, each on
 * its own fresh simulator, alternating which goes first; then a table per case and a JSON file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { type BenchCase, defaultCases } from './cases.ts';
import { findKubectl } from './kubectl.ts';
import { type BenchOptions, BenchUsageError, parseBenchOptions, USAGE } from './options.ts';
import { totalOf } from './requests.ts';
import { type RunResult, runOnce, type Tool } from './run-case.ts';
import { summarize } from './summary.ts';
import { renderCase } from './table.ts';

/** Printed with every report: the two tools wait differently, and both in real time. */
export const POLLING_NOTE = [
  'How the tools wait (both in real time; the simulator speed scales only the cluster: grace periods, pod start-up):',
  '  kubectl drain: one goroutine per pod; a PDB-refused eviction (429) is retried every 5 s; deletion polled every 1 s.',
  '  drainbridge:   the pods pass is re-run by Step Functions Retry on NotYetDone (2 s × 1.5, at most 30 s, full jitter);',
  '                 a PDB-refused pod is asked again after 5 s (other refusals: 5 s doubling, at most 5 min).',
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

/** kubectl first on even repetitions, drainbridge first on odd ones: neither always runs on a warmer machine. */
function orderFor(repetition: number): Tool[] {
  return repetition % 2 === 0 ? ['kubectl', 'drainbridge'] : ['drainbridge', 'kubectl'];
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

function writeResults(outDir: string, report: Record<string, unknown>): string {
  const dir = resolve(outDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `drain-${new Date().toISOString().replaceAll(':', '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/** Runs the benchmark for `argv`; resolves to the exit code (0 all runs drained, 1 some failed, 2 usage). */
export async function main(argv: readonly string[]): Promise<number> {
  const known = defaultCases(1).map((c) => c.name);
  let options: BenchOptions;
  try {
    options = parseBenchOptions(argv, known);
  } catch (error) {
    if (!(error instanceof BenchUsageError)) throw error;
    console.error(`bench: ${error.message}\n${USAGE}`);
    return 2;
  }
  const kubectl = findKubectl();
  if (!kubectl) {
    console.error('bench: no kubectl found (set KUBECTL_BINARY, or install kubectl); the comparison needs it');
    return 2;
  }
  const cases = defaultCases(options.speed).filter((c) => options.cases.includes(c.name));
  const startedAt = new Date().toISOString();
  const host = { cpus: availableParallelism(), loadavg: loadavg(), node: process.version, platform: process.platform };
  console.log(
    `drainbridge vs kubectl drain — simulator speed ${options.speed}×, ${options.repetitions} repetition(s) per tool, ` +
      `alternating, a fresh simulator per run; ${host.cpus} CPUs, load ${host.loadavg.map((l) => l.toFixed(1)).join(' ')}; kubectl ${kubectl}`,
  );
  console.log(`${POLLING_NOTE}\n`);
  const runs = await runAll(cases, options, kubectl);
  const summary = summarize(runs);
  console.log('');
  for (const caseSummary of summary) {
    console.log(
      `${renderCase(
        caseSummary,
        cases.find((c) => c.name === caseSummary.case),
      )}\n`,
    );
  }
  const file = writeResults(options.outDir, {
    startedAt,
    finishedAt: new Date().toISOString(),
    host,
    kubectl,
    options,
    cases,
    note: POLLING_NOTE,
    summary,
    runs,
  });
  console.log(`results: ${file}`);
  return runs.every((run) => run.ok && run.podsLeft === 0) ? 0 : 1;
}
