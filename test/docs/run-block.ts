/**
 * Runs a shell block of the documentation as a reader runs it (test/docs/blocks.ts says how blocks are
 * marked): on a fresh simulated cluster (scenario demo), in a scratch directory that holds the checkout's
 * files, with bash; each command must end with the status the page states (`# exit N`, else 0). Used by the
 * doc test (every block) and the new-user test (the README's, in a fresh clone).
 *
 * A reader's substitutions, declared once here and nowhere else:
 *  - "your kubeconfig" (`~/.kube/config`, and KUBECONFIG) is the simulated cluster's admin kubeconfig;
 *  - `drainbridge` on PATH (`npm install -g .`) is the checkout's bin/drainbridge.js;
 *  - `drainbridge run` serves its metrics on a free port (DRAINBRIDGE_METRICS_ADDRESS), since tests run in
 *    parallel and the documented 8080 would collide;
 *  - npm's cache is the scratch directory's, so the links npx makes to it leave with it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { startSimulator } from '../../sim/simulator.ts';
import { commandsOf, ELSEWHERE_KINDS, type ShellBlock, type ShellCommand, shellBlocks } from './blocks.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const SERVICE_LINE = /\bdrainbridge (run|sim|forwarder)\b/;
/** What "drainbridge installed" means, as the README says it: one command, as a cluster admin. */
const INSTALL: ShellCommand = { text: 'kubectl apply -k deploy/base', exit: 0, line: 0 };

/** Blocks the simulator cannot serve yet, each with what it lacks (a real API server runs them). */
export const NOT_IN_SIMULATOR: readonly { file: string; startsWith: string; lacks: string }[] = [
  {
    file: 'docs/notices.md',
    startsWith: 'kubectl -n drainbridge create secret generic drainbridge-bus-key',
    lacks: 'kubectl create secret sends a v1 Secret as protobuf, which the simulator does not decode',
  },
  {
    file: 'docs/notifications.md',
    startsWith: 'kubectl -n drainbridge create secret generic drainbridge-webhook',
    lacks: 'kubectl create secret sends a v1 Secret as protobuf, which the simulator does not decode',
  },
];

/** The pages whose commands are documentation, in `root` (a checkout). */
export function pages(root = ROOT): { file: string; text: string }[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
}

/** Every shell block of those pages, classified. */
export function documentedBlocks(root = ROOT): ShellBlock[] {
  return pages(root).flatMap(({ file, text }) => shellBlocks(file, text));
}

interface Ran {
  readonly code: number;
  readonly out: string;
}

/** A scratch directory that looks like the checkout (its top-level entries linked), so writes stay out of it. */
function scratchCheckout(root: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-docs-'));
  for (const entry of readdirSync(root)) {
    if (entry !== '.git') symlinkSync(join(root, entry), join(dir, entry));
  }
  const bin = join(dir, '.path');
  mkdirSync(bin);
  const drainbridge = join(root, 'bin/drainbridge.js');
  writeFileSync(join(bin, 'drainbridge'), `#!/bin/sh\nexec "${process.execPath}" "${drainbridge}" "$@"\n`);
  chmodSync(join(bin, 'drainbridge'), 0o755);
  return dir;
}

/** The reader's substitutions (see the file's comment). */
function substituted(command: string, kubeconfig: string): string {
  return command.replaceAll('~/.kube/config', kubeconfig);
}

function environment(dir: string, kubeconfig: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${join(dir, '.path')}:${process.env.PATH ?? ''}`,
    KUBECONFIG: kubeconfig,
    DRAINBRIDGE_METRICS_ADDRESS: '127.0.0.1:0',
    // npx links the scratch checkout into its cache under a new name each run: that cache goes with it.
    npm_config_cache: join(dir, '.npm-cache'),
  };
}

function bash(command: string, cwd: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
}

function collect(child: ChildProcess, onData?: (all: string) => void): Promise<Ran> {
  let out = '';
  const add = (chunk: Buffer): void => {
    out += chunk.toString();
    onData?.(out);
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  // A shell reports a command killed by SIGINT as 130; npx, which the command runs under, dies of the signal.
  return new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code: code ?? (signal === 'SIGINT' ? 130 : 128), out })),
  );
}

/** Runs commands one after another, each checked against its stated exit status. */
async function runCommands(commands: readonly ShellCommand[], where: string, cwd: string, env: NodeJS.ProcessEnv) {
  for (const command of commands) {
    const text = substituted(command.text, env.KUBECONFIG ?? '');
    const ran = await collect(bash(text, cwd, env));
    assert.equal(ran.code, command.exit, `${where}:${command.line}: ${command.text}\n${ran.out}`);
  }
}

/** A service block: the lines before the service, the service until its ready line, the rest, then stop it. */
async function runService(block: ShellBlock, commands: readonly ShellCommand[], cwd: string, env: NodeJS.ProcessEnv) {
  const at = commands.findIndex((c) => SERVICE_LINE.test(c.text));
  assert.ok(at >= 0, `${block.file}:${block.line}: a service block names drainbridge run, sim or forwarder`);
  const service = commands[at] as ShellCommand;
  await runCommands(commands.slice(0, at), block.file, cwd, env);
  const ready = new RegExp(block.arg.slice(1, -1));
  const child = bash(substituted(service.text, env.KUBECONFIG ?? ''), cwd, env);
  let isReady: () => void = () => {};
  const readyNow = new Promise<void>((resolve) => (isReady = resolve));
  const done = collect(child, (out) => ready.test(out) && isReady());
  const first = await Promise.race([readyNow.then(() => 'ready'), done.then(() => 'exited')]);
  if (first === 'exited')
    assert.fail(`${block.file}:${service.line}: ${service.text} exited before ${ready}\n${(await done).out}`);
  try {
    await runCommands(commands.slice(at + 1), block.file, cwd, env);
  } finally {
    process.kill(-(child.pid as number), 'SIGINT');
  }
  const stopped = await done;
  assert.ok([0, 130].includes(stopped.code), `${service.text} stopped on SIGINT with ${stopped.code}\n${stopped.out}`);
}

/** Runs a block on a fresh simulated cluster (scenario demo), drainbridge installed unless bare; `root` the checkout. */
export async function runOnCluster(block: ShellBlock, root = ROOT): Promise<void> {
  const dir = scratchCheckout(root);
  const kubeconfig = join(dir, '.your-kubeconfig');
  const installed = block.kind !== 'bare-cluster';
  const cluster = installed
    ? await startDrainbridgeCluster({ scenario: 'demo' })
    : await startSimulator({ scenario: 'demo' }).then((sim) => ({ sim, stop: () => sim.stop() }));
  try {
    writeFileSync(kubeconfig, cluster.sim.kubeconfig(cluster.sim.adminToken), { mode: 0o600 });
    const env = environment(dir, kubeconfig);
    if (installed) await runCommands([INSTALL], 'the documented install', dir, env);
    const commands = commandsOf(block);
    if (block.kind === 'service') await runService(block, commands, dir, env);
    else await runCommands(commands, block.file, dir, env);
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function listed<T extends { file: string; startsWith: string }>(block: ShellBlock, list: readonly T[]): T | undefined {
  return list.find((p) => p.file === block.file && block.body.trimStart().startsWith(p.startsWith));
}

/** Why a classified block is not run on the simulator (checked elsewhere, or a simulator gap). */
export function notRunHere(block: ShellBlock): string | undefined {
  if ((ELSEWHERE_KINDS as readonly string[]).includes(block.kind ?? '')) return `${block.kind}: ${block.reason}`;
  const gap = listed(block, NOT_IN_SIMULATOR);
  return gap ? `not in the simulator: ${gap.lacks}` : undefined;
}
