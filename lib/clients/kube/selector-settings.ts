/**
 * Label selectors as setting parsers (lib/settings/setting.ts): the text checked, kept as text or parsed.
 * Beside the selector parser rather than in lib/settings, which depends on no domain folder.
 */
import { z } from 'zod';
import { parseSelector, type Requirement } from './selectors.ts';

function selectorProblem(value: string): string | undefined {
  try {
    parseSelector(value);
    return undefined;
  } catch (error) {
    return `is not a valid label selector (${(error as Error).message})`;
  }
}

/** A label selector kept as text (its consumers take the text), checked here. */
export const selectorText = z.string().superRefine((value, ctx) => {
  const problem = selectorProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** A label selector, parsed once here (empty: matches every object). */
export const selector = z.string().transform((value, ctx): Requirement[] => {
  const problem = selectorProblem(value);
  if (problem === undefined) return parseSelector(value);
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
});
