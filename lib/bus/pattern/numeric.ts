/**
 * EventBridge `numeric` matching: `["=", n]`, one bound (`<`, `<=`, `>`, `>=`), or a lower and an
 * upper bound (`[">", 0, "<=", 5]`). Only JSON numbers in the event match. EventBridge limits the
 * numbers in a pattern to ±5.0e9; patterns outside that range are refused here too.
 */
import { PatternProblem } from './problem.ts';

/** The documented range of numbers a numeric pattern may name. */
export const NUMERIC_LIMIT = 5e9;

const LOWER = new Set(['>', '>=']);
const UPPER = new Set(['<', '<=']);

interface Bound {
  readonly value: number;
  readonly inclusive: boolean;
}

interface Range {
  lower?: Bound;
  upper?: Bound;
}

function readNumber(value: unknown, operator: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new PatternProblem(`"${operator}" must be followed by a number`);
  }
  if (Math.abs(value) > NUMERIC_LIMIT) {
    throw new PatternProblem(`${value} is outside the range EventBridge supports (-5e9 to 5e9)`);
  }
  return value;
}

function addBound(range: Range, operator: unknown, value: unknown): void {
  if (operator === '=') throw new PatternProblem('"=" stands alone: ["=", n]');
  if (typeof operator !== 'string' || !(LOWER.has(operator) || UPPER.has(operator))) {
    throw new PatternProblem(`unknown operator ${JSON.stringify(operator)} (use =, <, <=, >, >=)`);
  }
  const bound = { value: readNumber(value, operator), inclusive: operator.endsWith('=') };
  const side = LOWER.has(operator) ? 'lower' : 'upper';
  if (range[side]) throw new PatternProblem(`more than one ${side} bound`);
  range[side] = bound;
}

function isWithin(range: Range, n: number): boolean {
  const { lower, upper } = range;
  if (lower && (lower.inclusive ? n < lower.value : n <= lower.value)) return false;
  if (upper && (upper.inclusive ? n > upper.value : n >= upper.value)) return false;
  return true;
}

/** Compiles a `numeric` operand to a predicate on numbers. */
export function compileNumeric(operand: unknown): (n: number) => boolean {
  if (!Array.isArray(operand) || operand.length === 0) {
    throw new PatternProblem('must be a non-empty array such as [">", 0, "<=", 5]');
  }
  if (operand[0] === '=') {
    if (operand.length !== 2) throw new PatternProblem('"=" takes exactly one number and no other bound');
    const target = readNumber(operand[1], '=');
    return (n) => n === target;
  }
  if (operand.length !== 2 && operand.length !== 4) {
    throw new PatternProblem('must be one bound ["<", 10] or a lower and an upper bound [">", 0, "<=", 5]');
  }
  const range: Range = {};
  for (let i = 0; i < operand.length; i += 2) addBound(range, operand[i], operand[i + 1]);
  const { lower, upper } = range;
  if (lower && upper && lower.value >= upper.value) {
    throw new PatternProblem(`the lower bound ${lower.value} must be below the upper bound ${upper.value}`);
  }
  return (n) => isWithin(range, n);
}
