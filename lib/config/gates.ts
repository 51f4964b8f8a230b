/**
 * The parser of DRAINBRIDGE_GATES: a YAML (or JSON) list of health gates, each validated by its kind's
 * schema (lib/model/gate-spec.ts), so a mistake is refused before anything starts, naming the field
 * (`DRAINBRIDGE_GATES[0].url: must be an http:// or https:// URL`). Empty: no gate.
 */
import { parse } from 'yaml';
import { z } from 'zod';
import { gateSpecs } from '../model/gate-spec.ts';
import { yamlErrorLine } from '../util/yaml-error-line.ts';

export const gatesText = z
  .string()
  .transform((text, ctx): unknown => {
    if (text.trim() === '') return [];
    try {
      return parse(text) ?? [];
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `is not valid YAML or JSON${yamlErrorLine(error)}` });
      return z.NEVER;
    }
  })
  .pipe(gateSpecs);
