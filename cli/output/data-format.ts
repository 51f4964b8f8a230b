/**
 * `-o json|yaml` for a command that prints one document (plan, check, report): the same flag, letter and
 * values as `drainbridge status -o` and kubectl's. `--json`, plan's older spelling, stays as an alias
 * of `-o json`. Commands that print a run as it goes (evacuate, restore, demo) take their own modes
 * under the same flag (output/index.ts OUTPUT_FLAG).
 */
import { stringify as toYaml } from 'yaml';
import { UsageError } from '../failures.ts';
import { type FlagSpec, flagValue, isOn, type ParsedCommandLine } from '../flags.ts';

export const DATA_FORMATS = ['json', 'yaml'] as const;
export type DataFormat = 'text' | (typeof DATA_FORMATS)[number];

/** `-o, --output json|yaml`; `what` names the document in the help (`the plan`). */
export function dataOutputFlag(what: string): FlagSpec {
  return {
    name: 'output',
    short: 'o',
    kind: 'value',
    value: 'FORMAT',
    choices: DATA_FORMATS,
    help: `json or yaml: ${what} as data, for scripts (default: text)`,
  };
}

/** `--json`: kept where it existed, the same as `-o json`. */
export const JSON_ALIAS_FLAG: FlagSpec = { name: 'json', kind: 'switch', help: 'the same as -o json' };

/** The format asked for; `--json` with `-o yaml` contradicts itself and is refused. */
export function dataFormatOf(parsed: ParsedCommandLine): DataFormat {
  const asked = flagValue(parsed, 'output') as DataFormat | undefined;
  if (!isOn(parsed, JSON_ALIAS_FLAG.name)) return asked ?? 'text';
  if (asked !== undefined && asked !== 'json')
    throw new UsageError(`--json and --output ${asked} contradict each other`);
  return 'json';
}

/** The document as JSON (indented) or YAML. */
export function renderData(value: unknown, format: Exclude<DataFormat, 'text'>): string {
  return format === 'json' ? JSON.stringify(value, null, 2) : toYaml(value).trimEnd();
}
