/**
 * What a rule's target receives, as EventBridge computes it: the whole event by default, or
 * `Input` (constant JSON text), `InputPath` (a part of the event) or `InputTransformer` (variables
 * from `InputPathsMap` substituted into `InputTemplate`). The result is text, as EventBridge hands
 * it to the target; a Step Functions target then needs it to be JSON.
 */
import { type FieldProblem, InvalidInput } from '../errors/index.ts';
import { type JsonPath, parseJsonPath } from './json-path.ts';
import { isPlainObject } from './pattern/operators.ts';

/** A target's input settings (the `definitions.json` / CloudFormation spelling). */
export interface TargetInputConfig {
  readonly input?: string;
  readonly inputPath?: string;
  readonly inputTransformer?: {
    readonly InputPathsMap?: Readonly<Record<string, string>>;
    readonly InputTemplate: string;
  };
}

/** Facts about one delivery that the predefined `<aws.events.…>` variables expose. */
export interface DeliveryContext {
  readonly ruleName: string;
  readonly ruleArn: string;
  /** When the bus received the event (ISO 8601). */
  readonly ingestionTime: string;
}

/** Turns an event into the text its target receives. */
export type InputRenderer = (event: Readonly<Record<string, unknown>>, context: DeliveryContext) => string;

/** EventBridge's limit on InputPathsMap entries. */
export const MAX_INPUT_PATHS = 100;
const VARIABLE_NAME = /^[A-Za-z0-9_.-]+$/;
const PLACEHOLDER = /^<([A-Za-z0-9_.-]+)>/;

function fail(what: string, path: string, message: string): never {
  throw new InvalidInput(what, [{ path, message }]);
}

function compilePath(text: unknown, what: string, field: string): JsonPath {
  if (typeof text !== 'string') fail(what, field, 'must be a JSON path string such as "$.detail"');
  try {
    return parseJsonPath(text);
  } catch (error) {
    return fail(what, field, `"${text}" is not a supported JSON path: ${(error as Error).message}`);
  }
}

function compilePathsMap(map: unknown, what: string): Map<string, JsonPath> {
  if (map === undefined) return new Map();
  if (!isPlainObject(map)) fail(what, 'inputTransformer.InputPathsMap', 'must be an object of name → JSON path');
  const entries = Object.entries(map);
  if (entries.length > MAX_INPUT_PATHS) {
    fail(what, 'inputTransformer.InputPathsMap', `at most ${MAX_INPUT_PATHS} variables`);
  }
  const problems: FieldProblem[] = [];
  for (const [name] of entries) {
    const path = `inputTransformer.InputPathsMap.${name}`;
    if (!VARIABLE_NAME.test(name))
      problems.push({ path, message: 'a variable name holds letters, digits, ".", "-", "_"' });
    else if (name.toLowerCase().startsWith('aws.'))
      problems.push({ path, message: 'names starting with "aws." are reserved' });
  }
  if (problems.length > 0) throw new InvalidInput(what, problems);
  return new Map(
    entries.map(([name, text]) => [name, compilePath(text, what, `inputTransformer.InputPathsMap.${name}`)]),
  );
}

/** Text inserted verbatim wherever its placeholder sits (the documented `aws.events.event*` behaviour). */
class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** The predefined variables, computed only when a template uses them. */
function predefined(name: string, event: Readonly<Record<string, unknown>>, context: DeliveryContext): unknown {
  switch (name) {
    case 'aws.events.rule-name':
      return context.ruleName;
    case 'aws.events.rule-arn':
      return context.ruleArn;
    case 'aws.events.event.ingestion-time':
      return context.ingestionTime;
    case 'aws.events.event': {
      // Documented as the original event without its `detail`.
      const { detail: _detail, ...envelope } = event;
      return new RawJson(JSON.stringify(envelope));
    }
    case 'aws.events.event.json':
      return new RawJson(JSON.stringify(event));
    default:
      return undefined;
  }
}

const PREDEFINED = new Set([
  'aws.events.rule-name',
  'aws.events.rule-arn',
  'aws.events.event.ingestion-time',
  'aws.events.event',
  'aws.events.event.json',
]);

/** Text for a value substituted into the template, by where the placeholder sits. */
function substitute(value: unknown, insideString: boolean): string {
  if (value instanceof RawJson) return value.text;
  if (insideString) {
    // EventBridge does not escape extracted strings inside a quoted template string.
    if (value === undefined) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

/**
 * Fills `<name>` placeholders. Outside a JSON string a value is inserted as JSON (strings quoted);
 * inside one a string is inserted bare. A variable whose path found nothing is `null` outside a
 * string and empty inside one. `<text>` naming no variable stays as written.
 */
function renderTemplate(template: string, lookup: (name: string) => { found: boolean; value: unknown }): string {
  let out = '';
  let insideString = false;
  for (let i = 0; i < template.length; i++) {
    const char = template[i] as string;
    if (char === '\\' && i + 1 < template.length) {
      out += char + template[i + 1];
      i++;
      continue;
    }
    if (char === '"') insideString = !insideString;
    const placeholder = char === '<' ? PLACEHOLDER.exec(template.slice(i)) : null;
    const variable = placeholder ? lookup(placeholder[1] as string) : undefined;
    if (placeholder && variable?.found) {
      out += substitute(variable.value, insideString);
      i += placeholder[0].length - 1;
      continue;
    }
    out += char;
  }
  return out;
}

function compileTransformer(transformer: unknown, what: string): InputRenderer {
  if (!isPlainObject(transformer)) fail(what, 'inputTransformer', 'must be an object with InputTemplate');
  const template = transformer.InputTemplate;
  if (typeof template !== 'string' || template.length === 0) {
    fail(what, 'inputTransformer.InputTemplate', 'must be a non-empty string');
  }
  const paths = compilePathsMap(transformer.InputPathsMap, what);
  return (event, context) =>
    renderTemplate(template, (name) => {
      const path = paths.get(name);
      if (path) return { found: true, value: path.evaluate(event) };
      if (PREDEFINED.has(name)) return { found: true, value: predefined(name, event, context) };
      return { found: false, value: undefined };
    });
}

/**
 * Validates a target's input settings and returns the renderer. At most one of `input`,
 * `inputPath` and `inputTransformer`, as EventBridge allows; `input` must be JSON text.
 */
export function compileTargetInput(config: TargetInputConfig, what = 'target input'): InputRenderer {
  const given = (['input', 'inputPath', 'inputTransformer'] as const).filter((key) => config[key] !== undefined);
  if (given.length > 1) fail(what, given.join(', '), 'give at most one of input, inputPath and inputTransformer');
  if (config.input !== undefined) {
    const constant = config.input;
    try {
      JSON.parse(constant);
    } catch {
      fail(what, 'input', 'must be valid JSON text');
    }
    return () => constant;
  }
  if (config.inputPath !== undefined) {
    const path = compilePath(config.inputPath, what, 'inputPath');
    return (event) => JSON.stringify(path.evaluate(event) ?? null);
  }
  if (config.inputTransformer !== undefined) return compileTransformer(config.inputTransformer, what);
  return (event) => JSON.stringify(event);
}
