/**
 * The AWS bill of one evacuation at list prices (bench/lib/prices.ts), from what the embedded run did:
 * billed state transitions (entered + retries), each Lambda call's duration at its function's
 * configured memory (serverless.yml), the events put on the bus, and the log bytes the functions wrote
 * plus Lambda's own lines per invocation. `costOf` is pure; `lambdaMemoryMb` reads serverless.yml.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { LAMBDA_PLATFORM_LOG_BYTES, PRICES } from './prices.ts';

/** What one evacuation used, counted in the embedded run. */
export interface EvacuationUsage {
  readonly billedTransitions: number;
  /** One entry per Lambda invocation: which function, how long its handler ran. */
  readonly lambdaCalls: readonly { readonly functionKey: string; readonly ms: number }[];
  /** Events put on the bus (the request and everything the functions published), in 64 KB chunks. */
  readonly events: number;
  /** Bytes of the functions' log lines at the deployed level (INFO) and their EMF metric lines. */
  readonly functionLogBytes: number;
}

/** Dollars per 1,000 evacuations, by line of the bill. */
export interface EvacuationCost {
  readonly stepFunctions: number;
  readonly lambdaDuration: number;
  readonly lambdaRequests: number;
  readonly eventBridge: number;
  readonly logs: number;
  readonly total: number;
  readonly gbSeconds: number;
  readonly logBytes: number;
}

/** Memory in MB per function key, and the architecture, as serverless.yml configures them. */
export interface LambdaMemory {
  readonly architecture: 'arm64' | 'x86_64';
  readonly defaultMb: number;
  readonly byFunction: Readonly<Record<string, number>>;
}

interface ServerlessShape {
  provider?: { memorySize?: unknown; architecture?: unknown };
  functions?: Record<string, { memorySize?: unknown } | null>;
}

/** serverless.yml's provider.memorySize, per-function overrides and architecture. */
export function lambdaMemoryMb(path = new URL('../../serverless.yml', import.meta.url)): LambdaMemory {
  const doc = parse(readFileSync(path, 'utf8'), { logLevel: 'error' }) as ServerlessShape;
  const defaultMb = doc.provider?.memorySize;
  // Lambda's own default when serverless.yml sets none is 128 MB; the serverless framework's is 1024.
  const fallback = typeof defaultMb === 'number' ? defaultMb : 1024;
  const byFunction: Record<string, number> = {};
  for (const [key, fn] of Object.entries(doc.functions ?? {})) {
    byFunction[key] = typeof fn?.memorySize === 'number' ? fn.memorySize : fallback;
  }
  const architecture = doc.provider?.architecture === 'arm64' ? 'arm64' : 'x86_64';
  return { architecture, defaultMb: fallback, byFunction };
}

/** The bill of `usage`, in dollars per 1,000 evacuations. */
export function costOf(usage: EvacuationUsage, memory: LambdaMemory): EvacuationCost {
  const gbSeconds = usage.lambdaCalls.reduce(
    // Lambda bills duration rounded up to the millisecond.
    (sum, call) =>
      sum + ((memory.byFunction[call.functionKey] ?? memory.defaultMb) / 1024) * (Math.ceil(call.ms) / 1000),
    0,
  );
  const perGbSecond = memory.architecture === 'arm64' ? PRICES.lambdaPerGbSecondArm : PRICES.lambdaPerGbSecondX86;
  const logBytes = usage.functionLogBytes + usage.lambdaCalls.length * LAMBDA_PLATFORM_LOG_BYTES;
  const one = {
    stepFunctions: usage.billedTransitions * PRICES.stepFunctionsPerTransition,
    lambdaDuration: gbSeconds * perGbSecond,
    lambdaRequests: usage.lambdaCalls.length * PRICES.lambdaPerRequest,
    eventBridge: usage.events * PRICES.eventBridgePerEvent,
    logs: (logBytes / 2 ** 30) * PRICES.cloudWatchLogsPerGb,
  };
  const per1000 = (dollars: number) => dollars * 1000;
  return {
    stepFunctions: per1000(one.stepFunctions),
    lambdaDuration: per1000(one.lambdaDuration),
    lambdaRequests: per1000(one.lambdaRequests),
    eventBridge: per1000(one.eventBridge),
    logs: per1000(one.logs),
    total: per1000(one.stepFunctions + one.lambdaDuration + one.lambdaRequests + one.eventBridge + one.logs),
    gbSeconds,
    logBytes,
  };
}

/** Bytes of the log lines a Lambda at INFO would write, from a debug-level JSON log: INFO and up, and EMF lines. */
export function deployedLogBytes(jsonLines: string): number {
  let bytes = 0;
  for (const line of jsonLines.split('\n')) {
    if (line.trim() === '') continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const level = typeof record.level === 'string' ? record.level.toUpperCase() : '';
    if ('_aws' in record || ['INFO', 'WARN', 'ERROR', 'CRITICAL'].includes(level)) {
      bytes += Buffer.byteLength(line, 'utf8') + 1;
    }
  }
  return bytes;
}

/** `$0.123` with enough digits for sub-cent lines. */
export function dollars(value: number): string {
  return `$${value < 0.01 ? value.toFixed(4) : value.toFixed(3)}`;
}

/** One line of the bill per 1,000 evacuations, beside the counts it is from. */
export function costLine(
  cost: EvacuationCost,
  counts: { transitions: number; invocations: number; events: number },
): string {
  return (
    `AWS bill per 1,000 evacuations (${PRICES.region} list prices of ${PRICES.readOn}, bench/lib/prices.ts): ${dollars(cost.total)} = ` +
    `Step Functions ${dollars(cost.stepFunctions)} (${counts.transitions} billed transitions) + ` +
    `Lambda ${dollars(cost.lambdaDuration)} (${cost.gbSeconds.toFixed(1)} GB-s) + ${dollars(cost.lambdaRequests)} (${counts.invocations} requests) + ` +
    `EventBridge ${dollars(cost.eventBridge)} (${counts.events} events) + CloudWatch Logs ${dollars(cost.logs)} (${(cost.logBytes / 1024).toFixed(1)} KiB)`
  );
}
