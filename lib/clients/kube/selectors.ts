/**
 * Kubernetes label selectors, both forms: the string form of `?labelSelector=` / `kubectl -l` /
 * `--pod-selector`, and the structured `LabelSelector` of PodDisruptionBudgets and workloads.
 * Pure; shared by the drain filters, the planner and the simulator.
 */

export type Labels = Readonly<Record<string, string>>;

export type Requirement =
  | { readonly key: string; readonly op: 'in' | 'notin'; readonly values: readonly string[] }
  | { readonly key: string; readonly op: 'exists' | 'doesnotexist' };

/** The structured selector (`metav1.LabelSelector`). */
export interface LabelSelector {
  readonly matchLabels?: Labels;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    readonly values?: readonly string[];
  }[];
}

export class SelectorParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorParseError';
  }
}

const KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function checkKey(key: string): string {
  if (!KEY.test(key) || key.length > 317) throw new SelectorParseError(`invalid label key "${key}"`);
  return key;
}

function checkValue(value: string): string {
  if (!VALUE.test(value) || value.length > 63) throw new SelectorParseError(`invalid label value: "${value}"`);
  return value;
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of selector) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += char;
  }
  terms.push(current);
  return terms.map((t) => t.trim());
}

const SET_TERM = /^(\S+)\s+(in|notin)\s*\((.*)\)$/;
const EQUALITY_TERM = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/;

function parseTerm(term: string): Requirement {
  const set = SET_TERM.exec(term);
  if (set) {
    const values = (set[3] ?? '').split(',').map((v) => checkValue(v.trim()));
    return { key: checkKey(set[1] ?? ''), op: set[2] as 'in' | 'notin', values };
  }
  const eq = EQUALITY_TERM.exec(term);
  if (eq) {
    const value = checkValue(eq[3] ?? '');
    return { key: checkKey(eq[1] ?? ''), op: eq[2] === '!=' ? 'notin' : 'in', values: [value] };
  }
  if (term.startsWith('!')) return { key: checkKey(term.slice(1).trim()), op: 'doesnotexist' };
  return { key: checkKey(term), op: 'exists' };
}

/** Parses the string form. The empty selector has no requirements and matches everything. */
export function parseSelector(selector: string): Requirement[] {
  if (selector.trim() === '') return [];
  return splitTerms(selector).map((term) => {
    if (term === '') throw new SelectorParseError(`empty term in selector "${selector}"`);
    return parseTerm(term);
  });
}

export function matchesRequirement(requirement: Requirement, labels: Labels): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  switch (requirement.op) {
    case 'exists':
      return has;
    case 'doesnotexist':
      return !has;
    case 'in':
      return has && requirement.values.includes(labels[requirement.key] as string);
    case 'notin':
      return !has || !requirement.values.includes(labels[requirement.key] as string);
  }
}

export function matchesAll(requirements: readonly Requirement[], labels: Labels | undefined): boolean {
  return requirements.every((r) => matchesRequirement(r, labels ?? {}));
}

/** Converts a structured selector to requirements (AND of matchLabels and matchExpressions). */
export function requirementsOf(selector: LabelSelector): Requirement[] {
  const fromLabels: Requirement[] = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({
    key,
    op: 'in',
    values: [value],
  }));
  const fromExpressions: Requirement[] = (selector.matchExpressions ?? []).map((e) => {
    if (e.operator === 'Exists') return { key: e.key, op: 'exists' };
    if (e.operator === 'DoesNotExist') return { key: e.key, op: 'doesnotexist' };
    return { key: e.key, op: e.operator === 'In' ? 'in' : 'notin', values: e.values ?? [] };
  });
  return [...fromLabels, ...fromExpressions];
}

/**
 * Whether a structured selector matches. As in the apiserver's PDB matching, an empty selector
 * (`{}`) matches everything and a missing selector (`undefined`) matches nothing.
 */
export function selectorMatches(selector: LabelSelector | undefined, labels: Labels | undefined): boolean {
  if (selector === undefined) return false;
  return matchesAll(requirementsOf(selector), labels);
}

function formatRequirement(r: Requirement): string {
  if (!('values' in r)) return r.op === 'exists' ? r.key : `!${r.key}`;
  if (r.values.length === 1) return `${r.key}${r.op === 'in' ? '=' : '!='}${r.values[0]}`;
  return `${r.key} ${r.op} (${r.values.join(',')})`;
}

/** Renders requirements back to the string form (order as given). */
export function formatSelector(requirements: readonly Requirement[]): string {
  return requirements.map(formatRequirement).join(',');
}
