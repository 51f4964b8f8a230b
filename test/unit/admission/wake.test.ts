/**
 * Which wake-up tokens a new version of the admission Lease sends (planWakeUps, pure): a freed slot wakes
 * the front of the line once, never someone behind a front place still parking its token, and never the
 * same token twice — so a woken request that must wait again cannot set off a loop of wake-ups.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Lease } from '@kubernetes/client-node';
import type { QueueEntry } from '../../../lib/admission/decision.ts';
import { recordAnnotations } from '../../../lib/admission/records.ts';
import { MAX_TOKEN_CHARS, mayPark, PARKED_TOKEN_CHARS, parkWakeToken } from '../../../lib/admission/wake.ts';
import { planWakeUps, type WakeWatch } from '../../../lib/admission/wake-plan.ts';
import type { KubeClient } from '../../../lib/clients/kube/client.ts';

const NOW = new Date('2099-01-01T10:00:00Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();

/** A waiting request's place: `order` sets its place in line (its `since`); `wake` its parked token. */
function place(order: number, wake?: string): QueueEntry {
  return { node: `node-${order}`, since: at(-100 + order), seen: at(-1), ...(wake ? { wake } : {}) } as QueueEntry;
}

function lease(admitted: string[], queue: Record<string, QueueEntry>): V1Lease {
  return {
    metadata: { name: 'drainbridge-admission', annotations: recordAnnotations({ admittedNodes: admitted, queue }) },
  };
}

/** Feeds versions in order; returns the tokens each one sent. */
function replay(versions: V1Lease[]): string[][] {
  let watch: WakeWatch | undefined;
  return versions.map((version) => {
    const planned = planWakeUps(watch, version, NOW);
    watch = planned.watch;
    return planned.tokens;
  });
}

describe('planWakeUps', () => {
  it('a released slot wakes the front of the line once; nothing on the first version seen', () => {
    const line = { a: place(1, 'ta'), b: place(2, 'tb') };
    assert.deepEqual(replay([lease(['held-1'], line), lease([], line), lease([], line)]), [[], ['ta'], []]);
  });

  it('a front place with no token yet keeps the slot: its token is woken when parked, not the one behind', () => {
    const before = { a: place(1), b: place(2, 'tb') };
    const parked = { a: place(1, 'ta'), b: place(2, 'tb') };
    assert.deepEqual(replay([lease(['held-1'], before), lease([], before), lease([], parked)]), [[], [], ['ta']]);
  });

  it('a place at the front waiting on a limit, its token not parked, does not keep the freed slot from those behind', () => {
    const zoneFull = { ...place(1), why: 'zone zone-b: 5 of 5 held' } as QueueEntry;
    const line = { z: zoneFull, a: place(2, 'ta'), b: place(3, 'tb') };
    assert.deepEqual(replay([lease(['held-1'], line), lease([], line)]), [[], ['ta']]);
  });

  it('a woken request that waits again (a new token) is not woken again until another slot frees', () => {
    const woken = { a: place(1, 'ta'), b: place(2, 'tb') };
    const again = { a: place(1, 'ta2'), b: place(2, 'tb') };
    assert.deepEqual(replay([lease(['held-1'], woken), lease([], woken), lease([], again), lease([], again)]), [
      [],
      ['ta'],
      [],
      [],
    ]);
  });

  it('two slots freed at once wake the first two places; a slot taken back by an admission is owed no more', () => {
    const line = { a: place(1, 'ta'), b: place(2, 'tb'), c: place(3, 'tc') };
    assert.deepEqual(replay([lease(['n1', 'n2'], line), lease([], line)]), [[], ['ta', 'tb']]);
    const noToken = { a: place(1), b: place(2, 'tb') };
    // Freed, then taken (another request admitted for a node) before the front parked its token: no wake-up.
    assert.deepEqual(
      replay([lease(['n1'], noToken), lease([], noToken), lease(['n9'], noToken), lease(['n9'], line)]),
      [[], [], [], []],
    );
  });

  it('an admission in flight that ends without a hold frees no slot: nobody is woken, however often it happens', () => {
    // Every locked Admit writes its intent and removes it at its unlock. Counted as a held node, each such
    // round trip woke the front of the line, whose own Admit did the same: a chain of Admits.
    const line = { a: place(1, 'ta'), b: { ...place(2, 'tb'), why: 'zone a is at its limit' } };
    const intent = { a: { node: 'node-1', since: at(0), requester: 'x' } };
    const locked: V1Lease = {
      metadata: {
        name: 'drainbridge-admission',
        annotations: recordAnnotations({ admittedNodes: ['n1'], queue: line, intents: intent }),
      },
    };
    const rounds = [lease(['n1'], line), locked, lease(['n1'], line), locked, lease(['n1'], line)];
    assert.deepEqual(replay(rounds), [[], [], [], [], []]);
    // The same round trip that does take a hold is a node admitted, not a slot freed.
    assert.deepEqual(replay([lease(['n1'], line), locked, lease(['n1', 'node-1'], line)]), [[], [], []]);
    // A real release still wakes the front and every request parked on a limit.
    assert.deepEqual(replay([lease(['n1'], line), locked, lease([], line)]), [[], [], ['ta', 'tb']]);
  });

  it('an unreadable queue, or no Lease, wakes nobody (the fallback covers it); a slot freed across it still is', () => {
    const line = { a: place(1, 'ta') };
    const damaged: V1Lease = {
      metadata: { name: 'drainbridge-admission', annotations: { 'drainbridge.io/admission-queue': '{not json' } },
    };
    assert.deepEqual(replay([lease(['n1'], line), damaged, lease(['n1'], line)]), [[], [], []]);
    assert.deepEqual(replay([lease(['n1'], line), damaged, lease([], line)]), [[], [], ['ta']]);
    assert.deepEqual(replay([lease(['n1'], line), undefined as unknown as V1Lease]), [[], []]);
  });

  it('any release wakes every request parked on a limit (a zone, a selector), wherever it stands; once each', () => {
    const onLimit = (order: number, wake: string) => ({ ...place(order, wake), why: 'zone a: 1 of 1 held' });
    const line = { a: place(1, 'ta'), z1: onLimit(30, 'tz1'), z2: onLimit(40, 'tz2'), c: place(50, 'tc') };
    // They wait again (new tokens): the next release wakes them again; c, behind a, is owed no slot.
    const again = { ...line, z1: onLimit(30, 'tz1b'), z2: onLimit(40, 'tz2b') };
    assert.deepEqual(replay([lease(['n1', 'n2'], line), lease(['n2'], line), lease(['n2'], again), lease([], again)]), [
      [],
      ['ta', 'tz1', 'tz2'],
      [],
      ['tz1b', 'tz2b'],
    ]);
    // No release, no wake-up for them: an admission (more held) sends nothing.
    assert.deepEqual(replay([lease(['n1'], line), lease(['n1', 'n3'], line)]), [[], []]);
  });
});

describe('mayPark: who parks a wake-up token on the Lease', () => {
  const why = 'zone zone-a: 1 of 1 node(s) held';
  /** A token of `chars` characters, distinct per `id`. */
  const token = (id: string, chars: number) => `${id}/`.padEnd(chars, 'x');
  /**
   * `count` places in line, ids p1…pN, each with a parked token of `chars` characters when listed in
   * `parked`; those listed in `limited` wait on a limit.
   */
  function line(
    count: number,
    options: { parked?: readonly string[]; limited?: readonly string[]; chars: number },
  ): Record<string, QueueEntry> {
    const entries = Array.from({ length: count }, (_, i) => {
      const id = `p${i + 1}`;
      const wake = options.parked?.includes(id) ? token(id, options.chars) : undefined;
      return [id, { ...place(i + 1, wake), ...(options.limited?.includes(id) ? { why } : {}) }] as const;
    });
    return Object.fromEntries(entries);
  }
  const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `p${from + i}`);

  it("with Step Functions' longest tokens the first 16 places park; one further back only on a limit", () => {
    const queue = line(40, { parked: ids(1, 16), limited: ['p30'], chars: MAX_TOKEN_CHARS });
    assert.equal(PARKED_TOKEN_CHARS, 16 * MAX_TOKEN_CHARS);
    assert.equal(mayPark(queue, 'p1', NOW, token('p1', MAX_TOKEN_CHARS)), true, 'its own token ahead is not counted');
    assert.equal(mayPark(queue, 'p16', NOW, token('p16', MAX_TOKEN_CHARS)), true);
    assert.equal(mayPark(queue, 'p17', NOW, token('p17', MAX_TOKEN_CHARS)), false);
    assert.equal(mayPark(queue, 'p30', NOW, token('p30', MAX_TOKEN_CHARS)), true, 'on a limit, far back: it parks');
    assert.equal(mayPark(queue, 'unknown', NOW, token('u', 10)), false, 'no place, no token');
  });

  it("with the embedded executor's short tokens a line of a hundred parks whole: nobody near the front sleeps a minute", () => {
    const chars = 120;
    const queue = line(300, { parked: ids(1, 99), chars });
    assert.equal(mayPark(queue, 'p100', NOW, token('p100', chars)), true);
    const fits = Math.floor(PARKED_TOKEN_CHARS / chars);
    const full = line(300, { parked: ids(1, fits), chars });
    assert.equal(mayPark(full, `p${fits}`, NOW, token(`p${fits}`, chars)), true);
    assert.equal(mayPark(full, `p${fits + 1}`, NOW, token(`p${fits + 1}`, chars)), false, 'the budget is full');
  });

  it('tokens of requests on limits beyond the front take at most PARKED_TOKEN_CHARS: the Lease stays small', () => {
    const onLimits = ids(20, 35);
    const queue = line(60, { parked: onLimits, limited: [...onLimits, 'p50'], chars: MAX_TOKEN_CHARS });
    assert.equal(mayPark(queue, 'p50', NOW, token('p50', MAX_TOKEN_CHARS)), false);
    assert.equal(
      mayPark(queue, 'p20', NOW, token('p20', MAX_TOKEN_CHARS)),
      true,
      'one already parked may park its next',
    );
  });
});

describe('parkWakeToken: what became of a token', () => {
  /** A Lease holding `queue`, its mutex held by `holder` (or free); records what is written to it. */
  function leaseWith(queue: Record<string, QueueEntry>, holder?: string): { client: KubeClient; writes: V1Lease[] } {
    const stored: V1Lease = {
      ...lease([], queue),
      metadata: { ...lease([], queue).metadata, resourceVersion: '1' },
      spec: holder
        ? { holderIdentity: holder, leaseDurationSeconds: 15, acquireTime: NOW, renewTime: NOW }
        : { leaseDurationSeconds: 15 },
    };
    const writes: V1Lease[] = [];
    const client = {
      getLease: async () => structuredClone(stored),
      replaceLease: async (_namespace: string, written: V1Lease) => {
        writes.push(written);
        return written;
      },
    };
    return { client: client as unknown as KubeClient, writes };
  }
  const at = { namespace: 'drainbridge', now: NOW };

  it('parked on its place, near the front', async () => {
    const { client, writes } = leaseWith({ a: place(1) });
    assert.equal(await parkWakeToken(client, at, 'a', 'ta'), 'parked');
    assert.equal(writes.length, 1);
  });

  it('far back (the tokens ahead fill the budget): not parked, and nothing written', async () => {
    const full = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`p${i + 1}`, place(i + 1, `t${i}`.padEnd(MAX_TOKEN_CHARS, 'x'))]),
    );
    const { client, writes } = leaseWith({ ...full, z: place(40) });
    assert.equal(await parkWakeToken(client, at, 'z', 'tz'.padEnd(MAX_TOKEN_CHARS, 'x')), 'far-back');
    assert.equal(writes.length, 0);
  });

  it('not written: the request has no place yet, or the admission lock is held', async () => {
    assert.equal(await parkWakeToken(leaseWith({}).client, at, 'a', 'ta'), 'not-written');
    const locked = leaseWith({ a: place(1) }, 'another-request');
    assert.equal(await parkWakeToken(locked.client, at, 'a', 'ta'), 'not-written');
    assert.equal(locked.writes.length, 0, 'nothing written while another request holds the lock');
  });
});
