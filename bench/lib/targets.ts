/**
 * The issue's targets as one table: every figure beside its target and its reference, and whether it is
 * met. Each benchmark section contributes its rows; `npm run bench` prints them together at the end. Pure.
 */
import { renderColumns } from './columns.ts';

/** One measured figure against its target. */
export interface TargetRow {
  /** Which section measured it (`drain busy-node`, `reaction`, `footprint`, `scale`, `nova`). */
  readonly section: string;
  readonly figure: string;
  /** The target as the issue states it, e.g. `≤ 0.5× kubectl`. */
  readonly target: string;
  /** The limit the measured value is compared with (≤), in the value's unit; undefined: reported only. */
  readonly limit?: number | undefined;
  /** The measured value (undefined: not measured in this run). */
  readonly value: number | undefined;
  /** How to print the value, e.g. `1.23×`, `412 ms`, `1.8 MB`. */
  readonly shown: string;
  /** The reference beside it (kubectl's figure, the floor, an empty module, …). */
  readonly reference: string;
}

/** Whether a row meets its target: true, false, or undefined when there is nothing to compare. */
export function isMet(row: TargetRow): boolean | undefined {
  if (row.limit === undefined || row.value === undefined || !Number.isFinite(row.value)) return undefined;
  return row.value <= row.limit;
}

function verdict(row: TargetRow): string {
  const met = isMet(row);
  if (met === undefined) return row.value === undefined ? 'not measured' : '-';
  return met
    ? 'met'
    : `MISSED (${(row.value as number) > 0 && row.limit ? `${((row.value as number) / row.limit).toFixed(2)}× the limit` : 'over'})`;
}

/** The table of every row, in order. */
export function renderTargets(rows: readonly TargetRow[]): string {
  const header = ['section', 'figure', 'target', 'measured', 'reference', 'verdict'];
  const lines = rows.map((row) => [row.section, row.figure, row.target, row.shown, row.reference, verdict(row)]);
  return renderColumns([header, ...lines], { rightAligned: [] });
}

/** `1.23×` style ratio, or `n/a`. */
export function times(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${value.toFixed(2)}×`;
}

/** Seconds with one decimal, or `-`. */
export function secs(value: number | undefined): string {
  return value === undefined ? '-' : `${value.toFixed(1)} s`;
}
