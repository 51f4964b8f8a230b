/**
 * A ProgressStore held in process memory, with the same optimistic-concurrency contract as the
 * cluster-backed store. For `drainbridge plan`, unit tests and the Nova e2e suite run without a
 * cluster; the workflow persists progress in the cluster (the Evacuation record) instead.
 */
import type { ProgressStore } from '../domain/pass.ts';
import type { BranchName } from '../domain/plan.ts';
import { ConflictError } from '../errors/index.ts';

export class MemoryProgressStore implements ProgressStore {
  readonly #entries = new Map<string, { state: unknown; version: string }>();
  #nextVersion = 1;

  async read<S>(requestId: string, branch: BranchName): Promise<{ state: S; version: string } | undefined> {
    const entry = this.#entries.get(`${requestId}/${branch}`);
    return entry ? { state: structuredClone(entry.state) as S, version: entry.version } : undefined;
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
