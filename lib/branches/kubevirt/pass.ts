/**
 * The KubeVirt branch as a reconcile pass. One call: read the progress kept last time, observe the
 * node's VMs (observe.ts), plan (planner.ts), create drainbridge's migrations (and, opted in, evict the
 * launcher pods of VMs to restart), keep the progress, record Events — a round. With `waitMs`, while its
 * migrations are in flight it waits on a watch of them and runs another round the moment one ends
 * (wait.ts), so a freed slot is used at once; then it returns and the workflow calls it again.
 *
 * Crash safety: a migration's name is fixed per (request, VMI, attempt) and its labels find it again,
 * so a pass that dies between creating it and recording it neither loses nor duplicates it.
 */

import type { KubeClient } from '../../clients/kube/client.ts';
import { apiStatusOf } from '../../clients/kube/errors.ts';
import { KubeVirtApi } from '../../clients/kubevirt/api.ts';
import type { PassInput, PassResult, ProgressStore, ReconcilePass } from '../../model/pass.ts';
import { readNodeOrFail } from '../../node/hold.ts';
import { readLedger } from '../../node/ledger.ts';
import { sameJson } from '../../util/same-json.ts';
import { type ClaimsRead, MigrationClaims, pendingClaims } from './claims.ts';
import { classifyVmi } from './classify.ts';
import { eventsFor, recordVmiEvents } from './kube-events.ts';
import { migrationBody, migrationName } from './migrations.ts';
import {
  INITIAL_KUBEVIRT_STATE,
  KUBEVIRT_STATE_FORMAT,
  type KubeVirtBranchState,
  type KubeVirtOptions,
  type KubeVirtSettings,
  type Vmi,
  type VmiProgress,
} from './model.ts';
import { observeNode } from './observe.ts';
import { type KubeVirtAction, type KubeVirtPassPlan, type PlanInput, planPass, progressedBetween } from './planner.ts';
import { vmMoves, withTimeline } from './progress.ts';
import { type KubeVirtRound, roundsWithin, watchOwnMigrations } from './wait.ts';

export interface KubeVirtPassDeps {
  readonly kube: KubeClient;
  readonly store: ProgressStore;
  readonly options: KubeVirtOptions;
  /**
   * drainbridge's namespace, where the migration claims every evacuation shares live (claims.ts). Without
   * it, no claims are kept: two evacuations at once could together exceed the cluster-wide limit.
   */
  readonly namespace?: string;
  /** How long one pass may wait for its migrations to end, running more rounds as they do (0: one round). */
  readonly waitMs?: number;
}

/** Reads, plans and claims again at most this often in one pass when other passes claim at the same moment. */
const CLAIM_ATTEMPTS = 3;

/** VMIs whose owner the restart opt-in must look at: those KubeVirt would let be evicted although they cannot migrate. */
export function restartCandidates(options: KubeVirtOptions) {
  if (!options.restartUnmigratable) return undefined;
  return (vmis: readonly Vmi[], settings: KubeVirtSettings): Vmi[] =>
    vmis.filter((vmi) => {
      const cls = classifyVmi(vmi, settings);
      return cls.kind === 'unmigratable' && cls.evictable;
    });
}

/** How an API refusal of an action reads; undefined when it is no refusal but a fault to raise. */
function refusalOf(error: unknown): { adopted: boolean; message: string } | undefined {
  const status = apiStatusOf(error);
  if (!status) return undefined;
  // AlreadyExists: this attempt's migration was created by a pass that died before recording it.
  if (status.code === 409) return { adopted: true, message: status.message };
  if (status.code === 404) return { adopted: true, message: status.message };
  // virt-api's answers (400: in-flight migration, not migratable, final VMI) and eviction refusals (429).
  if (status.code === 400 || status.code === 429) return { adopted: false, message: status.message };
  return undefined;
}

export class KubeVirtPass implements ReconcilePass {
  readonly branch = 'kubevirt' as const;
  readonly #deps: KubeVirtPassDeps;
  readonly #api: KubeVirtApi;
  readonly #claims: MigrationClaims | undefined;

  constructor(deps: KubeVirtPassDeps) {
    this.#deps = deps;
    this.#api = new KubeVirtApi(deps.kube);
    this.#claims = deps.namespace ? new MigrationClaims(deps.kube, deps.namespace) : undefined;
  }

  run(input: PassInput): Promise<PassResult> {
    const { kube, waitMs = 0 } = this.#deps;
    return roundsWithin(input, {
      waitMs,
      round: (now, woken) => this.#round(input.request, now, woken),
      watch: (ms) => watchOwnMigrations(kube, this.#api, input.request.requestId, ms),
    });
  }

  /** One round: observe, plan, claim, perform, keep the progress, record Events. */
  async #round(request: PassInput['request'], now: Date, woken: boolean): Promise<KubeVirtRound> {
    const { store, options } = this.#deps;
    const stored = await store.read(request.requestId, 'kubevirt', KUBEVIRT_STATE_FORMAT);
    const previous = stored?.state ?? INITIAL_KUBEVIRT_STATE;
    const { plan, withheld, released } = await this.#planAndClaim(request, previous, now, woken);
    if (released) {
      // A Restore released the hold since this step's guard: start nothing it would not cancel (the next
      // step's guard ends the evacuation).
      const result = { done: false, progressed: false, progress: plan.progress, blockers: plan.blockers };
      return { result, state: previous, released: true };
    }
    const refused = await this.#perform(plan.actions, withheld);
    const planned = refused.size === 0 ? plan.state : corrected(plan.state, plan.actions, refused);
    // The timeline rides in the same write: it changes only where a VMI's status did.
    const state = withTimeline(previous, planned, now);
    if (!sameJson(state, stored?.state)) {
      await store.write(request.requestId, 'kubevirt', state, stored?.version);
    }
    const context = { nodeName: request.nodeName, requestId: request.requestId, options, state: previous };
    await recordVmiEvents(this.#deps.kube, refused.size === 0 ? plan.events : eventsFor(context, state), now);
    const result: PassResult = {
      done: plan.done,
      progressed: refused.size === 0 ? plan.progressed : progressedBetween(previous, state),
      progress: plan.progress,
      blockers: plan.blockers,
      waiting: plan.waiting,
      detail: plan.detail,
      vms: vmMoves(state, now),
    };
    return { result, state, released: false };
  }

  /** What planning one pass reads: the node's VMs observed now, and the claims counted beside them. */
  async #observeAndPlanInput(
    request: PassInput['request'],
    previous: KubeVirtBranchState,
    now: Date,
    claims: ClaimsRead = { lease: undefined, claims: {} },
  ): Promise<PlanInput> {
    const { options } = this.#deps;
    const ownersOf = restartCandidates(options);
    const observation = await observeNode(this.#api, request.nodeName, {
      podSelector: request.drain.podSelector,
      ...(ownersOf ? { ownersOf } : {}),
    });
    return {
      requestId: request.requestId,
      nodeName: request.nodeName,
      observation,
      state: previous,
      options,
      now,
      claims: pendingClaims(claims.claims, observation.migrations, now),
    };
  }

  /**
   * Plans the pass. One that starts migrations (most passes only follow) claims their slots first
   * (claims.ts): it reads the claims, lists the migrations again, plans again and writes its claims
   * conditionally, so two evacuations never count the same free slot; a conflict means another pass
   * claimed in between: read, list and plan again. `withheld`: migrations not to create this pass, with
   * why (their slots could not be claimed). A round woken by a migration's end most likely starts the next:
   * it reads the claims first and lists once, so that the freed slot is taken after one listing, not two.
   */
  async #planAndClaim(
    request: PassInput['request'],
    previous: KubeVirtBranchState,
    now: Date,
    woken: boolean,
  ): Promise<Planned> {
    if (woken && this.#claims) return this.#planClaiming(request, previous, now, this.#claims);
    const plan = planPass(await this.#observeAndPlanInput(request, previous, now));
    if (plan.actions.length === 0) return { plan, withheld: NOTHING_WITHHELD };
    if (this.#claims && plan.actions.some((action) => action.kind === 'migrate'))
      return this.#planClaiming(request, previous, now, this.#claims);
    if (!(await this.#stillHeld(request))) return { plan, withheld: NOTHING_WITHHELD, released: true };
    return { plan, withheld: NOTHING_WITHHELD };
  }

  async #planClaiming(
    request: PassInput['request'],
    previous: KubeVirtBranchState,
    now: Date,
    claims: MigrationClaims,
  ): Promise<Planned> {
    for (let attempt = 1; ; attempt++) {
      const read = await claims.read(now);
      const input = await this.#observeAndPlanInput(request, previous, now, read);
      const plan = planPass(input);
      if (plan.actions.length === 0) return { plan, withheld: NOTHING_WITHHELD };
      if (!(await this.#stillHeld(request))) return { plan, withheld: NOTHING_WITHHELD, released: true };
      const claimed = await claim(claims, read, input, plan);
      if (claimed === 'claimed') return { plan, withheld: NOTHING_WITHHELD };
      if (claimed !== 'conflict') return { plan, withheld: withholding(plan, claimed) };
      if (attempt >= CLAIM_ATTEMPTS)
        return { plan, withheld: withholding(plan, 'other evacuations claimed migration slots at the same moment') };
    }
  }

  /** Whether the request still holds the node (read again right before starting migrations). */
  async #stillHeld(request: PassInput['request']): Promise<boolean> {
    const node = await readNodeOrFail(this.#deps.kube, request.nodeName);
    return readLedger(node).holds[request.requestId] !== undefined;
  }

  /**
   * Performs the actions (not the withheld ones); returns the refused ones (by VMI uid) with virt-api's or
   * the apiserver's words, or why they were withheld.
   */
  async #perform(
    actions: readonly KubeVirtAction[],
    withheld: ReadonlyMap<string, string>,
  ): Promise<Map<string, string>> {
    const refused = new Map<string, string>(withheld);
    for (const action of actions) {
      if (withheld.has(action.uid)) continue;
      try {
        if (action.kind === 'migrate') await this.#api.createMigration(migrationBody(action.migration));
        else await this.#api.evictLauncherPod(action.pod);
      } catch (error) {
        const refusal = refusalOf(error);
        if (!refusal) throw error;
        if (!refusal.adopted) refused.set(action.uid, refusal.message);
      }
    }
    return refused;
  }
}

interface Planned {
  readonly plan: KubeVirtPassPlan;
  readonly withheld: ReadonlyMap<string, string>;
  /** A Restore released the hold since this step's guard. */
  readonly released?: true;
}

const NOTHING_WITHHELD: ReadonlyMap<string, string> = new Map();

/** Claims the slots of the plan's migrations: 'claimed', 'conflict' (read again), or why it cannot. */
async function claim(
  claims: MigrationClaims,
  read: ClaimsRead,
  input: PlanInput,
  plan: KubeVirtPassPlan,
): Promise<'claimed' | 'conflict' | string> {
  const migrations = plan.actions.flatMap((action) => (action.kind === 'migrate' ? [action.migration] : []));
  if (migrations.length === 0) return 'claimed';
  if (read.unreadable) return `migration slots cannot be counted: ${read.unreadable}`;
  const added = Object.fromEntries(
    migrations.map((m) => [
      `${m.namespace}/${migrationName(m.requestId, m.vmiName, m.attempt)}`,
      { node: m.sourceNode, vmi: `${m.namespace}/${m.vmiName}`, at: input.now.toISOString() },
    ]),
  );
  return (await claims.write(read, added, input.observation.migrations, input.now)) ? 'claimed' : 'conflict';
}

/** The plan's migrations, each withheld for `why` (their slots could not be claimed). */
function withholding(plan: KubeVirtPassPlan, why: string): Map<string, string> {
  return new Map(plan.actions.flatMap((action) => (action.kind === 'migrate' ? [[action.uid, why] as const] : [])));
}

/** The progress with each refused action undone: the VMI waits, noting why (the next pass looks again). */
function corrected(
  state: KubeVirtBranchState,
  actions: readonly KubeVirtAction[],
  refused: ReadonlyMap<string, string>,
): KubeVirtBranchState {
  const vmis: Record<string, VmiProgress> = { ...state.vmis };
  for (const action of actions) {
    const message = refused.get(action.uid);
    if (message === undefined) continue;
    vmis[action.uid] = { ...action.unchanged, status: 'waiting', note: `refused: ${message}` };
  }
  return { vmis };
}
