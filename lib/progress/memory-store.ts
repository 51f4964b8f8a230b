/**
 * A ProgressStore held in process memory, with the same optimistic-concurrency contract as the
 * cluster-backed store. For `drainbridge plan`, unit tests and the Nova e2e suite run without a
 * cluster; the workflow persists progress in the cluster (the Evacuation record) instead.
 */

import { ConflictError, RecordUnreadable } from '../errors/index.ts';
import type { ProgressStore } from '../model/pass.ts';
import type { BranchName } from '../model/plan.ts';
import { decodeRecord, type RecordFormat } from '../util/json-record.ts';

export class MemoryProgressStore implements ProgressStore {
  readonly #entries = new Map<string, { state: unknown; version: string }>();
  #nextVersion = 1;

  async read<S>(
    requestId: string,
    branch: BranchName,
    format: RecordFormat<S>,
  ): Promise<{ state: S; version: string } | undefined> {
    const entry = this.#entries.get(`${requestId}/${branch}`);
    if (!entry) return undefined;
    const read = decodeRecord(structuredClone(entry.state), format);
    if (read.status === 'unreadable') throw new RecordUnreadable({ what: format.what, reason: read.reason });
    return read.status === 'ok' ? { state: read.value, version: entry.version } : undefined;
  }

  async write<S>(
    requestId: string,
    branch: BranchName,
    state: S,
    expectedVersion: string | undefined,
  ): Promise<string> {
    const key = `${requestId}/${branch}`;
    const current = this.#entries.get(key);
    if (current?.version !== expectedVersion) {
      throw new ConflictError(
        `progress of ${key} changed since it was read (have ${current?.version}, expected ${expectedVersion})`,
      );
    }
    const version = String(this.#nextVersion++);
    this.#entries.set(key, { state: structuredClone(state), version });
    return version;
  }
}
