/**
 * `npm run bench`: the sections in order (drain, reaction, footprint, scale, queue), each printing its own
 * block, then one table of every figure beside its target and reference; the raw runs go to a JSON file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultCases } from './cases.ts';
import { runDrainSection } from './drain-main.ts';
import { runFootprintSection } from './footprint.ts';
import { findKubectl } from './kubectl.ts';
import { runKubevirtSection } from './kubevirt-section.ts';
import { type BenchOptions, BenchUsageError, parseBenchOptions, type Section, USAGE } from './options.ts';
import { runQueueSection } from './queue.ts';
import { runReactionSection } from './reaction.ts';
import { runScaleSection } from './scale.ts';
import type { SectionReport } from './section.ts';
import { renderTargets, type TargetRow } from './targets.ts';

function writeResults(outDir: string, report: Record<string, unknown>): string {
  const dir = resolve(outDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${new Date().toISOString().replaceAll(':', '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

function hostLine(): { text: string; host: Record<string, unknown> } {
  const host = { cpus: availableParallelism(), loadavg: loadavg(), node: process.version, platform: process.platform };
  const load = host.loadavg.map((l) => l.toFixed(2)).join(' ');
  return { text: `${host.cpus} CPUs, load average ${load}, Node ${host.node}`, host };
}

async function runSection(section: Section, options: BenchOptions, kubectl: string): Promise<SectionReport> {
  switch (section) {
    case 'drain':
      return runDrainSection(options, kubectl);
    case 'kubevirt':
      return runKubevirtSection(options, kubectl);
    case 'reaction':
      return runReactionSection(options);
    case 'footprint':
      return runFootprintSection();
    case 'scale':
      return runScaleSection(options);
    case 'queue':
      return runQueueSection();
  }
}

/** Runs the benchmark for `argv`; resolves to the exit code (0 all runs ended as they should, 1 some failed, 2 usage). */
export async function main(argv: readonly string[]): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseBenchOptions(
      argv,
      defaultCases(1).map((c) => c.name),
    );
  } catch (error) {
    if (!(error instanceof BenchUsageError)) throw error;
    console.error(`bench: ${error.message}\n${USAGE}`);
    return 2;
  }
  const kubectl = findKubectl();
  if (!kubectl && (options.sections.includes('drain') || options.sections.includes('kubevirt'))) {
    console.error(
      'bench: no kubectl found (set KUBECTL_BINARY, or install kubectl); the drain and kubevirt comparisons need it',
    );
    return 2;
  }
  const startedAt = new Date().toISOString();
  const before = hostLine();
  console.log(`drainbridge benchmarks (${options.sections.join(', ')}) — ${before.text}\n`);
  const reports: Partial<Record<Section, SectionReport>> = {};
  const rows: TargetRow[] = [];
  for (const section of options.sections) {
    console.log(`# ${section}`);
    const report = await runSection(section, options, kubectl ?? '');
    reports[section] = report;
    rows.push(...report.rows);
    console.log(`\n${report.text}\n`);
  }
  const after = hostLine();
  console.log(`# targets (load average at the end: ${after.text})`);
  console.log(renderTargets(rows));
  const file = writeResults(options.outDir, {
    startedAt,
    finishedAt: new Date().toISOString(),
    host: { before: before.host, after: after.host },
    options,
    targets: rows,
    sections: Object.fromEntries(Object.entries(reports).map(([name, report]) => [name, report.json])),
  });
  console.log(`\nresults: ${file}`);
  return Object.values(reports).every((report) => report.ok) ? 0 : 1;
}
