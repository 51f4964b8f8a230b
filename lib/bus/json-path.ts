/**
 * The JSONPath subset EventBridge evaluates in `InputPath` and `InputPathsMap`: `$`, dot notation
 * (`$.detail.instance-id`; names may hold letters, digits, `-`, `_`, `/` and other characters but
 * no `.`/`[`/`]`), array indices (`[0]`) and wildcards (`.*`, `[*]`). Bracket notation with quoted
 * names is refused, as EventBridge documents ("use JSON dot notation, not bracket notation").
 */
import { isPlainObject } from './pattern/operators.ts';

/** One step of a path. */
type Step =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'all' };

/** A parsed path; `evaluate` returns undefined when the event has nothing there. */
export interface JsonPath {
  readonly text: string;
  evaluate(root: unknown): unknown;
}

const STEP = /^(?:\.([^.[\]]+)|\[(\d+)\]|\[\*\])/;

function parseSteps(text: string): Step[] {
  if (!text.startsWith('$')) throw new Error('must start with "$"');
  const steps: Step[] = [];
  let rest = text.slice(1);
  while (rest.length > 0) {
    const match = STEP.exec(rest);
    if (!match) {
      const hint = rest.startsWith("['") || rest.startsWith('["') ? ' (use dot notation, not bracket notation)' : '';
      throw new Error(`cannot read "${rest}"${hint}`);
    }
    const [whole, name, index] = match;
    if (name === '*' || (name === undefined && index === undefined)) steps.push({ kind: 'all' });
    else if (name !== undefined) steps.push({ kind: 'name', name });
    else steps.push({ kind: 'index', index: Number(index) });
    rest = rest.slice(whole.length);
  }
  return steps;
}

function step(node: unknown, next: Step): unknown[] {
  if (next.kind === 'all') {
    if (Array.isArray(node)) return node;
    return isPlainObject(node) ? Object.values(node) : [];
  }
  if (next.kind === 'index') return Array.isArray(node) && next.index < node.length ? [node[next.index]] : [];
  return isPlainObject(node) && Object.hasOwn(node, next.name) ? [node[next.name]] : [];
}

/** Parses `text`; throws an Error saying what part cannot be read. */
export function parseJsonPath(text: string): JsonPath {
  const steps = parseSteps(text);
  const collects = steps.some((s) => s.kind === 'all');
  return {
    text,
    evaluate(root) {
      const nodes = steps.reduce<unknown[]>((current, next) => current.flatMap((node) => step(node, next)), [root]);
      // A wildcard gathers every match into a list; a plain path names one value or nothing.
      return collects ? nodes : nodes[0];
    },
  };
}
