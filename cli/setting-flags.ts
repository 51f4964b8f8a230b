/**
 * The long-running commands' flags that set a setting's variable, derived from the settings' declarations
 * (lib/settings/setting.ts): parsing, the variables they set and their lines in `--help`. A flag wins over
 * the environment; nothing here names a variable a second time.
 */
import { BUS_ENDPOINT_SETTINGS } from '../lib/bus/bus-key.ts';
import { WORKFLOW_SETTINGS } from '../lib/config/schema.ts';
import { type FlagCommand, flagSettingsOf } from '../lib/settings/setting.ts';
import { AGENT_SETTINGS } from '../lib/sources/clouds/registry/settings.ts';
import { FORWARDER_SETTINGS } from '../lib/sources/forwarder/settings.ts';
import { type FlagSpec, flagValue, type ParsedCommandLine } from './flags.ts';

/** Every loader's declarations, in docs/configuration.md's order. */
const DECLARATIONS = [WORKFLOW_SETTINGS, FORWARDER_SETTINGS, AGENT_SETTINGS, BUS_ENDPOINT_SETTINGS];

/** The command's flags that set a variable, for parsing, "did you mean", help and completion. */
export function settingFlags(command: FlagCommand): FlagSpec[] {
  return flagSettingsOf(command, DECLARATIONS).map((s) => ({
    name: s.flag.name,
    kind: 'value' as const,
    help: `sets ${s.env}`,
  }));
}

/** The variables the given flags set (the flag wins over the environment). */
export function envFromSettingFlags(parsed: ParsedCommandLine, command: FlagCommand): Record<string, string> {
  const env: Record<string, string> = {};
  for (const s of flagSettingsOf(command, DECLARATIONS)) {
    const value = flagValue(parsed, s.flag.name);
    if (value !== undefined) env[s.env] = value;
  }
  return env;
}

/** Help lines are wrapped at this width, like the commands' own usage text. */
const WIDTH = 110;
const INDENT = '      ';

/** `text` as lines of at most WIDTH characters, each starting with INDENT (a longer word stays whole). */
function wrapped(text: string): string[] {
  const lines: string[] = [];
  let line = INDENT;
  for (const word of text.split(' ')) {
    if (line.length > INDENT.length && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = INDENT;
    }
    line += line.length > INDENT.length ? ` ${word}` : word;
  }
  return [...lines, line];
}

/** `--help`'s lines for these flags: flag and value, then the variable it sets, its default and meaning. */
export function settingFlagsHelp(command: FlagCommand): string {
  const lines = flagSettingsOf(command, DECLARATIONS).flatMap((s) => {
    const fallback = s.default === undefined ? '' : `; default ${s.default === '' ? '(empty)' : s.default}`;
    return [`  --${s.flag.name} ${s.flag.value}`, ...wrapped(`sets ${s.env}${fallback}: ${s.help}`)];
  });
  return [
    'Flags that set a variable (DRAINBRIDGE_*: docs/configuration.md); a flag wins over the environment:',
    ...lines,
  ].join('\n');
}
