/**
 * One measured run of the KubeVirt section: a fresh simulator with the 20-VM node, one tool evacuates
 * it — drainbridge (the packaged Evacuate machine, its KubeVirt branch creating the migrations) or
 * `kubectl drain` (every launcher pod evicted; KubeVirt's eviction webhook refuses and marks the VMI, its
 * evacuation controller creates the migrations) — and the moment every VM runs on another node is
 * taken from the simulator's store, beside the tool's own end.
 */

import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';
import { KV_REFS, type MigrationRecord } from '../../sim/controllers/kubevirt/index.ts';
import { startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import type { Simulator } from '../../sim/index.ts';
import { costOf, lambdaMemoryMb } from './cost.ts';
import { runDrainbridgeEvacuation } from './drainbridge.ts';
import { runKubectlDrain } from './kubectl.ts';
import { KUBEVIRT_NODE, kubevirtScenario, VM_NAMESPACE } from './kubevirt-scenario.ts';
import { countByUser, type RequestCounts } from './requests.ts';
import type { ExecutionCounts } from './run-case.ts';

export type VmTool = 'drainbridge' | 'kubectl';

/** The same drain setting for both tools (a node of VMs: nothing else on it). */
export const VM_KUBECTL_FLAGS = ['--ignore-daemonsets', '--delete-emptydir-data', '--force'] as const;
const VM_DRAIN_OPTIONS = { ...KUBECTL_DRAIN_DEFAULTS, force: true, ignoreDaemonSets: true, deleteEmptyDirData: true };

/** One migration as the simulator recorded it. */
export interface MigrationSeen {
  readonly vmi: string;
  /** Simulated seconds from leaving Pending (its target pod created) to Succeeded; undefined if it never did. */
  readonly seconds: number | undefined;
  /** Simulated seconds it waited Pending (KubeVirt's limits holding it back). */
  readonly pendingSeconds: number;
  readonly succeeded: boolean;
}

export interface VmRunResult {
  readonly tool: VmTool;
  readonly repetition: number;
  readonly ok: boolean;
  /** Wall ms from the tool's start until every VM ran on another node; undefined if that never happened. */
  readonly vmsElsewhereMs: number | undefined;
  /** Wall ms until the tool itself ended (kubectl exited, the execution succeeded). */
  readonly toolMs: number;
  readonly vms: number;
  readonly vmsMoved: number;
  readonly migrations: readonly MigrationSeen[];
  /** Most migrations past Pending at once (KubeVirt's limits: ≤ 2 from one node). */
  readonly mostRunning: number;
  readonly requests: Record<string, RequestCounts>;
  readonly execution?: ExecutionCounts;
  readonly failure: string;
}

interface VmiView {
  status?: { phase?: string; nodeName?: string };
}

function vmsOf(sim: Simulator): VmiView[] {
  return sim.store.list(KV_REFS.vmis, { namespace: VM_NAMESPACE }).items as VmiView[];
}

const movedOff = (vmi: VmiView): boolean =>
  vmi.status?.phase === 'Running' && vmi.status.nodeName !== undefined && vmi.status.nodeName !== KUBEVIRT_NODE;

/** Watches the store every 50 ms for the moment every VM runs elsewhere (ms since `started`). */
function watchVmsElsewhere(sim: Simulator, started: number): { at: () => number | undefined; stop: () => void } {
  let at: number | undefined;
  const check = (): void => {
    if (at === undefined && vmsOf(sim).every(movedOff)) at = performance.now() - started;
  };
  const timer = setInterval(check, 50);
  return {
    at: () => {
      check();
      return at;
    },
    stop: () => clearInterval(timer),
  };
}

function seen(record: MigrationRecord): MigrationSeen {
  const at = (phase: string) => record.phases.find((p) => p.phase === phase)?.atMs;
  const left = at('Scheduling');
  const done = at('Succeeded');
  return {
    vmi: record.vmi,
    seconds: left !== undefined && done !== undefined ? (done - left) / 1000 : undefined,
    pendingSeconds: ((left ?? record.createdAtMs) - record.createdAtMs) / 1000,
    succeeded: done !== undefined,
  };
}

async function runTool(
  cluster: Awaited<ReturnType<typeof startDrainbridgeCluster>>,
  tool: VmTool,
  settings: { kubectl: string; timeoutMs: number; retryIntervalMs?: number | undefined },
): Promise<{ ok: boolean; failure: string; execution?: VmRunResult['execution'] }> {
  if (tool === 'kubectl') {
    const run = await runKubectlDrain(settings.kubectl, cluster.adminKubeconfigPath, KUBEVIRT_NODE, {
      flags: VM_KUBECTL_FLAGS,
      timeoutMs: settings.timeoutMs,
    });
    return { ok: run.ok, failure: run.ok ? '' : `exit ${run.exitCode}: ${run.stderrTail}` };
  }
  const run = await runDrainbridgeEvacuation(cluster.kubeconfigPath, KUBEVIRT_NODE, {
    drain: VM_DRAIN_OPTIONS,
    timeoutMs: settings.timeoutMs,
    retryIntervalMs: settings.retryIntervalMs,
  });
  const { stats, historyEvents, notYetDone, executions, usage } = run;
  const cost = costOf(usage, lambdaMemoryMb());
  return { ok: run.ok, failure: run.failure, execution: { stats, historyEvents, notYetDone, executions, usage, cost } };
}

/** Evacuates the 20-VM node with `tool` on a fresh simulator at `speed`; the simulator is stopped before this resolves. */
export async function runVmEvacuation(
  tool: VmTool,
  repetition: number,
  settings: { kubectl: string; timeoutMs: number; speed: number; retryIntervalMs?: number | undefined },
): Promise<VmRunResult> {
  const cluster = await startDrainbridgeCluster({ scenario: kubevirtScenario(settings.speed), speed: settings.speed });
  try {
    const { sim } = cluster;
    const before = sim.kubevirt?.history.migrations().length ?? 0;
    const mark = sim.requestLog.mark();
    const started = performance.now();
    const elsewhere = watchVmsElsewhere(sim, started);
    const outcome = await runTool(cluster, tool, settings);
    const toolMs = performance.now() - started;
    const vmsElsewhereMs = elsewhere.at();
    elsewhere.stop();
    const vms = vmsOf(sim);
    const records = sim.kubevirt?.history.migrations().slice(before) ?? [];
    const mostRunning = sim.kubevirt?.history.maxInFlight(() => true, { from: 'Scheduling' }) ?? 0;
    const moved = vms.filter(movedOff).length;
    return {
      tool,
      repetition,
      ...outcome,
      ok: outcome.ok && vmsElsewhereMs !== undefined,
      failure: outcome.failure || (vmsElsewhereMs === undefined ? `${vms.length - moved} VMs still on the node` : ''),
      vmsElsewhereMs,
      toolMs,
      vms: vms.length,
      vmsMoved: moved,
      migrations: records.map(seen),
      mostRunning,
      requests: countByUser(sim.requestLog.all({ since: mark })),
    };
  } finally {
    await cluster.stop();
  }
}
