/**
 * One declaration per setting, as AWS Node Termination Handler's pkg/config/config.go binds a setting's
 * environment variable, flag, default and help on one line: here each setting's variable, parser (a zod
 * schema from the variable's text), default, help, whether it is a secret, who reads it and the flag that
 * overrides it. A loader's validation schema, its typed object, the commands' flags and their help, and
 * docs/configuration.md (scripts/gen-config-doc.ts) are all derived from these declarations.
 */
import { z } from 'zod';

/** The processes that read a setting. */
export const SETTING_READERS = ['functions', 'cli', 'run', 'forwarder', 'node-agent'] as const;
export type SettingReader = (typeof SETTING_READERS)[number];

/** The long-running commands whose flags set a variable (the flag wins over the environment). */
export type FlagCommand = 'forwarder' | 'run';

export interface SettingFlag {
  /** The flag without its dashes, e.g. `cordon-evacuates`. */
  readonly name: string;
  /** What its value looks like in the usage text, e.g. `off|all|SELECTOR`. */
  readonly value: string;
  readonly commands: readonly FlagCommand[];
}

/** The text a setting's parser reads: the variable's value, or its default when unset. */
type SettingText = string | undefined;

export interface Setting<S extends z.ZodType<unknown, SettingText> = z.ZodType<unknown, SettingText>> {
  /** The environment variable. */
  readonly env: string;
  /** Validates the text and turns it into the typed value; its messages are the user's error messages. */
  readonly parse: S;
  /** The text used when the variable is unset (undefined: optional, or required where `parse` says so). */
  readonly default: string | undefined;
  /** One line for docs/configuration.md and the flag's help. */
  readonly help: string;
  /** A secret: its value is never echoed back in a problem. */
  readonly secret: boolean;
  readonly readBy: readonly SettingReader[];
  readonly flag?: SettingFlag;
}

/** Declares a setting (`secret` false unless said). */
export function setting<S extends z.ZodType<unknown, SettingText>>(
  declaration: Omit<Setting<S>, 'secret'> & { readonly secret?: boolean },
): Setting<S> {
  return { ...declaration, secret: declaration.secret ?? false };
}

/** Settings grouped the way the loader's typed object is: a leaf is a setting, a branch a nested object. */
export interface SettingTree {
  readonly [field: string]: Setting | SettingTree;
}

/** The typed object a tree of settings yields: each setting's parsed value at its place. */
export type ValuesOf<T extends SettingTree> = {
  readonly [K in keyof T]: T[K] extends Setting<infer S>
    ? z.output<S>
    : T[K] extends SettingTree
      ? ValuesOf<T[K]>
      : never;
};

function isSetting(node: Setting | SettingTree): node is Setting {
  return typeof node.env === 'string' && 'parse' in node;
}

/** Every setting of the tree, in declaration order. */
export function settingsOf(tree: SettingTree): Setting[] {
  return Object.values(tree).flatMap((node) => (isSetting(node) ? [node] : settingsOf(node)));
}

/** The loader's validation schema: one field per variable, each the setting's parser. */
export function envSchemaOf(tree: SettingTree): z.ZodObject<Record<string, Setting['parse']>> {
  return z.object(Object.fromEntries(settingsOf(tree).map((s) => [s.env, s.parse])));
}

/**
 * Each variable's text, its default where unset; `emptyIsUnset`: an empty value counts as unset too
 * (lib/config's and the node agent's rule; the forwarder's loader takes an empty value as given).
 */
export function textsOf(
  tree: SettingTree,
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly emptyIsUnset: boolean },
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const s of settingsOf(tree)) {
    const given = env[s.env];
    const unset = given === undefined || (options.emptyIsUnset && given === '');
    out[s.env] = unset ? s.default : given;
  }
  return out;
}

/** The typed object from the validated variables (`parsed`: envSchemaOf(tree)'s output). */
export function valuesOf<T extends SettingTree>(tree: T, parsed: Readonly<Record<string, unknown>>): ValuesOf<T> {
  const entries = Object.entries(tree).map(([field, node]) => [
    field,
    isSetting(node) ? parsed[node.env] : valuesOf(node, parsed),
  ]);
  // Sound by construction: each field holds the output of the parser its setting declares.
  return Object.fromEntries(entries) as ValuesOf<T>;
}

/** The variables whose values are secrets. */
export function secretsOf(tree: SettingTree): ReadonlySet<string> {
  return new Set(
    settingsOf(tree)
      .filter((s) => s.secret)
      .map((s) => s.env),
  );
}

/** A command's flags that set a variable, from the declarations (for parsing, help and the env mapping). */
export function flagSettingsOf(
  command: FlagCommand,
  trees: readonly SettingTree[],
): (Setting & { flag: SettingFlag })[] {
  return trees
    .flatMap(settingsOf)
    .filter((s): s is Setting & { flag: SettingFlag } => s.flag?.commands.includes(command) ?? false);
}
