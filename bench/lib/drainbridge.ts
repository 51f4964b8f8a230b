/**
 * Runs one drainbridge evacuation through the embedded runtime — the packaged Evacuate state machine,
 * its Retry backoffs unchanged (real time) — and measures wall time from the request to the end of the
 * execution, plus what the execution cost in Step Functions terms.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  billedStateTransitions,
  type ExecutionStats,
  estimateHistoryEvents,
  type TaskCall,
} from '../../embedded/executor.ts';
import { EmbeddedRuntime } from '../../embedded/runtime.ts';
import { loadConfig } from '../../lib/config/index.ts';
import { configureLogging, currentLogSettings } from '../../lib/log/sink.ts';
import type { DrainOptions } from '../../lib/model/request.ts';
import { deployedLogBytes, type EvacuationUsage } from './cost.ts';

/** What one drainbridge evacuation did. */
export interface DrainbridgeOutcome {
  readonly ok: boolean;
  readonly wallMs: number;
  /** The counts of every execution of the request (a continued evacuation's chain) added up. */
  readonly stats: ExecutionStats;
  /** Executions the evacuation took (more than 1 when it continued as new). */
  readonly executions: number;
  readonly historyEvents: number;
  /** Task calls that ended NotYetDone (a poll that found the work unfinished). */
  readonly notYetDone: number;
  /** Why the run failed (execution error or the time limit), empty when ok. */
  readonly failure: string;
  /** The run was stopped by the time limit (its wall time is a lower bound). */
  readonly timedOut: boolean;
  /** When the measurement ended (ms since the epoch): requests after it are not the run's. */
  readonly endedAt: number;
  /** What AWS would bill for it (bench/lib/cost.ts), counted in this run. */
  readonly usage: EvacuationUsage;
}

const EMPTY_STATS: ExecutionStats = {
  stateTransitions: 0,
  lambdaInvocations: 0,
  lambdaErrors: 0,
  retries: 0,
  parallelStates: 0,
  lambdaMilliseconds: 0,
  historyEvents: 0,
};

function sumStats(all: readonly ExecutionStats[]): ExecutionStats {
  const sum = { ...EMPTY_STATS };
  for (const stats of all) {
    for (const key of Object.keys(sum) as (keyof ExecutionStats)[]) sum[key] += stats[key];
  }
  return sum;
}

/** Counts what the run used as AWS bills it: Lambda calls, bus events, the functions' log lines. */
class UsageCounter {
  readonly calls: { functionKey: string; ms: number }[] = [];
  /** The request itself is one event on the bus. */
  events = 1;
  readonly #dir = mkdtempSync(join(tmpdir(), 'drainbridge-bench-logs-'));
  readonly #file = join(this.#dir, 'functions.log');
  readonly #previous = currentLogSettings();

  constructor() {
    // Every line at debug, as JSON, to a file of this run: what a Lambda at INFO writes is counted from it.
    configureLogging({ level: 'debug', format: 'json', file: this.#file });
  }

  onTask(call: TaskCall): void {
    this.calls.push({ functionKey: call.functionKey, ms: call.durationMs ?? 0 });
  }

  onBusEvent(detail: unknown): void {
    // EventBridge bills a put event per 64 KB chunk of its payload.
    this.events += Math.max(1, Math.ceil(Buffer.byteLength(JSON.stringify(detail) ?? '', 'utf8') / 65_536));
  }

  finish(billedTransitions: number): EvacuationUsage {
    configureLogging(this.#previous);
    let functionLogBytes = 0;
    try {
      functionLogBytes = deployedLogBytes(readFileSync(this.#file, 'utf8'));
    } catch {
      // No line was written: nothing to bill.
    }
    rmSync(this.#dir, { recursive: true, force: true });
    return { billedTransitions, lambdaCalls: this.calls, events: this.events, functionLogBytes };
  }
}

function timeLimit(ms: number): { promise: Promise<'timeout'>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Evacuates `node` as drainbridge's ServiceAccount (`kubeconfigPath`) with `drain`; never rejects. */
export async function runDrainbridgeEvacuation(
  kubeconfigPath: string,
  node: string,
  options: { drain: DrainOptions; timeoutMs: number; retryIntervalMs?: number | undefined },
): Promise<DrainbridgeOutcome> {
  let notYetDone = 0;
  const config = loadConfig({ KUBECONFIG: kubeconfigPath, DRAINBRIDGE_KUBE_ACCESS: 'kubeconfig' });
  const usage = new UsageCounter();
  const runtime = await EmbeddedRuntime.create({
    config,
    ...(options.retryIntervalMs === undefined ? {} : { retryIntervalMs: options.retryIntervalMs }),
    onTask: (call: TaskCall) => {
      usage.onTask(call);
      if (call.error?.name === 'NotYetDone') notYetDone++;
    },
    onBusEvent: (_type, detail) => usage.onBusEvent(detail),
  }).catch((error: unknown) => {
    usage.finish(0);
    throw error;
  });
  const requestId = `bench-${randomUUID().slice(0, 8)}`;
  const limit = timeLimit(options.timeoutMs);
  const started = performance.now();
  try {
    await runtime.put('Maintenance Requested', {
      version: '1',
      requestId,
      requester: 'bench',
      origin: 'manual',
      target: { nodeName: node },
      reason: 'benchmark',
      drain: options.drain,
    });
    const execution = runtime.executionsFor(requestId)[0];
    if (!execution) throw new Error('no Evacuate execution was started (the bus rule did not match)');
    // A long evacuation continues as new executions: the evacuation ends with the chain's last one.
    const ended = await Promise.race([runtime.chainOf(execution), limit.promise]);
    const wallMs = performance.now() - started;
    const endedAt = Date.now();
    const chain = runtime.executionsFor(requestId);
    const stats = sumStats(chain.map((tracked) => tracked.stats));
    const failure =
      ended === 'timeout'
        ? `time limit of ${options.timeoutMs / 1000} s reached`
        : ended.outcome.ok
          ? ''
          : ended.outcome.error.message;
    const timedOut = ended === 'timeout';
    return {
      ok: failure === '',
      wallMs,
      stats,
      executions: chain.length,
      // The quota is per execution: the largest history of the chain.
      historyEvents: Math.max(0, ...chain.map((tracked) => estimateHistoryEvents(tracked.stats))),
      notYetDone,
      failure,
      timedOut,
      endedAt,
      usage: usage.finish(billedStateTransitions(stats)),
    };
  } catch (error) {
    const failure = error instanceof Error ? error.message : String(error);
    const wallMs = performance.now() - started;
    return {
      ok: false,
      wallMs,
      stats: EMPTY_STATS,
      executions: 0,
      historyEvents: 0,
      notYetDone,
      failure,
      timedOut: false,
      endedAt: Date.now(),
      usage: usage.finish(0),
    };
  } finally {
    limit.cancel();
    // After a time limit the aborted execution still finishes its current Task state's retries (the
    // interpreter's Retry wait returns at once on abort); it ends on its own once the simulator is gone.
    runtime.stop();
  }
}
