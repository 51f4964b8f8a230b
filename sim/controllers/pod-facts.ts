/**
 * What the workload and disruption controllers read of a pod: labels, owners, deletion, node, status.
 * A change that alters none of it (an annotation, say — the scale bench changes 50 a second at 5,000
 * nodes) need not re-sync an owner over thousands of pods. Each subscriber keeps its own record,
 * since each sees every event once.
 */
import { keyOf } from './meta.ts';
import type { Change } from './runtime.ts';

function factsOf(change: Change): string {
  const { metadata, spec, status } = change.object as {
    metadata: Change['object']['metadata'];
    spec?: { nodeName?: string };
    status?: unknown;
  };
  return JSON.stringify([
    metadata.labels ?? {},
    metadata.ownerReferences ?? [],
    metadata.deletionTimestamp ?? '',
    spec?.nodeName ?? '',
    status ?? {},
  ]);
}

/** Tells the pod changes a controller must see from the ones it can skip. */
export class PodFacts {
  readonly #seen = new Map<string, string>();

  /** Whether `change` alters what the controllers read (always for ADDED and DELETED); remembers it. */
  matters(change: Change): boolean {
    const key = keyOf(change.object);
    if (change.type === 'DELETED') {
      this.#seen.delete(key);
      return true;
    }
    const facts = factsOf(change);
    if (change.type === 'MODIFIED' && this.#seen.get(key) === facts) return false;
    this.#seen.set(key, facts);
    return true;
  }
}
