import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { MergePatch } from '../../../lib/clients/kube/paths.ts';
import {
  countHeldNodes,
  DEFAULT_LEDGER_SETTINGS,
  type HoldRequest,
  isUncordonedOutOfBand,
  LEDGER_ANNOTATION,
  planHold,
  planOutOfBandMark,
  planRelease,
  readLedger,
} from '../../../lib/node/ledger.ts';
import { planPhase, readPhase } from '../../../lib/node/phase.ts';
import { mergePatch } from '../../../sim/store/patch.ts';
import { NOW, node } from '../drain/fixtures.ts';

const CA = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
const KARPENTER = 'karpenter.sh/do-not-disrupt';
const alice: HoldRequest = { requestId: 'req-1', requester: 'alice', origin: 'manual' };
const bob: HoldRequest = { requestId: 'req-2', requester: 'bob', origin: 'aws' };
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

/** Applies a merge patch as the apiserver would, bumping resourceVersion. */
function apply(target: V1Node, patch: MergePatch): V1Node {
  const patched = mergePatch(target, patch) as V1Node;
  const rv = String(Number(target.metadata?.resourceVersion ?? '0') + 1);
  return { ...patched, metadata: { ...patched.metadata, resourceVersion: rv } };
}

function hold(target: V1Node, request: HoldRequest, at = NOW, settings = DEFAULT_LEDGER_SETTINGS): V1Node {
  const decision = planHold(target, request, at, settings);
  assert.equal(decision.action, 'patch', 'expected a hold to be written');
  return decision.action === 'patch' ? apply(target, decision.patch) : target;
}

function release(target: V1Node, requestId: string, at = NOW) {
  const decision = planRelease(target, requestId, at);
  assert.equal(decision.action, 'patch', 'expected a release to be written');
  if (decision.action !== 'patch') throw new Error('unreachable');
  return { node: apply(target, decision.patch), decision };
}

describe('planHold / planRelease', () => {
  test('first hold cordons with spec.unschedulable only, sets autoscaler annotations, no taint by default', () => {
    const decision = planHold(node(), alice, NOW);
    assert.equal(decision.action, 'patch');
    if (decision.action !== 'patch') return;
    assert.equal(decision.first, true);
    const held = apply(node(), decision.patch);
    assert.equal(held.spec?.unschedulable, true);
    assert.equal(held.spec?.taints, undefined);
    assert.equal(held.metadata?.annotations?.[CA], 'true');
    assert.equal(held.metadata?.annotations?.[KARPENTER], 'true');
    assert.deepEqual(Object.keys(readLedger(held).holds), ['req-1']);
    assert.equal((decision.patch.metadata as Record<string, unknown>).resourceVersion, '100');
  });

  test('releasing the last hold undoes exactly what was set', () => {
    const held = hold(node({ annotations: { other: 'x' } }), alice);
    const { node: after, decision } = release(held, 'req-1');
    assert.equal(decision.last, true);
    assert.deepEqual(decision.restored, { uncordoned: true, annotationsRemoved: [CA, KARPENTER], taintsRemoved: [] });
    assert.equal(after.spec?.unschedulable, false);
    assert.deepEqual(Object.keys(after.metadata?.annotations ?? {}).sort(), [LEDGER_ANNOTATION, 'other'].sort());
    assert.deepEqual(readLedger(after).holds, {});
  });

  test('pre-cordoned node: never uncordoned by drainbridge', () => {
    const held = hold(node({ unschedulable: true }), alice);
    assert.equal(readLedger(held).changes?.priorUnschedulable, true);
    assert.equal(readLedger(held).changes?.cordoned, false);
    const { node: after, decision } = release(held, 'req-1');
    assert.equal(decision.restored.uncordoned, false);
    assert.equal(after.spec?.unschedulable, true);
  });

  test('annotations set by someone else are neither overwritten nor removed', () => {
    const held = hold(node({ annotations: { [KARPENTER]: 'false' } }), alice);
    assert.equal(held.metadata?.annotations?.[KARPENTER], 'false');
    const { node: after } = release(held, 'req-1');
    assert.equal(after.metadata?.annotations?.[KARPENTER], 'false');
    assert.equal(after.metadata?.annotations?.[CA], undefined);
  });

  test('an annotation changed by someone while held stays', () => {
    const held = hold(node(), alice);
    const changed = apply(held, { metadata: { annotations: { [CA]: 'false' } } });
    const { node: after, decision } = release(changed, 'req-1');
    assert.deepEqual(decision.restored.annotationsRemoved, [KARPENTER]);
    assert.equal(after.metadata?.annotations?.[CA], 'false');
  });

  test('two requesters: the node stays cordoned until the last hold is released', () => {
    const first = hold(node(), alice);
    const second = planHold(first, bob, later(1));
    assert.equal(second.action, 'patch');
    if (second.action !== 'patch') return;
    assert.equal(second.first, false);
    assert.equal((second.patch as { spec?: unknown }).spec, undefined, 'a second hold writes only the ledger');
    const both = apply(first, second.patch);
    const one = release(both, 'req-1', later(2));
    assert.equal(one.decision.last, false);
    assert.equal(one.node.spec?.unschedulable, true);
    const none = release(one.node, 'req-2', later(3));
    assert.equal(none.decision.last, true);
    assert.equal(none.node.spec?.unschedulable, false);
  });

  test('a duplicated request changes nothing', () => {
    const held = hold(node(), alice);
    assert.deepEqual(planHold(held, alice, later(5)), { action: 'none', why: 'already-held' });
  });

  test('a late duplicate after release does not re-cordon (tombstone), until the tombstone expires', () => {
    const { node: after } = release(hold(node(), alice), 'req-1', later(10));
    assert.deepEqual(planHold(after, alice, later(3600)), { action: 'none', why: 'released' });
    assert.deepEqual(planRelease(after, 'req-1', later(3600)), { action: 'none', why: 'already-released', last: true });
    const expired = planHold(after, alice, later(10 + DEFAULT_LEDGER_SETTINGS.tombstoneSeconds + 1));
    assert.equal(expired.action, 'patch');
  });

  test('released to be held again (a rescheduled notice): restored, no tombstone, the same request holds it later', () => {
    const held = hold(node(), alice);
    const decision = planRelease(held, 'req-1', later(10), { ...DEFAULT_LEDGER_SETTINGS, keepRequest: true });
    assert.equal(decision.action, 'patch');
    if (decision.action !== 'patch') return;
    assert.equal(decision.last, true);
    const restored = apply(held, decision.patch);
    assert.equal(restored.spec?.unschedulable, false, 'uncordoned');
    assert.deepEqual(readLedger(restored).released, {}, 'no tombstone');
    assert.equal(planHold(restored, alice, later(20)).action, 'patch', 'the same request takes the node again');
    const again = planRelease(restored, 'req-1', later(30), { ...DEFAULT_LEDGER_SETTINGS, keepRequest: true });
    assert.deepEqual(again, { action: 'none', why: 'not-held', last: true }, 'released again: nothing, no tombstone');
  });

  test('compatibility taints only when configured, removed on release, foreign taints kept', () => {
    const settings = { ...DEFAULT_LEDGER_SETTINGS, compatibilityTaints: ['medik8s.io/drain' as const] };
    const start = node({ taints: [{ key: 'gpu', effect: 'NoSchedule', value: 'true' }] });
    const held = hold(start, alice, NOW, settings);
    assert.deepEqual(
      held.spec?.taints?.map((t) => t.key),
      ['gpu', 'medik8s.io/drain'],
    );
    const { node: after, decision } = release(held, 'req-1');
    assert.deepEqual(decision.restored.taintsRemoved, ['medik8s.io/drain']);
    assert.deepEqual(after.spec?.taints, [{ key: 'gpu', effect: 'NoSchedule', value: 'true' }]);
  });

  test("hold labels: added only where the key is absent, removed on release only if still drainbridge's value", () => {
    const EXCLUDE = 'remediation.medik8s.io/exclude-from-remediation';
    const settings = { ...DEFAULT_LEDGER_SETTINGS, holdLabels: { [EXCLUDE]: 'true' } };
    const held = hold(node(), alice, NOW, settings);
    assert.equal(held.metadata?.labels?.[EXCLUDE], 'true');
    const { node: after, decision } = release(held, 'req-1');
    assert.deepEqual(decision.restored.labelsRemoved, [EXCLUDE]);
    assert.equal(after.metadata?.labels?.[EXCLUDE], undefined);

    const theirs = apply(node(), { metadata: { labels: { [EXCLUDE]: 'false' } } });
    const heldTheirs = hold(theirs, alice, NOW, settings);
    assert.equal(heldTheirs.metadata?.labels?.[EXCLUDE], 'false', 'a label someone else set is left as it is');
    const { node: afterTheirs } = release(heldTheirs, 'req-1');
    assert.equal(afterTheirs.metadata?.labels?.[EXCLUDE], 'false', '...and kept at release');

    const changed = apply(held, { metadata: { labels: { [EXCLUDE]: 'by-someone' } } });
    const { node: afterChanged } = release(changed, 'req-1');
    assert.equal(afterChanged.metadata?.labels?.[EXCLUDE], 'by-someone', "changed since: not drainbridge's to remove");
  });

  test('out-of-band uncordon is detected, marked once, and not undone or fought', () => {
    const held = hold(node(), alice);
    assert.equal(isUncordonedOutOfBand(held), false);
    const uncordoned = apply(held, { spec: { unschedulable: false } });
    assert.equal(isUncordonedOutOfBand(uncordoned), true);
    const mark = planOutOfBandMark(uncordoned, later(1));
    assert.ok(mark);
    const marked = apply(uncordoned, mark);
    assert.equal(planOutOfBandMark(marked, later(2)), undefined, 'reported once');
    // Someone cordons again for their own reasons: the release must not uncordon it.
    const recordoned = apply(marked, { spec: { unschedulable: true } });
    const { node: after, decision } = release(recordoned, 'req-1');
    assert.equal(decision.restored.uncordoned, false);
    assert.equal(after.spec?.unschedulable, true);
  });

  test('an unreadable ledger is never read as empty (issue 12: see ledger-damage.test.ts)', () => {
    assert.throws(() => readLedger(node({ annotations: { [LEDGER_ANNOTATION]: '{not json' } })), {
      name: 'RecordUnreadable',
    });
  });

  test('countHeldNodes counts nodes with a hold', () => {
    const held = hold(node({ name: 'a' }), alice);
    const { node: released } = release(hold(node({ name: 'b' }), bob), 'req-2');
    assert.equal(countHeldNodes([held, released, node({ name: 'c' })]), 1);
  });
});

describe('phase annotation', () => {
  test('written only at transitions', () => {
    const patch = planPhase(node(), 'NodeCordoning');
    assert.ok(patch);
    const cordoning = apply(node(), patch);
    assert.equal(readPhase(cordoning), 'NodeCordoning');
    assert.equal(planPhase(cordoning, 'NodeCordoning'), undefined);
    assert.ok(planPhase(cordoning, 'NodeCordoned'));
  });

  test('an unknown phase is refused naming the field', () => {
    assert.throws(() => planPhase(node(), 'Sleeping' as never), /phase: must be one of/);
  });
});
