/**
 * What the workflow's tasks and the branches work with (lib/workflow/deps.ts builds it). Its own file so
 * that the branch definitions can name it while deps.ts builds each branch's connection from the registry.
 */
import type { EventPublisher } from '../../bus/types.ts';
import type { KubeClient } from '../../clients/kube/client.ts';
import type { Config } from '../../config/index.ts';
import type { ProgressStore } from '../../model/pass.ts';
import type { EvacuationProgressStore } from '../../progress/evacuation-store.ts';

export interface WorkflowDeps {
  readonly config: Config;
  readonly kube: KubeClient;
  /** The Evacuation records: per-branch progress, counts and blockers. */
  readonly progress: EvacuationProgressStore;
  readonly publisher: EventPublisher;
  /**
   * Each branch's connection to its own outside world, by branch name, made once with the deps (Nova:
   * its port over the OpenStack clients). A branch without `connect` has none.
   */
  readonly connections: BranchConnections;
}

/** What a branch's connection is made from. */
export interface BranchConnectBase {
  readonly kube: KubeClient;
  readonly progress: ProgressStore;
  /** Where a branch's credentials are read from (defaults to the process environment). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Makes a branch's connection from the configuration (Nova: its port, a no-op one when Nova is off). */
export type BranchConnector = (config: Config, base: BranchConnectBase) => Promise<unknown>;

export type BranchConnections = ReadonlyMap<string, unknown>;
