/**
 * Every setting is declared once (lib/settings/setting.ts), and docs/configuration.md, the loaders'
 * validation and the commands' `--help` all come from that declaration: the page is what
 * scripts/gen-config-doc.ts writes, each variable has exactly one row and one declaration, each loader
 * reads the variables it declares, and every flag that sets a variable is the declared one.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { forwarderCommand } from '../../../cli/commands/forwarder.ts';
import { runCommand } from '../../../cli/commands/run.ts';
import { loadBusClientSettings, loadBusServerSettings } from '../../../lib/bus/bus-key.ts';
import { loadConfig } from '../../../lib/config/load.ts';
import { ConfigError } from '../../../lib/errors/index.ts';
import { loadWebhookSettings } from '../../../lib/notify/settings.ts';
import { type FlagCommand, settingsOf } from '../../../lib/settings/setting.ts';
import { loadAgentConfig } from '../../../lib/sources/clouds/config.ts';
import { loadForwarderSettings } from '../../../lib/sources/forwarder/settings.ts';
import { CONFIGURATION_DOC, configurationDoc, normalized, SECTIONS } from '../../../scripts/gen-config-doc.ts';

const page = readFileSync(CONFIGURATION_DOC, 'utf8');
const declared = SECTIONS.flatMap((section) => settingsOf(section.settings));

/** The variables the page's tables list, in order (the first cell of each row). */
function documentedVariables(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([A-Z_]+)`/gm)].map((match) => match[1] as string);
}

/** The problems a loader reports for `env`, or none. */
function problemPaths(load: () => unknown): string[] {
  try {
    load();
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.map((p) => p.path);
  }
}

describe('docs/configuration.md', () => {
  it('is what npm run docs:config writes (tables compared without their alignment)', () => {
    assert.equal(
      normalized(page),
      normalized(configurationDoc()),
      'docs/configuration.md is stale: npm run docs:config',
    );
  });

  it('lists every declared setting exactly once, and nothing else, with its default', () => {
    const documented = documentedVariables(page);
    assert.deepEqual(documented, [...new Set(documented)], 'a variable has two rows');
    assert.deepEqual(
      documented,
      declared.map((s) => s.env),
    );
    for (const s of declared) {
      const row = page.split('\n').find((line) => line.startsWith(`| \`${s.env}\``)) as string;
      if (s.default) assert.ok(row.includes(`\`${s.default}\``), `${s.env}: default ${s.default}`);
      if (s.secret) assert.ok(row.includes('(secret)'), `${s.env}: marked secret`);
    }
  });

  it('the comparison sees a changed meaning, and not the formatter alignment', () => {
    const reworded = page.replace('| `DRAINBRIDGE_MAX_HELD_NODES`', '| `DRAINBRIDGE_MAX_HELD_NODE`');
    assert.notEqual(normalized(reworded), normalized(configurationDoc()));
    assert.notDeepEqual(
      documentedVariables(reworded),
      declared.map((s) => s.env),
    );
    const realigned = page.replaceAll(/ {2,}\|/g, ' |');
    assert.equal(normalized(realigned), normalized(page));
  });
});

describe('the settings declarations', () => {
  it('declare each variable and each flag once', () => {
    const names = declared.map((s) => s.env);
    assert.deepEqual(names, [...new Set(names)]);
    const flags = declared.flatMap((s) => (s.flag ? [s.flag.name] : []));
    assert.deepEqual(flags, [...new Set(flags)]);
  });

  it("are what each loader validates: a value its parser refuses is reported under the setting's variable", () => {
    for (const [index, section] of SECTIONS.entries()) {
      for (const s of settingsOf(section.settings)) {
        // A control character is no number, URL, name, selector or enum value; free-text settings take it.
        if (s.parse.safeParse('\u0001').success) continue;
        const env = { [s.env]: '\u0001' };
        const paths = problemsWith(index, env);
        const named = paths.some(
          (path) => path === s.env || (/^[[.]/.test(path.slice(s.env.length)) && path.startsWith(s.env)),
        );
        assert.ok(named, `${section.source}: ${s.env} is validated by its loader (${paths.join(', ')})`);
      }
    }
  });
});

/** The problems the section's loaders report for `extra` on top of the minimum they need. */
function problemsWith(section: number, extra: Record<string, string>): string[] {
  const key = { DRAINBRIDGE_BUS_KEY: 'k'.repeat(32) };
  switch (section) {
    case 0:
      return problemPaths(() => loadConfig(extra));
    case 1:
      return []; // in-cluster access: a directory name, any text
    case 2:
      return problemPaths(() => loadForwarderSettings(extra));
    case 3:
      return problemPaths(() =>
        loadAgentConfig({ DRAINBRIDGE_NODE_NAME: 'node-1', DRAINBRIDGE_AGENT_PROVIDER: 'aws', ...extra }),
      );
    case 5:
      return problemPaths(() => loadWebhookSettings({ DRAINBRIDGE_WEBHOOK_URL: 'https://hooks.example/x', ...extra }));
    default:
      return [
        ...problemPaths(() => loadBusServerSettings({ DRAINBRIDGE_BUS_ADDRESS: '127.0.0.1:0', ...key, ...extra })),
        ...problemPaths(() => loadBusClientSettings({ DRAINBRIDGE_BUS_ENDPOINT: 'http://run:8471', ...key, ...extra })),
      ];
  }
}

/**
 * Names in the code that look like a variable but are not settings: a constant, prefixes in prose, and
 * the logging variables, declared with the logging flags (cli/log-flags.ts, lib/log/sink.ts) because
 * `drainbridge --help` must start without loading zod (bench/README.md), and documented in docs/cli.md.
 */
const NOT_SETTINGS = new Set([
  'DRAINBRIDGE_FINALIZER',
  'DRAINBRIDGE_',
  'DRAINBRIDGE_DRAIN_',
  'DRAINBRIDGE_LOG_',
  'DRAINBRIDGE_LOG_LEVEL',
  'DRAINBRIDGE_LOG_FORMAT',
  'DRAINBRIDGE_LOG_FILE',
]);

/** Every TypeScript file under `dir` (relative to the repository). */
function sourcesUnder(dir: string): string[] {
  const root = new URL(`../../../${dir}/`, import.meta.url).pathname;
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(root, file));
}

describe('variables named in the code', () => {
  it('are each a declared setting (none read from the environment undeclared)', () => {
    const names = new Set(declared.map((s) => s.env));
    const undeclared = new Set<string>();
    for (const file of ['lib', 'cli', 'embedded', 'functions'].flatMap(sourcesUnder)) {
      for (const [name] of readFileSync(file, 'utf8').matchAll(/\bDRAINBRIDGE_[A-Z_]*/g)) {
        if (!names.has(name) && !NOT_SETTINGS.has(name)) undeclared.add(`${name} (${file})`);
      }
    }
    assert.deepEqual([...undeclared], []);
  });
});

describe('--help of the commands whose flags set a variable', () => {
  const commands: readonly [FlagCommand, typeof runCommand][] = [
    ['forwarder', forwarderCommand],
    ['run', runCommand],
  ];
  for (const [name, command] of commands) {
    it(`${name}: its flags that set a variable are the declared ones, each shown with its variable`, () => {
      const expected = declared.filter((s) => s.flag?.commands.includes(name));
      assert.ok(expected.length > 0);
      const setting = (command.flags ?? []).filter((f) => f.help?.startsWith('sets '));
      assert.deepEqual(
        setting.map((f) => [f.name, f.help]),
        expected.map((s) => [s.flag?.name, `sets ${s.env}`]),
      );
      for (const s of expected) {
        assert.ok(
          command.usage.includes(`--${s.flag?.name} ${s.flag?.value}\n      sets ${s.env}`),
          `${s.env} in --help`,
        );
      }
      const mentioned = [...command.usage.matchAll(/sets (DRAINBRIDGE_[A-Z_]+)/g)].map((m) => m[1]);
      assert.deepEqual(
        mentioned,
        expected.map((s) => s.env),
      );
    });
  }
});
