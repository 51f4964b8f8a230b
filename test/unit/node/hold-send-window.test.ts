/**
 * A hold write is not sent past its window after the admission lock (HOLD_SEND_WINDOW_MS): sent later,
 * it could land after the admitter's intent stopped counting on the admission Lease, unseen by the next
 * admitter — one node past a limit. Late, the admission fails with a TransientError (tried again) and
 * nothing is written; in time, the write goes as before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { HOLD_SEND_WINDOW_MS, INTENT_TTL_SECONDS } from '../../../lib/admission/intents.ts';
import type { KubeClient } from '../../../lib/clients/kube/client.ts';
import { TransientError } from '../../../lib/errors/index.ts';
import { acquireHold } from '../../../lib/node/hold.ts';
import { DEFAULT_RETRY } from '../../../lib/util/retry.ts';

/** KubeClient's per-request timeout (lib/clients/kube/client.ts, DEFAULT_TIMEOUT_MS). */
const CLIENT_TIMEOUT_MS = 10_000;

/** A cluster of one node that records the patches sent to it. */
function oneNode(): { client: KubeClient; patches: unknown[] } {
  const patches: unknown[] = [];
  let node: V1Node = { metadata: { name: 'node-1', resourceVersion: '1' }, spec: {} };
  const client = {
    getNode: async () => structuredClone(node),
    patchNode: async (_name: string, patch: unknown) => {
      patches.push(patch);
      node = { ...node, metadata: { ...node.metadata, resourceVersion: '2' }, spec: { unschedulable: true } };
      return structuredClone(node);
    },
    createEvent: async () => ({}),
  };
  return { client: client as unknown as KubeClient, patches };
}

const REQUEST = { requestId: 'r1', requester: 'test', origin: 'manual' as const };
const late = () => new TransientError('too late');

describe('the hold write after the admission lock', () => {
  it('is not sent once its window has passed: TransientError, nothing written', async () => {
    const { client, patches } = oneNode();
    await assert.rejects(
      acquireHold(client, 'node-1', REQUEST, { sendBy: { at: Date.now() - 1, late } }),
      (error: Error) => error.name === 'TransientError' && error.message === 'too late',
    );
    assert.deepEqual(patches, []);
  });

  it('is sent within its window', async () => {
    const { client, patches } = oneNode();
    const held = await acquireHold(client, 'node-1', REQUEST, { sendBy: { at: Date.now() + 60_000, late } });
    assert.equal(held.acquired, true);
    assert.equal(patches.length, 1);
  });

  it('the window leaves a write begun at its end time to land before the intent expires', () => {
    // One client call sends its last attempt after (attempts − 1) × (timeout + longest backoff); the API
    // server gives up on a request 60 s after it came (kube-apiserver --request-timeout, 1m0s).
    const lastAttempt = (DEFAULT_RETRY.attempts - 1) * (CLIENT_TIMEOUT_MS + DEFAULT_RETRY.maxDelayMs);
    assert.ok(HOLD_SEND_WINDOW_MS + lastAttempt + 60_000 <= INTENT_TTL_SECONDS * 1000);
  });
});
