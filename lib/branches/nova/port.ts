/**
 * What the workflow needs from the Nova branch. The Nova module (lib/branches/nova) provides the real one when
 * Nova is enabled; `NO_NOVA` is the behaviour for clusters without OpenStack: nothing to disable,
 * nothing to migrate, nothing to restore.
 */
import type { PassInput, PassResult, ReconcilePass } from '../../model/pass.ts';
import type { ResolvedRequest } from '../../model/request.ts';

export interface NovaPrepared {
  /** The node's Nova host, or null when the node is not a Nova host (or Nova is not enabled). */
  readonly host: string | null;
  /** drainbridge disabled the host's nova-compute service in this call (false: already disabled by it, or skipped). */
  readonly disabledNow: boolean;
  readonly note: string;
}

/** What Nova's part of the Restore machine's RestoreBranches step did (its migrations are cancelled through the branch registry's cancel). */
export interface NovaRestored {
  readonly serviceEnabled: boolean;
  /** Migrations drainbridge aborted (servers stay where they are). */
  readonly abortedMigrations: number;
  /** Things left alone, e.g. "nova-compute on compute-1 is disabled by someone else (reason: …)". */
  readonly leftAlone: readonly string[];
}

/** What re-enabling the service did. */
export type NovaServiceRestored = Pick<NovaRestored, 'serviceEnabled' | 'leftAlone'>;

export interface NovaPort {
  /** Finds the node's Nova host and disables its nova-compute service with drainbridge's reason. */
  prepare(request: ResolvedRequest): Promise<NovaPrepared>;
  /** The live-migration branch. */
  pass(): ReconcilePass;
  /**
   * Re-enables the service if its disabled reason is drainbridge's — for this request or one of
   * `otherRequestIds` (the node's earlier holds: when the last hold goes, none of them needs the
   * service disabled any more). Restore cancels the migrations first (`cancel`, through the registry).
   */
  restore(request: ResolvedRequest, otherRequestIds: readonly string[]): Promise<NovaServiceRestored>;
  /**
   * Aborts drainbridge's in-flight migrations of these requests, in order (servers stay running where
   * they are; the service stays disabled).
   */
  cancel(requestIds: readonly string[]): Promise<{ readonly abortedMigrations: number }>;
}

const NOTHING_TO_DO: PassResult = {
  done: true,
  progressed: false,
  progress: { total: 0, moved: 0, inFlight: 0, skipped: 0 },
  blockers: [],
};

export const NO_NOVA: NovaPort = {
  prepare: async () => ({ host: null, disabledNow: false, note: 'Nova is not enabled (DRAINBRIDGE_NOVA=false)' }),
  pass: () => ({ branch: 'nova', run: async (_input: PassInput) => NOTHING_TO_DO }),
  restore: async () => ({ serviceEnabled: false, leftAlone: [] }),
  cancel: async () => ({ abortedMigrations: 0 }),
};
