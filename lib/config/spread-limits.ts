/**
 * The parsers of the topology spread settings: `KEY=MAX` per label key (DRAINBRIDGE_SPREAD_LIMITS) and
 * `SELECTOR=MIN` per pool (DRAINBRIDGE_MIN_SCHEDULABLE), each a `;`-separated list. The last `=` separates
 * the number: selectors contain `=` themselves.
 */
import { z } from 'zod';
import { parseSelector } from '../clients/kube/selectors.ts';

/** At most `max` held nodes per value of label `key` (admission's SpreadLimit). */
export interface SpreadLimitSetting {
  readonly key: string;
  readonly max: number;
}

/** At least `min` schedulable nodes among those matching `selector` (admission's MinSchedulable). */
export interface MinSchedulableSetting {
  readonly selector: string;
  readonly min: number;
}

/** `text` split at its last `=`, the number after it a whole number ≥ 1; undefined when it is not. */
function splitLast(text: string): { readonly head: string; readonly count: number } | undefined {
  const at = text.lastIndexOf('=');
  const count = Number(text.slice(at + 1).trim());
  if (at <= 0 || text.slice(at + 1).trim() === '' || !Number.isInteger(count) || count < 1) return undefined;
  return { head: text.slice(0, at).trim(), count };
}

/** A label key alone (`topology.kubernetes.io/zone`): a selector of one "exists" requirement. */
function isLabelKey(key: string): boolean {
  try {
    const requirements = parseSelector(key);
    return requirements.length === 1 && requirements[0]?.op === 'exists' && requirements[0].key === key;
  } catch {
    return false;
  }
}

const spreadLimit = z.string().transform((text, ctx): SpreadLimitSetting => {
  const parts = splitLast(text);
  if (!parts || !isLabelKey(parts.head)) {
    ctx.addIssue({
      code: 'custom',
      message: `"${text}" must be LABEL_KEY=MAX with MAX a whole number ≥ 1, e.g. topology.kubernetes.io/zone=1`,
    });
    return z.NEVER;
  }
  return { key: parts.head, max: parts.count };
});

const minSchedulable = z.string().transform((text, ctx): MinSchedulableSetting => {
  const parts = splitLast(text);
  if (!parts) {
    ctx.addIssue({
      code: 'custom',
      message: `"${text}" must be SELECTOR=MIN with MIN a whole number ≥ 1, e.g. node-role.kubernetes.io/worker=2`,
    });
    return z.NEVER;
  }
  try {
    parseSelector(parts.head);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `"${parts.head}" is not a valid label selector (${(error as Error).message})`,
    });
    return z.NEVER;
  }
  return { selector: parts.head, min: parts.count };
});

/** A `;`-separated list of entries, blanks ignored. */
const entries = z.string().transform((text) =>
  text
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean),
);

export const spreadLimitsText = entries.pipe(z.array(spreadLimit));
export const minSchedulableText = entries.pipe(z.array(minSchedulable));
