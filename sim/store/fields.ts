/**
 * Field selectors (`?fieldSelector=spec.nodeName=node-1,status.phase!=Succeeded`). The apiserver only
 * supports a few fields per kind; the simulator reads any dotted path, which is a superset.
 */
import { badRequest } from './status.ts';
import type { FieldRequirement, KubeObject } from './types.ts';

const TERM = /^([A-Za-z0-9_.-]+)\s*(==|=|!=)\s*(.*)$/;

/** Parses the string form; the empty string matches everything. 400 BadRequest on a malformed term. */
export function parseFieldSelector(selector: string | undefined): FieldRequirement[] {
  if (!selector || selector.trim() === '') return [];
  return selector.split(',').map((raw) => {
    const term = raw.trim();
    const match = TERM.exec(term);
    if (!match) throw badRequest(`invalid field selector: "${term}": must be field=value or field!=value`);
    return { field: match[1] ?? '', op: match[2] === '!=' ? '!=' : '=', value: (match[3] ?? '').trim() };
  });
}

/** The string value of a dotted field (`metadata.name`, `involvedObject.uid`), `''` when absent. */
export function fieldValue(object: KubeObject, field: string): string {
  let current: unknown = object;
  for (const part of field.split('.')) {
    if (current === null || typeof current !== 'object') return '';
    current = (current as Record<string, unknown>)[part];
  }
  if (current === undefined || current === null) return '';
  return typeof current === 'string' ? current : String(current);
}

/** Whether `object` satisfies every requirement. */
export function matchesFields(requirements: readonly FieldRequirement[], object: KubeObject): boolean {
  return requirements.every((r) => (fieldValue(object, r.field) === r.value) === (r.op === '='));
}
