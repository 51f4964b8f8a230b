/** Plain-text columns for the benchmark reports. Pure. */

/** Columns padded to their widest cell; numbers right-aligned (every column but the first, unless `rightAligned` lists them). */
export function renderColumns(rows: readonly (readonly string[])[], options: { rightAligned?: number[] } = {}): string {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((r) => (r[column] ?? '').length)));
  const right = (column: number) => (options.rightAligned ? options.rightAligned.includes(column) : column > 0);
  return rows
    .map((r) =>
      r
        .map((cell, column) => (right(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
