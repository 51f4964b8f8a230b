/**
 * The command line of one command, declared once (`FlagSpec`s) and used for parsing, "did you mean",
 * help and shell completion. Tokenising is Node's `util.parseArgs` (`--name=value`, `--name value`, `--`);
 * what it accepts is decided here with kubectl's (pflag's) conventions: a switch may be written
 * `--force=true|false`, a value flag takes the next argument even when it starts with `-` (`--grace-period -1`),
 * an empty value (`--deadline=`) is an error, not "unset". Pure: bad input throws `UsageError`.
 */
import { parseArgs as tokenize } from 'node:util';
import { UsageError } from './failures.ts';
import { closest, didYouMean } from './suggest.ts';

export interface FlagSpec {
  /** Without dashes, e.g. `request-id`. */
  readonly name: string;
  /** `switch`: no value; `value`: exactly one. */
  readonly kind: 'switch' | 'value';
  /** The value's placeholder in help, and what completion offers: FILE → file names, NODE → node names. */
  readonly value?: string;
  /** The only values accepted (and completed). */
  readonly choices?: readonly string[];
  /** One line for `--help`. */
  readonly help?: string;
  /** A one-letter alias as kubectl has them (`o` for `-o json`, `-ojson`), for the few flags people type often. */
  readonly short?: string;
}

export interface ParsedCommandLine {
  readonly positional: readonly string[];
  /** Every flag given, in order: `[name, value]` (switches: `'true'` or `'false'`). */
  readonly flags: readonly (readonly [string, string])[];
}

type Token = ReturnType<typeof tokenize>['tokens'] extends (infer T)[] | undefined ? T : never;

function switchValue(spec: FlagSpec, raw: string | undefined): string {
  if (raw === undefined || raw === 'true' || raw === 'false') return raw ?? 'true';
  throw new UsageError(`--${spec.name}: must be true or false, not "${raw}"`);
}

function flagArgument(spec: FlagSpec, raw: string | undefined): string {
  if (raw === undefined) throw new UsageError(`--${spec.name} needs a value${spec.value ? ` (${spec.value})` : ''}`);
  if (raw.trim() === '') throw new UsageError(`--${spec.name}: the value is empty`);
  if (spec.choices && !spec.choices.includes(raw)) {
    throw new UsageError(
      `--${spec.name}: must be one of ${spec.choices.join(', ')}, not "${raw}"${didYouMean(raw, spec.choices)}`,
    );
  }
  return raw;
}

/** An unknown flag, with the closest known one; `-force` (one dash, which parseArgs splits) is named whole. */
function unknownFlag(token: Extract<Token, { kind: 'option' }>, arg: string, specs: readonly FlagSpec[]): UsageError {
  const names = specs.map((s) => s.name);
  const written = token.rawName.startsWith('--') ? token.rawName : (arg.split('=')[0] ?? token.rawName);
  const word = written.replace(/^-+/, '');
  const hint = didYouMean(word, names, (n) => `--${n}`);
  const dashes = written.startsWith('--') || hint ? '' : ' (flags are written with two dashes)';
  return new UsageError(`unknown flag ${written}${hint}${dashes}`);
}

function flagOf(
  token: Extract<Token, { kind: 'option' }>,
  argv: readonly string[],
  specs: readonly FlagSpec[],
): readonly [string, string] {
  const arg = argv[token.index] ?? token.rawName;
  const spec = token.rawName.startsWith('--') ? specs.find((s) => s.name === token.name) : shortSpec(token, arg, specs);
  if (!spec) throw unknownFlag(token, arg, specs);
  // `-o=yaml`, as pflag takes it (parseArgs would read the value as "=yaml").
  const value = !token.rawName.startsWith('--') && arg.startsWith(`${token.rawName}=`) ? arg.slice(3) : token.value;
  return [spec.name, spec.kind === 'switch' ? switchValue(spec, value) : flagArgument(spec, value)];
}

/**
 * The flag a one-dash option stands for: its short alias — unless the word is a long flag written with
 * one dash (`-output json` is not `-o utput`; it is refused with a suggestion).
 */
function shortSpec(token: Extract<Token, { kind: 'option' }>, arg: string, specs: readonly FlagSpec[]) {
  const word = (arg.split('=')[0] ?? '').replace(/^-/, '');
  const long =
    word.length > 2
      ? closest(
          word,
          specs.map((s) => s.name),
        )
      : undefined;
  if (long !== undefined) return undefined;
  return specs.find((s) => s.short !== undefined && `-${s.short}` === token.rawName);
}

/** Parses `argv` against `specs`. Everything after `--` is positional. */
export function parseCommandLine(argv: readonly string[], specs: readonly FlagSpec[]): ParsedCommandLine {
  const options = Object.fromEntries(
    specs.map((s) => [
      s.name,
      {
        type: s.kind === 'switch' ? ('boolean' as const) : ('string' as const),
        ...(s.short ? { short: s.short } : {}),
      },
    ]),
  );
  const { tokens } = tokenize({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const positional: string[] = [];
  const flags: (readonly [string, string])[] = [];
  for (const token of tokens ?? []) {
    if (token.kind === 'positional') positional.push(token.value);
    else if (token.kind === 'option') flags.push(flagOf(token, argv, specs));
  }
  return { positional, flags };
}

/** The last value given for `name`, if any. */
export function flagValue(parsed: ParsedCommandLine, name: string): string | undefined {
  let found: string | undefined;
  for (const [flag, value] of parsed.flags) if (flag === name) found = value;
  return found;
}

/** Whether switch `name` is on (`--name` or `--name=true`; the last one given wins). */
export function isOn(parsed: ParsedCommandLine, name: string): boolean {
  return flagValue(parsed, name) === 'true';
}

/** Exactly `count` positionals, named by `what` in the error (e.g. `NODE`). */
export function expectPositionals(parsed: ParsedCommandLine, what: readonly string[]): string[] {
  if (parsed.positional.length === what.length) return [...parsed.positional];
  if (parsed.positional.length < what.length) {
    throw new UsageError(`missing ${what.slice(parsed.positional.length).join(' ')}`);
  }
  const extra = parsed.positional.slice(what.length).map((p) => `"${p}"`);
  throw new UsageError(`unexpected argument${extra.length > 1 ? 's' : ''} ${extra.join(' ')}`);
}

/** A decimal integer (no `0x10`, `1e3`, `1.0` or blanks), within `range`. */
export function integerFlag(name: string, raw: string, range: { min?: number; max?: number } = {}): number {
  if (!/^[+-]?\d+$/.test(raw)) throw new UsageError(`--${name}: must be a whole number, not "${raw}"`);
  const value = Number(raw);
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = range;
  if (value < min || value > max) throw new UsageError(`--${name}: must be between ${min} and ${max}, not ${raw}`);
  return value;
}

/** A decimal number (no hex, no exponent) in `(above, max]`, or `[min, max]` when `min` is given. */
export function numberFlag(
  name: string,
  raw: string,
  range: { above: number; max: number } | { min: number; max: number },
): number {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(raw)) throw new UsageError(`--${name}: must be a number, not "${raw}"`);
  const value = Number(raw);
  if ('min' in range) {
    if (value < range.min || value > range.max)
      throw new UsageError(`--${name}: must be between ${range.min} and ${range.max}, not ${raw}`);
    return value;
  }
  if (!(value > range.above && value <= range.max)) {
    throw new UsageError(`--${name}: must be greater than ${range.above} and at most ${range.max}, not ${raw}`);
  }
  return value;
}

/** `--name VALUE` lines for a command's help, from its specs. */
export function flagHelp(specs: readonly FlagSpec[]): string {
  const left = specs.map(
    (s) => `${s.short ? `-${s.short}, ` : ''}--${s.name}${s.kind === 'value' ? ` ${s.value ?? 'VALUE'}` : ''}`,
  );
  const width = Math.max(...left.map((l) => l.length));
  return specs.map((s, i) => `  ${(left[i] ?? '').padEnd(width)}  ${s.help ?? ''}`.trimEnd()).join('\n');
}
