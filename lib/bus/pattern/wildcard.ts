/**
 * EventBridge `wildcard` values: `*` stands for any run of characters (including none). `\*` is a
 * literal asterisk and `\\` a literal backslash; a backslash before anything else, a trailing
 * backslash and two consecutive unescaped `*` are refused, as EventBridge refuses them.
 */
import { PatternProblem } from './problem.ts';

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/-]/g;

function escapeForRegex(text: string): string {
  return text.replace(REGEX_SPECIAL, '\\$&');
}

/** Splits a wildcard value into literal runs separated by unescaped `*`, validating the escapes. */
function splitOnStars(value: string): string[] {
  const parts: string[] = [''];
  let previousWasStar = false;
  for (let i = 0; i < value.length; i++) {
    const char = value[i] as string;
    if (char === '*') {
      if (previousWasStar) throw new PatternProblem(`"${value}": consecutive wildcard characters are not allowed`);
      parts.push('');
      previousWasStar = true;
      continue;
    }
    previousWasStar = false;
    let literal = char;
    if (char === '\\') {
      const next = value[i + 1];
      if (next !== '*' && next !== '\\') {
        throw new PatternProblem(`"${value}": a backslash may only escape "*" or "\\"`);
      }
      literal = next;
      i++;
    }
    parts[parts.length - 1] += literal;
  }
  return parts;
}

/** Compiles a wildcard value to a predicate on strings. */
export function compileWildcard(value: unknown): (text: string) => boolean {
  if (typeof value !== 'string') throw new PatternProblem('must be a string');
  const regex = new RegExp(`^${splitOnStars(value).map(escapeForRegex).join('[\\s\\S]*')}$`);
  return (text) => regex.test(text);
}

/** A wildcard value that matches exactly `text` and nothing else (every `*` and `\` escaped). */
export function escapeWildcard(text: string): string {
  return text.replace(/[\\*]/g, '\\$&');
}
