/**
 * For the end-to-end notice tests: the bus events as they happened on the simulator's clock, and the
 * check that an evacuation started at the instant it computed (NotBefore − estimate − margin).
 */
import assert from 'node:assert/strict';

export type BusLog = {
  detailType: string;
  requestId: unknown;
  /** The simulator's clock when the event was put on the bus. */
  at: number;
  /** The real clock (the fake metadata servers stamp approvals with it). */
  realAt: number;
  detail: Record<string, unknown>;
}[];

/** An `onBusEvent` for the embedded runtime that appends to `log`. */
export function recordBus(log: BusLog, simNow: () => number): (detailType: string, detail: unknown) => void {
  return (detailType, detail) =>
    log.push({
      detailType,
      requestId: (detail as { requestId?: unknown }).requestId,
      at: simNow(),
      realAt: Date.now(),
      detail: detail as Record<string, unknown>,
    });
}

export function progressOf(log: BusLog, requestId: string, phase: string): BusLog[number] | undefined {
  return log.find(
    (e) => e.detailType === 'Evacuation Progress' && e.requestId === requestId && e.detail.phase === phase,
  );
}

interface Timing {
  notBefore: string;
  startAt: string;
  estimateSeconds: number;
  marginSeconds: number;
  late: boolean;
}

/**
 * The evacuation of `requestId` announced its start (Evacuation Progress MaintenanceScheduled) at
 * notBefore − estimate − margin, waited for it, and was admitted (cordoned) no earlier than that and early
 * enough to finish before notBefore by the estimate. Returns the timing.
 */
export function assertStartedInTime(log: BusLog, requestId: string, notBefore: string): Timing {
  const scheduled = progressOf(log, requestId, 'MaintenanceScheduled');
  const timing = scheduled?.detail.timing as Timing | undefined;
  assert.ok(scheduled && timing, 'Evacuation Progress MaintenanceScheduled announces the start');
  assert.equal(Date.parse(timing.notBefore), Date.parse(notBefore));
  assert.equal(timing.late, false);
  assert.equal(timing.marginSeconds, 300);
  assert.ok(timing.estimateSeconds > 0, 'the plan has pods to evict: the estimate is not zero');
  const startAt = Date.parse(timing.startAt);
  assert.equal(startAt, Date.parse(notBefore) - (timing.estimateSeconds + timing.marginSeconds) * 1000);
  assert.ok(scheduled.at < startAt - 60_000, 'the request arrived well before its start: it did wait');
  const cordonedAt = progressOf(log, requestId, 'NodeCordoned')?.at ?? 0;
  assert.ok(cordonedAt >= startAt, `not cordoned before the computed start (${(startAt - cordonedAt) / 1000} s early)`);
  // Within the margin after the computed start (300 simulated s = 1.5 s of real time at 200×, for the
  // Wait to end and admission to run): early enough to finish before notBefore by the estimate.
  const lateBy = (cordonedAt - startAt) / 1000;
  assert.ok(lateBy < timing.marginSeconds, `cordoned ${lateBy} s after the computed start`);
  return timing;
}
