/**
 * The one way a pattern part is refused while compiling: a message about the part at hand. The
 * compiler adds the path (e.g. `detail.state[0].numeric`) as the problem travels up.
 */
export class PatternProblem extends Error {
  /** Path segments from the part that failed up to the pattern's root, innermost last once complete. */
  readonly segments: string[];
  constructor(message: string, segments: string[] = []) {
    super(message);
    this.name = 'PatternProblem';
    this.segments = segments;
  }
}

/** Runs `compile`, prefixing any problem's path with `segment` (a key, or `[i]` for an index). */
export function atSegment<T>(segment: string, compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    if (error instanceof PatternProblem) error.segments.unshift(segment);
    throw error;
  }
}

/** `detail.state[0].numeric` from segments (`detail`, `state`, `[0]`, `numeric`). */
export function joinSegments(segments: readonly string[]): string {
  return segments.reduce((out, segment) => {
    if (segment.startsWith('[')) return `${out}${segment}`;
    return out ? `${out}.${segment}` : segment;
  }, '');
}
