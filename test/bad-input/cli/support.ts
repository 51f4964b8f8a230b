/**
 * The CLI half of the bad-input corpus: each case runs a `drainbridge` command line (arguments,
 * environment, kubeconfig) against a simulated cluster that has drainbridge installed, and asserts
 *  - the exit status the table gives for it (usually 2: nothing was changed),
 *  - a clear error that names the problem (the flag, variable, file or value),
 *  - nothing a person should not see: a stack trace, a source path, an errno code, an object dump,
 *  - no write in the simulator's request log (what the API server saw, not what the command says).
 * Cases run in-process through main() (the same code path as bin/drainbridge.js, output captured), and a
 * sample runs again as real processes. Self-contained: test/support/ is shared with the handler cases.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { CommandContext } from '../../../cli/command.ts';
import { main } from '../../../cli/main.ts';
import { type DrainbridgeCluster, startDrainbridgeCluster } from '../../../sim/drainbridge.ts';

export interface BadInput {
  /** What is wrong, in the words of the case list. */
  readonly name: string;
  /** The command line; `{sa}` is replaced by drainbridge's ServiceAccount kubeconfig, `{dir}` by a scratch directory. */
  readonly argv: readonly string[];
  /** The environment on top of `KUBECONFIG={sa}` (`{sa}`/`{dir}` replaced as in argv). */
  readonly env?: Readonly<Record<string, string>>;
  /** The exit status expected (default 2). */
  readonly exit?: number;
  /** What the error must name: the flag, variable, file or value at fault. */
  readonly names: readonly (string | RegExp)[];
  /** Credentials the case's own files hold, which must not reach the output. */
  readonly secrets?: readonly string[];
}

export interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Signs of an error that was not handled (the same list the handler cases use). */
const UNHANDLED = [
  { pattern: /^\s+at .+[(:]\d+/m, what: 'a stack frame' },
  { pattern: /file:\/\/\/|node:internal|node_modules\//, what: 'a source path' },
  { pattern: /\bE(CONNREFUSED|NOTFOUND|AI_AGAIN|CONNRESET|TIMEDOUT|HOSTUNREACH)\b/, what: 'a raw errno code' },
  { pattern: /\[object Object\]/, what: '[object Object]' },
  { pattern: /\bundefined\b/, what: '"undefined"' },
  { pattern: /ZodError|"code":\s*"invalid_|"expected":/, what: 'a raw validation dump' },
  { pattern: /HTTP-Code|Headers:|<!DOCTYPE|<html/i, what: 'an HTTP dump' },
  { pattern: /TypeError|ReferenceError|SyntaxError: Unexpected/, what: 'a JavaScript error name' },
  { pattern: /^\{"level":/m, what: 'a JSON log line' },
];

export function assertClean(outcome: Outcome, testCase: BadInput, secrets: readonly string[]): void {
  const text = `${outcome.stdout}\n${outcome.stderr}`;
  assert.equal(outcome.code, testCase.exit ?? 2, `exit status\n${text}`);
  assert.ok(outcome.stderr.trim().length > 0, 'the error is on stderr');
  const unclean = UNHANDLED.filter((sign) => sign.pattern.test(text)).map((sign) => sign.what);
  assert.deepEqual(unclean, [], `the error is not clean:\n${text}`);
  for (const name of testCase.names) {
    const found = typeof name === 'string' ? text.includes(name) : name.test(text);
    assert.ok(found, `the error does not name ${String(name)}:\n${text}`);
  }
  for (const secret of [...secrets, ...(testCase.secrets ?? [])]) {
    assert.ok(!text.includes(secret), 'a credential reached the output');
  }
}

/** A simulated cluster with drainbridge installed, a scratch directory, and the ServiceAccount's kubeconfig. */
export interface Corpus {
  readonly cluster: DrainbridgeCluster;
  readonly dir: string;
  /** Credentials the output must never show. */
  readonly secrets: readonly string[];
  fill(text: string): string;
  stop(): Promise<void>;
}

export async function startCorpus(): Promise<Corpus> {
  const cluster = await startDrainbridgeCluster({ scenario: 'demo', speed: 20 });
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-bad-input-'));
  const token = /token: (\S+)/.exec(readFileSync(cluster.kubeconfigPath, 'utf8'))?.[1];
  return {
    cluster,
    dir,
    secrets: token ? [token] : [],
    fill: (text) => text.replaceAll('{sa}', cluster.kubeconfigPath).replaceAll('{dir}', dir),
    stop: async () => {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function environment(corpus: Corpus, testCase: BadInput): Record<string, string> {
  const env: Record<string, string> = { KUBECONFIG: corpus.cluster.kubeconfigPath, HOME: corpus.dir };
  for (const [key, value] of Object.entries(testCase.env ?? {})) env[key] = corpus.fill(value);
  return env;
}

/** Runs the case through main() in this process. */
export async function runInProcess(corpus: Corpus, testCase: BadInput): Promise<Outcome> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const context: CommandContext = {
    env: environment(corpus, testCase),
    out: (line) => void stdout.push(line),
    err: (line) => void stderr.push(line),
    interactive: false,
    onInterrupt: () => () => undefined,
  };
  const code = await main(
    testCase.argv.map((a) => corpus.fill(a)),
    undefined,
    context,
  );
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

const run = promisify(execFile);
const BIN = new URL('../../../bin/drainbridge.js', import.meta.url).pathname;

/** Runs the case as a real process (bin/drainbridge.js on this Node), asynchronously: the simulator answers from this process. */
export async function runProcess(corpus: Corpus, testCase: BadInput): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...testCase.argv.map((a) => corpus.fill(a))], {
      env: { PATH: process.env.PATH ?? '', ...environment(corpus, testCase) },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    };
  }
}

/** Writes a scratch file; returns its path. */
export function scratch(corpus: Corpus, name: string, text: string | Buffer, mode = 0o600): string {
  const path = join(corpus.dir, name);
  writeFileSync(path, text, { mode });
  return path;
}

/**
 * Registers one test per case (in-process), then runs every `sampleEvery`-th case again as a real
 * process. `prepare` writes the scratch files the cases name, once the corpus is up.
 */
export function corpusSuite(
  title: string,
  cases: readonly BadInput[],
  options: { sampleEvery?: number; prepare?: (corpus: Corpus) => void } = {},
): void {
  describe(title, () => {
    let corpus: Corpus;
    before(async () => {
      corpus = await startCorpus();
      options.prepare?.(corpus);
    });
    after(async () => {
      await corpus?.stop();
    });
    for (const testCase of cases) {
      // A refusal takes well under a second; a case that is not refused would start work and wait.
      it(testCase.name, { timeout: 30_000 }, async () => {
        const mark = corpus.cluster.sim.requestLog.mark();
        assertClean(await runInProcess(corpus, testCase), testCase, corpus.secrets);
        assert.deepEqual(corpus.cluster.sim.requestLog.writes({ since: mark }), [], 'no write in the request log');
      });
    }
    const every = options.sampleEvery ?? 8;
    const sample = cases.filter((_, i) => i % every === 0);
    it(`as real processes: ${sample.length} of the cases above`, async () => {
      for (const testCase of sample) {
        const mark = corpus.cluster.sim.requestLog.mark();
        assertClean(await runProcess(corpus, testCase), testCase, corpus.secrets);
        assert.deepEqual(corpus.cluster.sim.requestLog.writes({ since: mark }), [], `${testCase.name}: no write`);
      }
    });
  });
}
