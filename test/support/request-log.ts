/**
 * "Changed nothing", read from the simulator's request log — what the API server saw, not what the code
 * says it did. Every bad-input and fault case asserts through these.
 */
import assert from 'node:assert/strict';
import type { Simulator } from '../../sim/index.ts';
import type { RequestRecord } from '../../sim/server/request-log.ts';

/** drainbridge's ServiceAccount as the request log names it (deploy/base/rbac/drainbridge.yaml). */
export const DRAINBRIDGE_SA = 'system:serviceaccount:drainbridge:drainbridge';

/** One write as a short line: `patch nodes/node-1`, `create pods/eviction shop/web-1`. */
export function describeWrite(record: RequestRecord): string {
  const resource = record.subresource ? `${record.resource}/${record.subresource}` : record.resource;
  const name = record.namespace ? `${record.namespace}/${record.name}` : record.name;
  return `${record.verb} ${resource} ${name}`.trim();
}

/** Successful writes (not dry runs) since `mark`, by `user` when given, as short lines. */
export function writesSince(sim: Simulator, mark: number, user?: string): string[] {
  return sim.requestLog.writes({ since: mark, ...(user ? { user } : {}) }).map(describeWrite);
}

/**
 * Asserts the request log holds no successful write since `mark` (by `user` when given). Attempts that
 * were refused by the server are not writes; dry runs are not either.
 */
export function assertNoWrites(sim: Simulator, mark: number, what: string, user?: string): void {
  assert.deepEqual(writesSince(sim, mark, user), [], `${what}: expected no write in the request log`);
}

/** Every request since `mark` by `user` (reads included), for "nothing was even attempted". */
export function requestsSince(sim: Simulator, mark: number, user?: string): RequestRecord[] {
  return sim.requestLog.all({ since: mark, ...(user ? { user } : {}) });
}
