/**
 * Command-line parsing shared by the commands: positional arguments, drainbridge's own flags, and
 * kubectl drain's flags (passed through to lib/drain/flags.ts). Pure.
 */
import { takesValue } from '../lib/drain/flags.ts';
import { UsageError } from './command.ts';

export interface ParsedArgs {
  readonly positional: readonly string[];
  /** drainbridge's own flags (name without dashes → value, '' for a switch). */
  readonly own: ReadonlyMap<string, string>;
  /** Everything else, for drainOptionsFromFlags. */
  readonly drainFlags: readonly (readonly [string, string | undefined])[];
}

/** Splits `--name=value` / `--name` into its parts. */
function splitFlag(arg: string): { name: string; inline: string | undefined } {
  const body = arg.replace(/^--?/, '');
  const eq = body.indexOf('=');
  return eq < 0 ? { name: body, inline: undefined } : { name: body.slice(0, eq), inline: body.slice(eq + 1) };
}

/** `own` maps each of the command's own flags to whether it takes a value. */
export function parseArgs(argv: readonly string[], own: Readonly<Record<string, boolean>>): ParsedArgs {
  const positional: string[] = [];
  const ownValues = new Map<string, string>();
  const drainFlags: [string, string | undefined][] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('-')) {
      positional.push(arg);
      continue;
    }
    const { name, inline } = splitFlag(arg);
    const needsValue = own[name] ?? takesValue(name);
    const value = inline ?? (needsValue ? argv[++i] : undefined);
    if (needsValue && value === undefined) throw new UsageError(`--${name} needs a value`);
    if (Object.hasOwn(own, name)) ownValues.set(name, value ?? '');
    else drainFlags.push([name, value]);
  }
  return { positional, own: ownValues, drainFlags };
}
