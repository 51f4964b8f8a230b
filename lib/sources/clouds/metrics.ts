/**
 * What the notice sources count. An interface, so the agent counts into memory (read by tests and
 * rendered in the Prometheus text format for a scrape endpoint) and the Lambda normaliser into
 * CloudWatch (EMF). Every counter is labelled with the provider and the source document.
 */
import type { NoticeSource } from '../../model/notice.ts';

export const NOTICE_COUNTERS = {
  /** A malformed or unexpected document, or event in one: logged, nothing published. */
  parseErrors: 'drainbridge_notice_parse_errors_total',
  /** Maintenance Requested published for a notice. */
  requested: 'drainbridge_notice_requests_total',
  /** Maintenance Requested published again because the notice's start moved (rescheduled). */
  rescheduled: 'drainbridge_notice_reschedules_total',
  /** Maintenance Ended published (the notice completed, was cancelled or disappeared). */
  ended: 'drainbridge_notice_ends_total',
  /** A notice the policy ignores. */
  ignored: 'drainbridge_notice_ignored_total',
  /** Azure events approved (StartRequests posted). */
  approved: 'drainbridge_notice_approvals_total',
  /** Requests ended because their source stayed unreadable past the notice's end or the limit. */
  unreadableEnds: 'drainbridge_notice_unreadable_ends_total',
  /** A metadata service or bus call that failed (after its retries). */
  failures: 'drainbridge_notice_failures_total',
} as const;
export type NoticeCounter = keyof typeof NOTICE_COUNTERS;

export interface NoticeMetrics {
  count(counter: NoticeCounter, source: NoticeSource, by?: number): void;
}

/** Counters in memory. */
export class MemoryNoticeMetrics implements NoticeMetrics {
  readonly #counts = new Map<string, number>();

  count(counter: NoticeCounter, source: NoticeSource, by = 1): void {
    const key = `${counter}|${source}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + by);
  }

  /** One counter, for one source or summed over all. */
  get(counter: NoticeCounter, source?: NoticeSource): number {
    let total = 0;
    for (const [key, value] of this.#counts) {
      const [name, from] = key.split('|');
      if (name === counter && (source === undefined || from === source)) total += value;
    }
    return total;
  }

  /** The counters in the Prometheus text exposition format. */
  render(): string {
    const lines: string[] = [];
    for (const [counter, metric] of Object.entries(NOTICE_COUNTERS) as [NoticeCounter, string][]) {
      lines.push(`# TYPE ${metric} counter`);
      for (const [key, value] of [...this.#counts].sort()) {
        const [name, source] = key.split('|');
        if (name !== counter) continue;
        const provider = source?.split('-')[0] ?? '';
        lines.push(`${metric}{provider="${provider}",source="${source}"} ${value}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }
}
