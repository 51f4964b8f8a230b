/**
 * `drainbridge run`'s metrics beyond the forwarder's (same registry, same /metrics): evacuations in
 * progress, pods evicted and VMs migrated (from the passes' progress, each branch counted as the branch
 * registry says it moves: pods or VMs — Nova servers and KubeVirt VMs alike), evacuation duration, and
 * whether the circuit breaker paused admission (read from the admission Lease at each scrape, so a
 * `drainbridge resume` from anywhere shows at once), and each health gate's last verdict in this process.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { type GateObservation, onGateVerdicts } from '../../lib/admission/index.ts';
import type { MoveKind } from '../../lib/branches/contract/branch.ts';
import { BRANCH_REGISTRY } from '../../lib/branches/registry.ts';
import type { TaskCall } from '../executor.ts';

export interface RunMetrics {
  readonly inProgress: Gauge;
  readonly podsEvicted: Counter;
  readonly serversMigrated: Counter<'branch'>;
  readonly duration: Histogram<'outcome'>;
  /** Books a task call (pass outputs carry each branch's moved count). */
  observeTask(call: TaskCall): void;
  /** Books an outcome event the workflow published. */
  observeOutcome(detailType: string, detail: Record<string, unknown>): void;
}

/** What each branch moves, from the registry (lib/branches). */
const COUNTERS: ReadonlyMap<string, MoveKind['counter']> = new Map(
  BRANCH_REGISTRY.map((branch) => [branch.name, branch.moves.counter]),
);

export function createRunMetrics(
  registry: Registry,
  countInProgress: () => number,
  admissionPaused?: () => Promise<boolean>,
): RunMetrics {
  if (admissionPaused) pausedGauge(registry, admissionPaused);
  onGateVerdicts(gateMetrics(registry));
  const inProgress = new Gauge({
    name: 'drainbridge_evacuations_in_progress',
    help: 'Evacuate executions running in this process',
    registers: [registry],
    collect() {
      this.set(countInProgress());
    },
  });
  const podsEvicted = new Counter({
    name: 'drainbridge_pods_evicted_total',
    help: 'Pods that left their node after drainbridge evicted them',
    registers: [registry],
  });
  const serversMigrated = new Counter({
    name: 'drainbridge_servers_migrated_total',
    help: 'VMs live-migrated off their node, by branch (nova: OpenStack servers; kubevirt: KubeVirt VMs)',
    labelNames: ['branch'],
    registers: [registry],
  });
  // Every VM branch shows from the start, at 0 (a rate over a series that does not exist yet is empty).
  for (const [branch, counter] of COUNTERS) if (counter === 'servers-migrated') serversMigrated.inc({ branch }, 0);
  const duration = new Histogram({
    name: 'drainbridge_evacuation_duration_seconds',
    help: 'Time from the start of an evacuation to its end, by outcome',
    labelNames: ['outcome'],
    buckets: [10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400, 28_800],
    registers: [registry],
  });
  /** Last moved count per execution and branch, so each pass adds only what moved since. */
  const moved = new Map<string, number>();
  const firstSeen = new Map<string, number>();
  return {
    inProgress,
    podsEvicted,
    serversMigrated,
    duration,
    observeTask(call) {
      if (!firstSeen.has(call.executionId)) firstSeen.set(call.executionId, Date.now());
      const output = call.output as { branch?: string; progress?: { moved?: number } } | undefined;
      if (call.functionKey !== 'pass' || !output?.branch || output.progress?.moved === undefined) return;
      const key = `${call.executionId} ${output.branch}`;
      const delta = output.progress.moved - (moved.get(key) ?? 0);
      moved.set(key, output.progress.moved);
      if (delta <= 0) return;
      const counter = COUNTERS.get(output.branch);
      if (counter === 'pods-evicted') podsEvicted.inc(delta);
      else if (counter === 'servers-migrated') serversMigrated.inc({ branch: output.branch }, delta);
    },
    observeOutcome(detailType, detail) {
      if (detailType === 'Evacuation Succeeded' && typeof detail.durationSeconds === 'number') {
        duration.observe({ outcome: 'succeeded' }, detail.durationSeconds);
      }
      const executionId = typeof detail.executionId === 'string' ? detail.executionId : '';
      if (detailType === 'Evacuation Failed' && firstSeen.has(executionId)) {
        duration.observe({ outcome: 'failed' }, (Date.now() - (firstSeen.get(executionId) ?? 0)) / 1000);
      }
      if (detailType === 'Evacuation Succeeded' || detailType === 'Evacuation Failed') firstSeen.delete(executionId);
    },
  };
}

/** 1 while the circuit breaker keeps admission paused; an unreadable Lease keeps the last value read. */
function pausedGauge(registry: Registry, admissionPaused: () => Promise<boolean>): Gauge {
  return new Gauge({
    name: 'drainbridge_admission_paused',
    help: '1 while the circuit breaker (DRAINBRIDGE_BREAKER) keeps admission paused, until `drainbridge resume`; else 0',
    registers: [registry],
    async collect() {
      const paused = await admissionPaused().catch(() => undefined);
      if (paused !== undefined) this.set(paused ? 1 : 0);
    },
  });
}

/**
 * Each gate's verdict as its Admit steps in this process last saw it: `drainbridge_gate_open{gate}` (1
 * open, 0 closed — failing closed included), when that was, and the evaluations that failed (timeout,
 * error, garbage). A gate shows from its first evaluation: gates are asked only for a request about to be
 * admitted, so an idle fleet keeps the last verdict (its timestamp says how old it is).
 */
function gateMetrics(registry: Registry): (observations: readonly GateObservation[]) => void {
  const open = new Gauge({
    name: 'drainbridge_gate_open',
    help: "1 when the health gate's last verdict (DRAINBRIDGE_GATES) let a node through, 0 when it blocked or could not be evaluated",
    labelNames: ['gate'],
    registers: [registry],
  });
  const evaluatedAt = new Gauge({
    name: 'drainbridge_gate_last_evaluated_timestamp_seconds',
    help: "When the health gate's last verdict was made (Unix seconds)",
    labelNames: ['gate'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'drainbridge_gate_evaluation_errors_total',
    help: 'Health gate evaluations that failed (timeout, error, an answer not understood): the gate failed closed',
    labelNames: ['gate'],
    registers: [registry],
  });
  return (observations) => {
    for (const { gate, open: isOpen, failed, at } of observations) {
      open.set({ gate }, isOpen ? 1 : 0);
      evaluatedAt.set({ gate }, at.getTime() / 1000);
      // Present from the first evaluation, at 0: a rate over a series that does not exist yet is empty.
      errors.inc({ gate }, failed ? 1 : 0);
    }
  };
}
