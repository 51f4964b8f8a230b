/**
 * The admission mutex and a lock whose answer was lost: the write landed, the client's retry of it then
 * conflicted with it. The lock is this request's: it goes on holding it (and unlocks it), where taking the
 * conflict for another holder left the lock to expire and held every other request back for 15 s.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Lease } from '@kubernetes/client-node';
import { lockAdmission } from '../../../lib/admission/mutex.ts';
import type { KubeClient } from '../../../lib/clients/kube/client.ts';
import { ConflictError, SlotUnavailable } from '../../../lib/errors/index.ts';
import type { ResolvedRequest } from '../../../lib/model/request.ts';

const NOW = new Date('2026-11-29T07:00:00Z');
const REQUEST: ResolvedRequest = {
  requestId: 'r1',
  requester: 'test',
  origin: 'manual',
  target: { nodeName: 'node-1' },
  nodeName: 'node-1',
} as ResolvedRequest;

/** One Lease whose writes land; `answerLost` writes then answer 409 (as a retried create or update would). */
function leaseStore(options: { answerLost: boolean; holder?: string }): { client: KubeClient; lease(): V1Lease } {
  let stored: V1Lease | undefined = options.holder
    ? {
        metadata: { name: 'drainbridge-admission', resourceVersion: '1' },
        spec: { holderIdentity: options.holder, leaseDurationSeconds: 15, acquireTime: NOW, renewTime: NOW },
      }
    : undefined;
  let version = 1;
  const write = async (_namespace: string, lease: V1Lease): Promise<V1Lease> => {
    stored = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++version) } };
    if (options.answerLost) throw new ConflictError('the object has been modified');
    return structuredClone(stored);
  };
  const client = {
    getLease: async () => {
      if (!stored) throw Object.assign(new Error('not found'), { code: 404 });
      return structuredClone(stored);
    },
    createLease: write,
    replaceLease: write,
  };
  return { client: client as unknown as KubeClient, lease: () => stored as V1Lease };
}

const busy = (message: string) => new SlotUnavailable(message);

describe('lockAdmission', () => {
  it('a lock whose answer was lost is this request’s: it holds it, not busy', async () => {
    const store = leaseStore({ answerLost: true, holder: 'someone-before' });
    // The earlier holder's lock has expired (an hour ago): the lock is free to take.
    store.lease().spec = { ...store.lease().spec, renewTime: new Date(NOW.getTime() - 3_600_000) };
    const locked = await lockAdmission(store.client, REQUEST, { namespace: 'drainbridge', now: NOW, busy });
    assert.equal(locked.spec?.holderIdentity, 'r1');
  });

  it('a lock another request holds is busy, naming it', async () => {
    const store = leaseStore({ answerLost: false, holder: 'r2' });
    await assert.rejects(
      lockAdmission(store.client, REQUEST, { namespace: 'drainbridge', now: NOW, busy }),
      (error: Error) => error instanceof SlotUnavailable && /held by r2/.test(error.message),
    );
  });

  it('a lock this request holds already (an attempt that died before unlocking) is taken again', async () => {
    const store = leaseStore({ answerLost: false, holder: 'r1' });
    const locked = await lockAdmission(store.client, REQUEST, { namespace: 'drainbridge', now: NOW, busy });
    assert.equal(locked.spec?.holderIdentity, 'r1');
    assert.equal(store.lease().metadata?.resourceVersion, '2', 'taken with a write of its own');
  });
});
