/**
 * What the apiextensions apiserver refuses in a CRD's schema before serving it, as far as the simulator
 * would otherwise fail later: a `pattern` that is no regular expression and an `x-kubernetes-validations`
 * rule (or messageExpression) that does not compile (a syntax or type error, as @marcbachmann/cel-js
 * checks it against the node's schema type). Each problem names its schema field. Pure.
 */
import { celRootSchema } from './cel.ts';
import { ruleSourceProblems } from './rules.ts';
import type { Schema } from './types.ts';

export interface SchemaProblem {
  readonly field: string;
  readonly value: string;
  readonly detail: string;
}

function patternProblem(schema: Schema, path: string): SchemaProblem[] {
  if (schema.pattern === undefined) return [];
  try {
    new RegExp(schema.pattern, 'u');
    return [];
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return [
      {
        field: `${path}.pattern`,
        value: schema.pattern,
        detail: `must be a valid regular expression, but isn't: ${why}`,
      },
    ];
  }
}

/** Every problem in the CRD's `schema` (its openAPIV3Schema), whose own path is `path`. */
export function schemaProblems(schema: Schema, path: string): SchemaProblem[] {
  return nodeProblems(schema, path, true);
}

function nodeProblems(schema: Schema, path: string, root: boolean): SchemaProblem[] {
  const problems = [...patternProblem(schema, path)];
  const celSchema = root ? celRootSchema(schema) : schema;
  (schema['x-kubernetes-validations'] ?? []).forEach((rule, index) => {
    problems.push(...ruleSourceProblems(rule, celSchema, `${path}.x-kubernetes-validations[${index}]`));
  });
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    problems.push(...nodeProblems(property, `${path}.properties[${key}]`, false));
  }
  if (schema.items) problems.push(...nodeProblems(schema.items, `${path}.items`, false));
  if (typeof schema.additionalProperties === 'object') {
    problems.push(...nodeProblems(schema.additionalProperties, `${path}.additionalProperties`, false));
  }
  return problems;
}
