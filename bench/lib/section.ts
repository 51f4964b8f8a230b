/** What each part of `npm run bench` hands back to the report. */
import type { TargetRow } from './targets.ts';

export interface SectionReport {
  /** The section's own block of the report (tables, notes). */
  readonly text: string;
  /** Its figures against the targets. */
  readonly rows: readonly TargetRow[];
  /** Everything measured, for bench/results/. */
  readonly json: unknown;
  /** Every run ended as it should (a missed target is not a failure; a failed run is). */
  readonly ok: boolean;
}
