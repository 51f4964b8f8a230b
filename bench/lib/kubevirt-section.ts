/**
 * The KubeVirt section (`npm run bench -- --sections kubevirt`): 20 VMs of mixed memory on one node,
 * evacuated by drainbridge and by `kubectl drain` (KubeVirt's eviction path), each on a fresh simulator,
 * alternating which goes first; the time until every VM runs elsewhere beside the floor computed from
 * KubeVirt's limits and the simulator's migration times (bench/lib/migration-floor.ts).
 */
import { billedStateTransitions } from '../../embedded/executor.ts';
import { renderColumns } from './columns.ts';
import { costLine, dollars } from './cost.ts';
import { runVmEvacuation, VM_KUBECTL_FLAGS, type VmRunResult, type VmTool } from './kubevirt-run.ts';
import {
  KUBEVIRT_LIMITS,
  KUBEVIRT_NODE,
  MIGRATION_TIMINGS,
  POD_STARTUP_SECONDS,
  VM_MEMORY_GIB,
  vmName,
} from './kubevirt-scenario.ts';
import { type MigrationFloor, migrationFloor, migrationSeconds } from './migration-floor.ts';
import type { BenchOptions } from './options.ts';
import { totalOf } from './requests.ts';
import type { SectionReport } from './section.ts';
import { ratioOf, spreadOf } from './stats.ts';
import { medianCost } from './summary.ts';
import { secs, type TargetRow, times } from './targets.ts';

/** The target: every VM elsewhere within 1.1× the floor. */
export const KUBEVIRT_FLOOR_TARGET = 1.1;

const STEPS = { podStartupSeconds: POD_STARTUP_SECONDS, ...MIGRATION_TIMINGS };

/** The floor of the scenario's VMs under KubeVirt's limits, in simulated seconds. */
export function scenarioFloor(): MigrationFloor {
  const jobs = VM_MEMORY_GIB.map((memoryGiB, i) => ({
    key: vmName(i),
    memoryGiB,
    seconds: migrationSeconds(memoryGiB, STEPS),
  }));
  const slots = Math.min(
    KUBEVIRT_LIMITS.parallelOutboundMigrationsPerNode,
    KUBEVIRT_LIMITS.parallelMigrationsPerCluster,
  );
  return migrationFloor(jobs, slots);
}

function runLine(run: VmRunResult): string {
  const head = `${run.tool.padEnd(11)} #${run.repetition + 1}`;
  if (!run.ok) return `${head} FAILED after ${secs(run.toolMs / 1000)}: ${run.failure}`;
  const requests = totalOf(run.requests).total;
  return (
    `${head} every VM elsewhere after ${secs((run.vmsElsewhereMs ?? 0) / 1000)}, tool done after ${secs(run.toolMs / 1000)}: ` +
    `${run.vmsMoved}/${run.vms} VMs moved, ${run.migrations.length} migrations, at most ${run.mostRunning} past Pending at once, ${requests} requests`
  );
}

function orderFor(repetition: number): VmTool[] {
  return repetition % 2 === 0 ? ['drainbridge', 'kubectl'] : ['kubectl', 'drainbridge'];
}

interface ToolFigures {
  readonly tool: VmTool;
  readonly ok: number;
  readonly runs: number;
  readonly elsewhere: ReturnType<typeof spreadOf>;
  readonly toolDone: ReturnType<typeof spreadOf>;
  readonly requests: number | undefined;
  readonly mostRunning: number;
  /** Median over the runs of (measured − modelled) seconds per migration: what the floor does not model. */
  readonly overheadSeconds: number | undefined;
  /**
   * Median over the runs of the slots' idle time until every VM was elsewhere: slots × that time − the
   * migrations' own (Scheduling → Succeeded) seconds, in simulated seconds — the wait between a migration
   * ending and the next one starting.
   */
  readonly idleSlotSeconds: number | undefined;
}

function overheadOf(runs: readonly VmRunResult[]): number | undefined {
  const modelled = new Map<string, number>(
    VM_MEMORY_GIB.map((gib, i) => [`vms/${vmName(i)}`, migrationSeconds(gib, STEPS)]),
  );
  const deltas = runs.flatMap((run) =>
    run.migrations.flatMap((m) =>
      m.seconds !== undefined && modelled.has(m.vmi) ? [m.seconds - (modelled.get(m.vmi) ?? 0)] : [],
    ),
  );
  return spreadOf(deltas)?.median;
}

function idleOf(runs: readonly VmRunResult[], speed: number, slots: number): number | undefined {
  const idle = runs.map((run) => {
    const busy = run.migrations.reduce((sum, m) => sum + (m.seconds ?? 0), 0);
    return (slots * (run.vmsElsewhereMs ?? 0) * speed) / 1000 - busy;
  });
  return spreadOf(idle)?.median;
}

function figuresOf(tool: VmTool, runs: readonly VmRunResult[], speed: number, slots: number): ToolFigures {
  const mine = runs.filter((run) => run.tool === tool);
  const ok = mine.filter((run) => run.ok);
  return {
    tool,
    ok: ok.length,
    runs: mine.length,
    elsewhere: spreadOf(ok.map((run) => (run.vmsElsewhereMs ?? 0) / 1000)),
    toolDone: spreadOf(ok.map((run) => run.toolMs / 1000)),
    requests: spreadOf(ok.map((run) => totalOf(run.requests).total))?.median,
    mostRunning: Math.max(0, ...mine.map((run) => run.mostRunning)),
    overheadSeconds: overheadOf(ok),
    idleSlotSeconds: idleOf(ok, speed, slots),
  };
}

function table(figures: readonly ToolFigures[], floorSeconds: number): string {
  const header = [
    'tool',
    'ok',
    'all VMs elsewhere (median)',
    'min',
    'max',
    '× floor',
    'tool done',
    'most past Pending',
    'requests',
    'per-migration overhead',
    'slots idle',
  ];
  const rows = figures.map((f) => [
    f.tool,
    `${f.ok}/${f.runs}`,
    secs(f.elsewhere?.median),
    secs(f.elsewhere?.min),
    secs(f.elsewhere?.max),
    times(ratioOf(f.elsewhere?.median, floorSeconds)),
    secs(f.toolDone?.median),
    String(f.mostRunning),
    f.requests === undefined ? '-' : String(f.requests),
    f.overheadSeconds === undefined ? '-' : `${f.overheadSeconds >= 0 ? '+' : ''}${f.overheadSeconds.toFixed(1)} s`,
    secs(f.idleSlotSeconds),
  ]);
  return renderColumns([header, ...rows]);
}

/** The drainbridge runs' execution counts and bill (medians), or undefined without a successful run. */
function executionOf(runs: readonly VmRunResult[]) {
  const executions = runs.flatMap((run) => (run.ok && run.execution ? [run.execution] : []));
  if (executions.length === 0) return undefined;
  const median = (pick: (e: (typeof executions)[number]) => number) => spreadOf(executions.map(pick))?.median ?? 0;
  return {
    transitions: median((e) => billedStateTransitions(e.stats)),
    retries: median((e) => e.stats.retries),
    invocations: median((e) => e.stats.lambdaInvocations),
    notYetDone: median((e) => e.notYetDone),
    historyEvents: median((e) => e.historyEvents),
    events: median((e) => e.usage.events),
    cost: medianCost(executions.map((e) => e.cost)),
  };
}

function executionLines(runs: readonly VmRunResult[]): string {
  const e = executionOf(runs);
  if (!e) return 'drainbridge Evacuate execution: no successful run';
  return [
    `drainbridge Evacuate execution (median): ${e.transitions} billed state transitions (${e.retries} retries), ` +
      `${e.invocations} Lambda invocations (${e.notYetDone} NotYetDone), ≈${e.historyEvents} history events`,
    costLine(e.cost, e),
  ].join('\n');
}

function costRow(runs: readonly VmRunResult[]): TargetRow {
  const e = executionOf(runs);
  return {
    section: 'kubevirt',
    figure: 'AWS bill per 1,000 evacuations',
    target: 'reported',
    value: e?.cost.total,
    shown: e ? dollars(e.cost.total) : '-',
    reference: e
      ? `${e.transitions} transitions, ${e.invocations} invocations, ${e.cost.gbSeconds.toFixed(1)} GB-s, ${e.events} events, ${(e.cost.logBytes / 1024).toFixed(1)} KiB logs`
      : '-',
  };
}

function targetRows(drainbridge: ToolFigures, kubectl: ToolFigures, floorSeconds: number): TargetRow[] {
  const ratio = ratioOf(drainbridge.elsewhere?.median, floorSeconds);
  const kubectlRatio = ratioOf(kubectl.elsewhere?.median, floorSeconds);
  return [
    {
      section: 'kubevirt',
      figure: `${VM_MEMORY_GIB.length} VMs elsewhere, drainbridge / floor`,
      target: `≤ ${KUBEVIRT_FLOOR_TARGET}× the floor`,
      limit: KUBEVIRT_FLOOR_TARGET,
      value: ratio,
      shown: `${times(ratio)} (${secs(drainbridge.elsewhere?.median)})`,
      reference: `floor ${secs(floorSeconds)}; kubectl drain ${secs(kubectl.elsewhere?.median)} (${times(kubectlRatio)})`,
    },
    {
      section: 'kubevirt',
      figure: 'most migrations past Pending from the node',
      target: `≤ ${KUBEVIRT_LIMITS.parallelOutboundMigrationsPerNode} (KubeVirt's limit)`,
      limit: KUBEVIRT_LIMITS.parallelOutboundMigrationsPerNode,
      value: drainbridge.mostRunning,
      shown: String(drainbridge.mostRunning),
      reference: `kubectl drain ${kubectl.mostRunning}`,
    },
  ];
}

/** Runs the KubeVirt section; `kubectl` is the binary to compare with. */
export async function runKubevirtSection(options: BenchOptions, kubectl: string): Promise<SectionReport> {
  const floor = scenarioFloor();
  const floorWall = floor.seconds / options.speed;
  console.log(
    `KubeVirt: ${VM_MEMORY_GIB.length} live-migratable VMs (${VM_MEMORY_GIB.reduce((a, b) => a + b, 0)} GiB, 1–16 GiB) on ${KUBEVIRT_NODE}, ` +
      `KubeVirt's limits ${KUBEVIRT_LIMITS.parallelOutboundMigrationsPerNode} outbound per node / ${KUBEVIRT_LIMITS.parallelMigrationsPerCluster} per cluster; ` +
      `speed ${options.speed}×, ${options.repetitions} repetition(s) per tool, a fresh simulator per run`,
  );
  console.log(
    `  a migration takes start-up ${STEPS.podStartupSeconds} s + preparation ${STEPS.targetPreparationSeconds} s + start ${STEPS.migrationStartSeconds} s ` +
      `+ transfer ${STEPS.transferBaseSeconds} s + ${STEPS.transferSecondsPerGiB} s/GiB (simulated)`,
  );
  console.log(
    `  kubectl drain ${KUBEVIRT_NODE} ${VM_KUBECTL_FLAGS.join(' ')} (KubeVirt's eviction webhook → its evacuation migrations)\n`,
  );
  if (options.retryIntervalMs !== undefined) {
    console.log(
      `DIAGNOSIS, not the measurement: drainbridge's Step Functions Retry waits replaced by ${options.retryIntervalMs} ms\n`,
    );
  }
  const runs: VmRunResult[] = [];
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    for (const tool of orderFor(repetition)) {
      const run = await runVmEvacuation(tool, repetition, {
        kubectl,
        timeoutMs: options.runTimeoutMs,
        speed: options.speed,
        retryIntervalMs: options.retryIntervalMs,
      });
      runs.push(run);
      console.log(runLine(run));
    }
  }
  const drainbridge = figuresOf('drainbridge', runs, options.speed, floor.slots);
  const kubectlFigures = figuresOf('kubectl', runs, options.speed, floor.slots);
  const text = [
    `floor: ${secs(floorWall)} (longest-first over ${floor.slots} slots; no schedule below ${secs(floor.lowerBoundSeconds / options.speed)}: ` +
      `${floor.totalSeconds.toFixed(1)} s of migrations / ${floor.slots}, longest ${floor.longestSeconds.toFixed(1)} s)`,
    table([drainbridge, kubectlFigures], floorWall),
    executionLines(runs),
    'per-migration overhead: median of (measured Scheduling → Succeeded) − the modelled time, simulated s; slots idle: ' +
      `${floor.slots} × the time until every VM was elsewhere − the migrations' own time (the floor's schedule leaves ` +
      `${(floor.slots * floor.seconds - floor.totalSeconds).toFixed(1)} s)`,
  ].join('\n');
  return {
    text,
    rows: [...targetRows(drainbridge, kubectlFigures, floorWall), costRow(runs)].map((row) =>
      options.retryIntervalMs === undefined
        ? row
        : { ...row, section: `kubevirt (Retry ${options.retryIntervalMs} ms)` },
    ),
    json: { speed: options.speed, floor, runs },
    ok: runs.every((run) => run.ok),
  };
}
