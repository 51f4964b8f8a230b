/**
 * What a branch of an evacuation is, as the rest of drainbridge uses it: the Evacuate state machine
 * (where the branch runs), the pass task (its reconcile pass), Restore and abort (its cancel),
 * `drainbridge plan` (its planner) and the words people read in plans and progress lines. Every
 * branch is one `BranchDefinition` in registry.ts; nothing else names branches one by one.
 */
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { NodeRestoredEvent } from '../../bus/contracts/contracts.ts';
import type { KubeClient } from '../../clients/kube/client.ts';
import type { EvacuationObject } from '../../clients/kube/paths.ts';
import type { Config } from '../../config/index.ts';
import type { AccessSettings, ApiAccess } from '../../model/api-access.ts';
import type { BranchEstimate } from '../../model/estimate.ts';
import type { ReconcilePass } from '../../model/pass.ts';
import type { BranchName, BranchPlan, BranchPlanner, NodePlan } from '../../model/plan.ts';
import type { DrainOptions, ResolvedRequest } from '../../model/request.ts';
import type { ItemTimeline } from '../../model/timeline.ts';
import { decodeRecord, type RecordFormat } from '../../util/json-record.ts';
import type { BranchConnector, WorkflowDeps } from './workflow-deps.ts';

/**
 * When a branch runs in the Evacuate machine: `parallel` — in the Parallel state, beside the other
 * branches (pods, the VMs); `after-vms` — after every parallel branch finished, one after another
 * (infra pods such as nova-compute and libvirt may go only once the VMs have left).
 */
export type BranchStage = 'parallel' | 'after-vms';

/**
 * What a branch moves, as the readers of progress see it. Each reader asks the kind a question instead of
 * switching on a list of kinds, so a new kind (say an IPMI power-off) is one more value, not an edit of
 * every reader.
 */
export interface MoveKind {
  /**
   * Its items are pods evicted as `kubectl drain` does: a NodeMaintenance's progress (evictionPods,
   * pendingPods, drainProgress) counts them, as node-maintenance-operator counts pods only. (Its time is
   * the definition's `estimate`.)
   */
  readonly podEviction: boolean;
  /** The counter of `drainbridge run`'s metrics its moved items add to (`none`: no counter fits). */
  readonly counter: 'pods-evicted' | 'servers-migrated' | 'none';
  /** The `drainbridge status` column its counts add to (the two pod branches share one). */
  readonly column: StatusColumn;
}

export interface StatusColumn {
  /** The name its counts carry in `drainbridge status -o json` (`branches[].branch`). */
  readonly key: string;
  readonly heading: string;
  /** Its place among the columns, left to right. */
  readonly position: number;
}

/** A branch's rows of `drainbridge report` from the state its pass keeps: read through its format (throws when unreadable). */
export function itemRowsReader<S>(
  format: RecordFormat<S>,
  rows: (branch: string, state: S) => ItemTimeline[],
): (branch: string, state: unknown) => ItemTimeline[] {
  return (branch, state) => {
    const read = decodeRecord(state, format);
    if (read.status === 'unreadable') throw new Error(read.reason);
    return read.status === 'ok' ? rows(branch, read.value) : [];
  };
}

/** A branch's calls of the Kubernetes API during an evacuation, a plan and a Restore (its cancel). */
export interface BranchAccess {
  readonly evacuate?: (settings: AccessSettings) => ApiAccess[];
  readonly plan?: (settings: AccessSettings) => ApiAccess[];
  readonly restore?: (settings: AccessSettings) => ApiAccess[];
}

/** What the preflight knows when it asks a branch for its own check: the configuration and the environment. */
export interface BranchPreflightSetup {
  readonly config: Pick<Config, 'nova'>;
  /** Where credentials of the branch's outside world are read from (OS_* for Nova). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** One preflight check's finding (lib/preflight/result.ts's CheckResult). */
export interface BranchCheckResult {
  readonly check: string;
  readonly ok: boolean;
  readonly what: string;
  readonly fix?: string;
}

/** What a branch's cancel stopped (Restore and abort; the items stay where they are). */
export interface BranchCancelled {
  /** Moves drainbridge had in flight and stopped (live migrations aborted). */
  readonly aborted: number;
  /** What the branch saw and left alone, as sentences for the `Node Restored` event (e.g. someone else's migration). */
  readonly leftAlone: readonly string[];
}

/** What a branch's prepare did, for the log and the PrepareBranches step's output. */
export interface BranchPrepared {
  /** One sentence: what was done or why nothing was (Nova: "nova-compute on compute-1 disabled by drainbridge"). */
  readonly note: string;
}

/** What a branch's restore undid, and what it left alone. */
export interface BranchRestored {
  /** What the branch saw and left alone, as sentences for the `Node Restored` event. */
  readonly leftAlone: readonly string[];
  /** The branch's fields of the `Node Restored` event (Nova: whether nova-compute was re-enabled). */
  readonly restoredFields?: Partial<Pick<NodeRestoredEvent, 'novaServiceEnabled'>>;
}

/** What a branch's planner may use: the configuration, the cluster, the drain options and the pod drain's shared plan. */
export interface PlanSetup {
  readonly config: Config;
  readonly kube: KubeClient;
  /** The request's drain options (`--pod-selector` also narrows which launcher pods, so VMs, move). */
  readonly options: DrainOptions;
  /** The pod drain's plan of the node (both pod branches, kubectl's warnings), made once and shared. */
  readonly drainPlan: (nodeName: string) => Promise<NodePlan>;
}

/**
 * What a branch's start-time estimate may use, read once for all branches (estimate-observe.ts): the
 * configuration, the drain options, the node's pods by uid, the cluster's budgets, the Evacuation records.
 */
export interface EstimateSetup {
  readonly config: Config;
  readonly options: DrainOptions;
  readonly pods: ReadonlyMap<string, V1Pod>;
  readonly budgets: readonly V1PodDisruptionBudget[];
  readonly records: readonly EvacuationObject[];
}

export interface BranchDefinition {
  readonly name: BranchName;
  readonly stage: BranchStage;
  /** What it moves: what the estimate, run's metrics, `drainbridge status` and a NodeMaintenance's progress make of it. */
  readonly moves: MoveKind;
  /** Words for people: the plan's heading of what would move ("to evict"), progress lines ("pods evicted"). */
  readonly words: { readonly toMove: string; readonly moved: string };
  /**
   * The format of the state its pass keeps in the Evacuation record (`status.branches.<name>.state`): what
   * the pass reads it with, and what `drainbridge repair` checks it against.
   */
  readonly stateFormat: RecordFormat<unknown>;
  /**
   * Its rows of `drainbridge report`: one per item in the state its pass keeps (`itemRowsReader`); throws
   * when the state cannot be read.
   */
  itemRows(branch: string, state: unknown): ItemTimeline[];
  /** The comment on the branch's pass state in the state machine, if it needs one. */
  readonly aslComment?: string;
  /**
   * Makes the branch's connection to its own outside world once per deps (Nova: its OpenStack clients);
   * the branch finds it in `deps.connections` under its name. Absent when the cluster client is enough.
   */
  readonly connect?: BranchConnector;
  /**
   * The PrepareBranches step, before any pass (Nova: disable the host's nova-compute service so that no
   * new server lands there). Idempotent: the step is retried. Absent when there is nothing to prepare.
   */
  prepare?(deps: WorkflowDeps, request: ResolvedRequest): Promise<BranchPrepared>;
  /**
   * The RestoreBranches step, when the last hold goes, after every branch's cancel: undoes what prepare
   * did if it is still drainbridge's doing for this request or one of `otherRequestIds` (the node's
   * earlier holds). Idempotent. Absent when prepare is.
   */
  restore?(deps: WorkflowDeps, request: ResolvedRequest, otherRequestIds: readonly string[]): Promise<BranchRestored>;
  /** The branch's reconcile pass (lib/model/pass.ts), over the workflow's dependencies. */
  pass(deps: WorkflowDeps): ReconcilePass;
  /**
   * Stops drainbridge's in-flight moves for these requests (this one first) on `nodeName`, leaving every
   * item where it is: on Restore when the last hold goes, and when an operator aborts. Absent when there is
   * nothing to stop (an eviction cannot be taken back).
   */
  cancel?(deps: WorkflowDeps, requestIds: readonly string[], nodeName: string): Promise<BranchCancelled>;
  /**
   * The Kubernetes calls the branch makes, by operation (the preflight asks for them; the RBAC test holds
   * the branch to them). Absent when it calls nothing of the cluster's beyond the workflow's own.
   */
  readonly access?: BranchAccess;
  /**
   * The preflight's check of the branch's own outside world, beyond the Kubernetes API (Nova: the
   * credentials load and Nova answers); undefined when the branch is off in this configuration. Asked by
   * every operation that may reach that world (not abort, status, report, resume). Absent: nothing to check.
   */
  preflight?(setup: BranchPreflightSetup): Promise<BranchCheckResult | undefined>;
  /**
   * Its part of the start-time estimate (a window's lead time, `plan`'s duration): seconds for moving what
   * `plan` lists, and one line saying how (estimates.ts has the pod-eviction and per-item ways).
   */
  estimate(plan: BranchPlan, setup: EstimateSetup): BranchEstimate;
  /** `drainbridge plan`: the branch's planner, or undefined when the branch is off (Nova not enabled). */
  planner(setup: PlanSetup): Promise<BranchPlanner | undefined>;
  /** Lines under the branch's heading in `drainbridge plan` (Nova: its host, the room on the other hosts). */
  planLines?(plan: BranchPlan): readonly string[];
}
