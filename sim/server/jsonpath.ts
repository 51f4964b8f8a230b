/**
 * The "simple JSON path" subset CRD printer columns use (apiextensions' table convertor evaluates
 * them with client-go's jsonpath and takes the first result): dotted fields, array indexes
 * (`.status.interfaces[0].ipAddress`), bracketed keys (`['kubevirt.io/vm']`) and equality filters
 * (`.status.conditions[?(@.type=='Ready')].status`). Anything else yields undefined, as a column
 * whose path matches nothing prints an empty cell.
 */

type Step =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'filter'; readonly field: string; readonly value: string };

const STEP =
  /^(?:\.([A-Za-z0-9_$-]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*(?:'([^']*)'|"([^"]*)")\)\])/;

/** Parses a path into steps, or undefined when it uses anything outside the subset. */
export function parseJsonPath(path: string): Step[] | undefined {
  const steps: Step[] = [];
  let rest = path.trim().replace(/^\{(.*)\}$/, '$1');
  while (rest.length > 0) {
    const match = STEP.exec(rest);
    if (!match) return undefined;
    const [whole, field, index, single, double, filterField, filterSingle, filterDouble] = match;
    if (field !== undefined) steps.push({ kind: 'field', name: field });
    else if (index !== undefined) steps.push({ kind: 'index', index: Number(index) });
    else if (single !== undefined || double !== undefined) steps.push({ kind: 'field', name: single ?? double ?? '' });
    else steps.push({ kind: 'filter', field: filterField ?? '', value: filterSingle ?? filterDouble ?? '' });
    rest = rest.slice(whole.length);
  }
  return steps;
}

function fieldOf(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

function dotted(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((current, part) => fieldOf(current, part), value);
}

function apply(value: unknown, step: Step): unknown {
  if (step.kind === 'field') return fieldOf(value, step.name);
  if (!Array.isArray(value)) return undefined;
  if (step.kind === 'index') return value[step.index];
  return value.find((item) => String(dotted(item, step.field)) === step.value);
}

/** The first value the path selects in `object`, or undefined. */
export function jsonPathValue(object: unknown, path: string): unknown {
  const steps = parseJsonPath(path);
  if (!steps) return undefined;
  return steps.reduce<unknown>((current, step) => (current === undefined ? undefined : apply(current, step)), object);
}
