/**
 * "Did you mean …?" for mistyped commands and flags: the closest known word by edit distance
 * (insertions, deletions, substitutions and swaps of neighbours), as kubectl and git suggest. Pure.
 */

/** Optimal string alignment distance: Levenshtein plus transposition of two adjacent characters. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * The known word `word` most likely meant, or undefined when none is close: within a third of the
 * word's length (at least 1, at most 3 edits), or the only word it is a prefix of.
 */
export function closest(word: string, known: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { word: candidate, distance };
  }
  if (best) return best.word;
  const extended = known.filter((candidate) => word.length >= 2 && candidate.startsWith(word));
  return extended.length === 1 ? extended[0] : undefined;
}

/** ` (did you mean X?)` or '' — to append to an error message. */
export function didYouMean(word: string, known: readonly string[], render: (w: string) => string = (w) => w): string {
  const match = closest(word, known);
  return match === undefined ? '' : ` (did you mean ${render(match)}?)`;
}
