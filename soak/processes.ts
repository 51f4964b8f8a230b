/**
 * drainbridge child processes of the soak: the two `drainbridge run` replicas (killed and restarted on
 * the schedule, their RSS sampled) and the CLI users' commands. Output goes to a file per process; only
 * the lines that tell of a crash and the last few lines are kept in memory, so an hour stays small.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { ReplicaLife } from './log.ts';

const ENTRY = new URL('../bin/drainbridge.js', import.meta.url).pathname;
/** What a crash looks like in Node's or our output (an unhandled rejection ends Node 24 with this). */
const CRASH =
  /unhandled ?(promise )?rejection|uncaught ?exception|FATAL ERROR|triggerUncaughtException|heap out of memory/i;

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** What a `drainbridge run` replica logs when it takes the lead (lib/sources/forwarder/leader.ts). */
const LEADS = 'leader election: this replica leads';

/** One drainbridge process with its output in `logFile`. */
export class Child {
  readonly pid: number;
  readonly startedAt = Date.now();
  readonly exited: Promise<Exit>;
  readonly crashLines: string[] = [];
  readonly tail: string[] = [];
  /** When it first logged that it leads (a `drainbridge run` replica), undefined while it has not. */
  firstLedAt: number | undefined;
  readonly #child: ChildProcess;
  readonly #log: WriteStream;

  /** `node` is the interpreter to start (this process's own, unless a test names one that is missing). */
  constructor(args: readonly string[], env: Record<string, string>, logFile: string, node = process.execPath) {
    this.#log = createWriteStream(logFile, { flags: 'a' });
    this.#child = spawn(node, [ENTRY, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.pid = this.#child.pid ?? 0;
    let buffer = '';
    const take = (chunk: Buffer): void => {
      this.#log.write(chunk);
      buffer += chunk.toString('utf8');
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        this.#line(buffer.slice(0, at));
        buffer = buffer.slice(at + 1);
      }
    };
    this.#child.stdout?.on('data', take);
    this.#child.stderr?.on('data', take);
    this.exited = new Promise((resolve) => {
      this.#child.on('exit', (code, signal) => {
        this.#log.end();
        resolve({ code, signal });
      });
      // A process that could not start (its node_modules reinstalled under a running soak: ENOENT) is a
      // failed command, 127 as a shell says it, not an unhandled 'error' event that ends the soak unjudged.
      this.#child.on('error', (error) => {
        const line = `soak: could not start drainbridge ${args[0] ?? ''}: ${error.message}`;
        this.#log.end(`${line}\n`);
        this.#line(line);
        resolve({ code: 127, signal: null });
      });
    });
  }

  #line(line: string): void {
    if (CRASH.test(line) && this.crashLines.length < 20) this.crashLines.push(line.slice(0, 400));
    if (this.firstLedAt === undefined && line.includes(LEADS)) this.firstLedAt = Date.now();
    this.tail.push(line);
    if (this.tail.length > 30) this.tail.shift();
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.#child.kill(signal);
  }

  /** Resident set size in bytes (Linux /proc), undefined once gone. */
  rss(): number | undefined {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kib = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
      return kib ? Number(kib) * 1024 : undefined;
    } catch {
      return undefined;
    }
  }
}

interface Life {
  readonly child: Child;
  sentSignal?: NodeJS.Signals;
  exit?: Exit;
  rssAtMinute5?: number;
  rssLatest?: number;
  /** One sample per minute of the life, the first taken in that minute. */
  readonly rssByMinute: number[];
}

/** How soon a replica that exited unasked starts again: the first delay of Kubernetes' CrashLoopBackOff. */
const RESTART_AFTER_EXIT_MS = 10_000;

/** One `drainbridge run` replica across its lives (each restart is a new process). */
export class Replica {
  readonly name: string;
  readonly #args: readonly string[];
  readonly #env: Record<string, string>;
  readonly #dir: string;
  readonly #lives: Life[] = [];
  #retired = false;

  constructor(name: string, args: readonly string[], env: Record<string, string>, dir: string) {
    this.name = name;
    this.#args = args;
    this.#env = env;
    this.#dir = dir;
  }

  get current(): Life | undefined {
    const last = this.#lives.at(-1);
    return last && !last.exit ? last : undefined;
  }

  start(): void {
    if (this.current || this.#retired) return;
    const child = new Child(this.#args, this.#env, join(this.#dir, `${this.name}.log`));
    const life: Life = { child, rssByMinute: [] };
    this.#lives.push(life);
    void child.exited.then((exit) => {
      life.exit = exit;
      // Exited unasked (the checker's no-crash judges it): started again as a Deployment's kubelet does
      // after a container exits, so one crash does not leave the cluster without this replica for the
      // rest of the run and hide everything after it (the 60-minute run of seed 79462).
      if (!life.sentSignal) setTimeout(() => this.start(), RESTART_AFTER_EXIT_MS).unref();
    });
  }

  /** Stops the replica for good (the end of the run): no restart after this. */
  async retire(signal: NodeJS.Signals): Promise<void> {
    this.#retired = true;
    await this.stop(signal);
  }

  /** Sends `signal` and waits (at most 30 s) for the process to end. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    const life = this.current;
    if (!life) return;
    life.sentSignal = signal;
    life.child.signal(signal);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 30_000).unref());
    await Promise.race([life.child.exited, timeout]);
  }

  /** Samples the running process's RSS (keeps the sample five minutes into its life). */
  sampleRss(): void {
    const life = this.current;
    if (!life) return;
    const rss = life.child.rss();
    if (rss === undefined) return;
    life.rssLatest = rss;
    const minute = Math.floor((Date.now() - life.child.startedAt) / 60_000);
    if (life.rssAtMinute5 === undefined && minute >= 5) life.rssAtMinute5 = rss;
    // A minute the schedule did not sample (a tick late) repeats the sample after it: floors stay honest.
    while (life.rssByMinute.length <= minute) life.rssByMinute.push(rss);
  }

  /** The lives for the checker. */
  lives(): ReplicaLife[] {
    return this.#lives.map((life) => ({
      replica: this.name,
      pid: life.child.pid,
      ...(life.sentSignal ? { sentSignal: life.sentSignal } : {}),
      ...(life.exit ? { exit: { code: life.exit.code, signal: life.exit.signal } } : {}),
      crashLines: life.child.crashLines,
      ...(life.child.firstLedAt !== undefined
        ? { ledFromMinute: Math.floor((life.child.firstLedAt - life.child.startedAt) / 60_000) }
        : {}),
      ...(life.rssAtMinute5 !== undefined && life.rssLatest !== undefined
        ? { rssAtMinute5: life.rssAtMinute5, rssAtEnd: life.rssLatest, rssByMinute: [...life.rssByMinute] }
        : {}),
    }));
  }

  /** The last lines of the current (or last) process, for a report. */
  tail(): string[] {
    return this.#lives.at(-1)?.child.tail ?? [];
  }
}
