/**
 * The same Ctrl-C told twice (the terminal's signal, then npm's forwarded copy under `npx`) is one signal:
 * a long-running command (untilSignal) and a command that stops at a safe point (processContext's
 * onInterrupt) both go on with their graceful stop instead of dying of the copy.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';

const SIGNALS = new URL('../../../cli/signals.ts', import.meta.url).href;
const COMMAND = new URL('../../../cli/command.ts', import.meta.url).href;

/** Runs `body` in a node process, sends it SIGINT twice 20 ms apart once it says "ready"; its exit. */
function twice(body: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', body], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out === 'ready\n') {
        child.kill('SIGINT');
        setTimeout(() => child.kill('SIGINT'), 20);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('close', (code, signal) => resolve({ code, signal, out }));
  });
}

describe('a signal echoed within the window', () => {
  it('untilSignal: the stop goes on to its end (exit 0), not killed by the copy', async () => {
    const ended = await twice(
      `const { untilSignal } = await import(${JSON.stringify(SIGNALS)});
       const alive = setInterval(() => {}, 1000); // a service's sockets keep it running until the signal
       const got = untilSignal(); console.log('ready');
       console.log(await got); await new Promise((r) => setTimeout(r, 300)); console.log('stopped');
       clearInterval(alive);`,
    );
    assert.deepEqual([ended.code, ended.signal], [0, null], ended.out);
    assert.match(ended.out, /SIGINT\nstopped/);
  });

  it('onInterrupt: the handler runs once and the stop goes on (no exit 130 from the copy)', async () => {
    const ended = await twice(
      `const { processContext } = await import(${JSON.stringify(COMMAND)});
       let calls = 0; processContext().onInterrupt(() => { calls++; });
       console.log('ready'); await new Promise((r) => setTimeout(r, 400)); console.log('calls', calls);`,
    );
    assert.deepEqual([ended.code, ended.signal], [0, null], ended.out);
    assert.match(ended.out, /calls 1/);
  });
});
