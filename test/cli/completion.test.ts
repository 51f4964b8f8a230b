/**
 * `drainbridge completion bash|zsh`, loaded into the real shells: bash's completion function called as
 * bash calls it; zsh driven in a pseudo-terminal (zsh/zpty) with a TAB. Node names come from the real
 * kubectl against a simulated cluster, through the --kubeconfig on the line. zsh runs when installed
 * (skipped with a message otherwise; `apt-get install zsh`).
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { COMMAND_CATALOG } from '../../cli/commands/catalog.ts';
import { main } from '../../cli/main.ts';
import { findKubectl } from '../../sim/kubectl.ts';
import { type Simulator, startSimulator } from '../../sim/simulator.ts';
import { testContext } from '../unit/cli/context.ts';

const dir = mkdtempSync(join(tmpdir(), 'drainbridge-completion-'));
const kubectl = findKubectl();
const hasZsh = spawnSync('zsh', ['--version']).status === 0;

/** The script `drainbridge completion SHELL` prints. */
async function completionScript(shell: 'bash' | 'zsh'): Promise<string> {
  const io = testContext();
  assert.equal(await main(['completion', shell], undefined, io), 0, io.stderr.join('\n'));
  return `${io.stdout.join('\n')}\n`;
}

// Asynchronous: the simulator answers kubectl from this process's event loop.
const run = promisify(execFile);

/** What bash offers for `words` (the last one being completed). */
async function bash(words: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const driver = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _drainbridge; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout } = await run('bash', ['-c', driver, 'bash', join(dir, 'drainbridge.bash'), ...words], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, ...env },
  });
  return stdout.split('\n').filter(Boolean).sort();
}

const ZSH_DRIVER = `zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z "autoload -U compinit; compinit -u -D; source $2; PROMPT='%% '; zstyle ':completion:*' menu no"
zpty -w -n z "$1"$'\\t'
local out="" chunk
integer i
for i in {1..40}; do
  if zpty -r -t z chunk 2>/dev/null; then out+=$chunk; else sleep 0.05; fi
done
print -r -- "$out"
zpty -d z`;

/** What zsh shows after TAB on `line` (escape sequences removed): the listing, if any, and the line. */
async function zsh(line: string): Promise<{ listing: string; line: string }> {
  const { stdout } = await run('zsh', ['-f', 'zcomp.zsh', line, '_drainbridge'], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, TERM: 'dumb' },
    timeout: 20_000,
  });
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
  const plain = stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]|[\x08\r]/g, '');
  const last = plain.lastIndexOf('% ');
  return { listing: plain.slice(0, last), line: plain.slice(last + 2).trim() };
}

describe('shell completion', () => {
  let sim: Simulator;
  before(async () => {
    writeFileSync(join(dir, 'drainbridge.bash'), await completionScript('bash'));
    writeFileSync(join(dir, '_drainbridge'), await completionScript('zsh'));
    writeFileSync(join(dir, 'zcomp.zsh'), ZSH_DRIVER);
    sim = await startSimulator({ scenario: 'small' });
    writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig(), { mode: 0o600 });
  });
  after(async () => {
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('bash: commands, flags of the command typed, flag values, and node names from the cluster', {
    skip: !kubectl && 'kubectl not found',
  }, async () => {
    assert.deepEqual(await bash(['drainbridge', 'eva']), ['evacuate']);
    assert.deepEqual(
      await bash(['drainbridge', '']),
      [...COMMAND_CATALOG.map((entry) => entry.name), 'help', 'version', '--version', '--help'].sort(),
      'the first word: every command of the catalog',
    );
    assert.deepEqual(await bash(['drainbridge', 'evacuate', '--ig']), ['--ignore-daemonsets']);
    assert.deepEqual(await bash(['drainbridge', 'sim', '--ig']), [], 'sim takes no drain flags');
    assert.deepEqual(await bash(['drainbridge', 'plan', '--log-level', 'w']), ['warn']);
    assert.deepEqual(await bash(['drainbridge', 'plan', '--log-level', '=', 'e']), ['error'], 'the --flag=value form');
    assert.deepEqual(await bash(['drainbridge', 'sim', '--scenario', 'sma']), ['small']);
    assert.deepEqual(await bash(['drainbridge', 'completion', '']), ['bash', 'zsh']);
    // -o offers the values of the command typed only (one flag name, each command's own values).
    assert.deepEqual(await bash(['drainbridge', 'status', '--output', '']), ['json', 'wide', 'yaml']);
    assert.deepEqual(await bash(['drainbridge', 'status', '-o', '']), ['json', 'wide', 'yaml']);
    assert.deepEqual(await bash(['drainbridge', 'evacuate', '-o', '']), ['auto', 'json', 'live', 'plain']);
    assert.deepEqual(await bash(['drainbridge', 'plan', '-o', '']), ['json', 'yaml']);
    assert.deepEqual(await bash(['drainbridge', '--ver']), ['--version']);
    const nodes = await bash(['drainbridge', 'evacuate', '--kubeconfig', join(dir, 'kubeconfig'), 'node-'], {
      PATH: `${join(kubectl ?? '/usr/bin/kubectl', '..')}:/usr/bin:/bin`,
    });
    assert.deepEqual(nodes, ['node-1', 'node-2', 'node-3']);
  });

  it('zsh: the same completions through compsys', {
    skip: !hasZsh && 'zsh is not installed (apt-get install zsh)',
  }, async () => {
    assert.equal((await zsh('drainbridge eva')).line, 'drainbridge evacuate');
    assert.equal((await zsh('drainbridge evacuate --request')).line, 'drainbridge evacuate --request-id=');
    assert.equal((await zsh('drainbridge plan --log-level=w')).line, 'drainbridge plan --log-level=warn');
    assert.equal((await zsh('drainbridge completion z')).line, 'drainbridge completion zsh');
    assert.equal((await zsh('drainbridge status --output=wi')).line, 'drainbridge status --output=wide');
    assert.equal((await zsh('drainbridge status -o wi')).line, 'drainbridge status -o wide');
    assert.equal((await zsh('drainbridge evacuate -o pl')).line, 'drainbridge evacuate -o plain');
    const nodes = await zsh('drainbridge restore --kubeconfig kubeconfig node-');
    assert.match(nodes.listing, /node-1\s+node-2\s+node-3/);
  });
});
