/** Plain progress lines: one per change, and while waiting the waiting line again at the heartbeat. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plainRenderer } from '../../../cli/output/plain.ts';
import type { TaskCall } from '../../../embedded/executor.ts';

function clock() {
  let now = 1_000_000;
  let tick: (() => void) | undefined;
  return {
    now: () => now,
    every: (_ms: number, fn: () => void) => {
      tick = fn;
      return () => {
        tick = undefined;
      };
    },
    advance(ms: number) {
      for (let step = 0; step < ms; step += 500) {
        now += 500;
        tick?.();
      }
    },
  };
}

const waiting = (message: string): TaskCall => ({
  executionId: 'e',
  stateName: 'Admit',
  functionKey: 'admit',
  error: { name: 'SlotUnavailable', message },
});

describe('plainRenderer', () => {
  it('prints a change once, repeats a wait every heartbeat with how long it has waited, and stops when closed', () => {
    const lines: string[] = [];
    const c = clock();
    const renderer = plainRenderer((l) => lines.push(l), {
      start: c.now(),
      heartbeatMs: 10_000,
      now: c.now,
      every: c.every,
    });
    const wait = waiting('node node-2: all 1 maintenance slot(s) are in use (held: node-1 …)');
    renderer.event({ kind: 'task', at: c.now(), call: wait });
    c.advance(4_000);
    renderer.event({ kind: 'task', at: c.now(), call: wait });
    assert.equal(lines.length, 1, 'the same wait again is not a new line');
    c.advance(6_000);
    assert.equal(lines.length, 2);
    assert.equal(
      lines[1],
      '[+10.0s] still waiting for a maintenance slot — node node-2: all 1 maintenance slot(s) are in use (held: node-1 …) (for 10 s)',
    );
    c.advance(10_000);
    assert.match(lines[2] ?? '', /^\[\+20\.0s\] still waiting .* \(for 20 s\)$/);
    const admitted: TaskCall = {
      executionId: 'e',
      stateName: 'Admit',
      functionKey: 'admit',
      output: { acquired: true },
    };
    renderer.event({ kind: 'task', at: c.now(), call: admitted });
    renderer.event({
      kind: 'bus',
      at: c.now(),
      detailType: 'Evacuation Progress',
      detail: { phase: 'NodeCordoned', nodeName: 'node-2' },
    });
    c.advance(30_000);
    assert.equal(lines.length, 4, 'no heartbeat once the step that waited answered');
    assert.equal(lines[3], '[+20.0s] phase NodeCordoned (node node-2)');
    renderer.close();
    renderer.event({ kind: 'note', at: c.now(), text: 'after close' });
    assert.equal(lines.length, 4);
  });

  it('keeps beating for a branch that still waits while another branch moves on', () => {
    const lines: string[] = [];
    const c = clock();
    const renderer = plainRenderer((l) => lines.push(l), {
      start: c.now(),
      heartbeatMs: 10_000,
      now: c.now,
      every: c.every,
    });
    const pods: TaskCall = {
      executionId: 'e',
      stateName: 'PodsPass',
      functionKey: 'pass',
      error: { name: 'NotYetDone', message: 'pods: 0/2 moved, 0 in flight; blocked: default/debug' },
    };
    renderer.event({ kind: 'task', at: c.now(), call: pods });
    c.advance(2_000);
    const nova: TaskCall = {
      executionId: 'e',
      stateName: 'NovaPass',
      functionKey: 'pass',
      output: { branch: 'nova', done: true, progress: { total: 1, moved: 1, inFlight: 0, skipped: 0 } },
    };
    renderer.event({ kind: 'task', at: c.now(), call: nova });
    renderer.event({ kind: 'task', at: c.now(), call: pods });
    assert.equal(lines.length, 2, 'the pods line is not repeated because nova printed in between');
    c.advance(12_000);
    assert.match(lines[2] ?? '', /still waiting — pods: 0\/2 moved.* \(for 12 s\)$/);
    renderer.close();
  });
});
