/**
 * Properties of the ledger over random histories: whatever the node looked like before and whatever
 * order requests hold and release it in, the node ends as it was (apart from the ledger itself), it is
 * cordoned whenever a hold is held, and a duplicate never adds a second hold.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import fc from 'fast-check';
import type { MergePatch } from '../../../lib/clients/kube/paths.ts';
import {
  DEFAULT_LEDGER_SETTINGS,
  HOLD_ANNOTATIONS,
  isHeld,
  LEDGER_ANNOTATION,
  type LedgerSettings,
  planHold,
  planRelease,
  readLedger,
} from '../../../lib/node/ledger.ts';
import { mergePatch } from '../../../sim/store/patch.ts';

const NOW = Date.parse('2026-11-21T03:00:00Z');

function apply(node: V1Node, patch: MergePatch): V1Node {
  return mergePatch(node, patch) as V1Node;
}

const annotationKeys = [...Object.keys(HOLD_ANNOTATIONS), 'team'];
const priorNode = fc.record({
  unschedulable: fc.boolean(),
  annotations: fc.dictionary(fc.constantFrom(...annotationKeys), fc.constantFrom('true', 'false', 'x')),
  taints: fc.subarray([
    { key: 'gpu', effect: 'NoSchedule' },
    { key: 'medik8s.io/drain', effect: 'NoSchedule' },
  ]),
});
const step = fc.record({ op: fc.constantFrom('hold', 'release'), id: fc.constantFrom('r1', 'r2', 'r3') });
const settings = fc.record({
  compatibilityTaints: fc.subarray(['medik8s.io/drain', 'kubevirt.io/drain'] as const),
});

function withoutLedger(node: V1Node): unknown {
  const annotations = { ...node.metadata?.annotations };
  delete annotations[LEDGER_ANNOTATION];
  return { unschedulable: node.spec?.unschedulable === true, annotations, taints: node.spec?.taints ?? [] };
}

test('any history of holds and releases restores the node exactly once the last hold goes', () => {
  fc.assert(
    fc.property(priorNode, fc.array(step, { maxLength: 12 }), settings, (prior, steps, extra) => {
      const ledgerSettings: LedgerSettings = {
        ...DEFAULT_LEDGER_SETTINGS,
        compatibilityTaints: extra.compatibilityTaints,
      };
      const start: V1Node = {
        metadata: { name: 'n', resourceVersion: '1', annotations: prior.annotations },
        spec: { unschedulable: prior.unschedulable, taints: prior.taints },
      };
      let node = start;
      const released = new Set<string>();
      steps.forEach(({ op, id }, index) => {
        const at = new Date(NOW + index * 1000);
        const decision =
          op === 'hold'
            ? planHold(node, { requestId: id, requester: 'p', origin: 'manual' }, at, ledgerSettings)
            : planRelease(node, id, at, ledgerSettings);
        if (decision.action === 'patch') node = apply(node, decision.patch);
        if (op === 'release' && decision.action === 'patch') released.add(id);
        const ledger = readLedger(node);
        // Released ids never come back (tombstones outlive this history).
        for (const gone of released) assert.equal(Object.hasOwn(ledger.holds, gone), false);
        if (isHeld(ledger)) assert.equal(node.spec?.unschedulable, true, 'held ⇒ cordoned');
      });
      // Release whatever is still held.
      for (const id of Object.keys(readLedger(node).holds)) {
        const decision = planRelease(node, id, new Date(NOW + 60_000));
        if (decision.action === 'patch') node = apply(node, decision.patch);
      }
      assert.deepEqual(withoutLedger(node), withoutLedger(start));
    }),
    { numRuns: 300 },
  );
});
