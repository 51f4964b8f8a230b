/**
 * The Nova branch of an evacuation as a reconcile pass: disable the source host's nova-compute
 * service (with drainbridge's ownership token in the reason), then pass by pass live-migrate its
 * servers within the concurrency limit until a fresh listing finds the host empty. Planning is in
 * planner.ts; this module reads, persists and performs effects.
 */

import type { LogSink } from '../../clients/openstack/keystone.ts';
import type { NovaClient, NovaService } from '../../clients/openstack/nova.ts';
import { EvacuationFailed } from '../../errors/index.ts';
import type { HostMapping } from '../../model/nova-host.ts';
import type {
  BranchProgress,
  PassFailure,
  PassInput,
  PassResult,
  ProgressStore,
  ReconcilePass,
} from '../../model/pass.ts';
import type { Blocker } from '../../model/plan.ts';
import type { ResolvedRequest } from '../../model/request.ts';
import { sameJson } from '../../util/same-json.ts';
import {
  DEFAULT_NOVA_OPTIONS,
  isOurDisable,
  NOVA_STATE_FORMAT,
  type NovaBranchState,
  type NovaEvacuationOptions,
  ownershipToken,
  type ServerProgress,
  withoutRequests,
  withServerTimelines,
} from './model.ts';
import { observeHost } from './observe.ts';
import { noComputeService } from './plan.ts';
import { failureBlocker, type NovaAction, type PassPlan, planPass } from './planner.ts';

/** The evacuation failed: servers whose attempts are exhausted, each named with Nova's reason. */
export class NovaEvacuationFailed extends EvacuationFailed {
  readonly blockers: readonly Blocker[];
  /** The branch's counts and blockers as they stood (the workflow records them: lib/model/pass.ts). */
  readonly passFailure: PassFailure;
  constructor(blockers: readonly Blocker[], progress: BranchProgress, message?: string) {
    super(message ?? `Nova evacuation failed: ${blockers.map((b) => b.reason).join('; ')}`);
    this.blockers = blockers;
    this.passFailure = { progress, blockers };
  }
}

export interface NovaEvacuationDeps {
  readonly nova: NovaClient;
  readonly store: ProgressStore;
  /** The Nova host of the request's node (lib/model/nova-host.ts); defaults to the node name. */
  readonly resolveHost?: (request: ResolvedRequest) => Promise<HostMapping>;
  readonly options?: Partial<NovaEvacuationOptions>;
  readonly logger?: LogSink;
  /** How long one pass goes on following its migrations (default: one round, return at once). */
  readonly wait?: NovaPassWait;
  /** How one pass waits between its rounds (tests may shorten it); setTimeout by default. */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * The blockers of the host's plan that refuse its evacuation (plan.ts: REFUSING_CODES, in `plan`'s
   * words), asked once, before the service is disabled; none when absent.
   */
  readonly refusal?: (host: string) => Promise<readonly Blocker[]>;
}

const NOTHING_MOVED: BranchProgress = { total: 0, moved: 0, inFlight: 0, skipped: 0 };

/** How long one pass may go on watching its migrations, and how often it looks (see NovaEvacuationPass.run). */
export interface NovaPassWait {
  /** At most this long per pass (0: one round, return at once). */
  readonly waitMs: number;
  /** A look at the in-flight migrations (and the host) every this many ms. */
  readonly pollMs: number;
}

/** One round of a pass: what it planned, the servers' progress after it acted, and whether a start was refused. */
interface Round {
  readonly plan: PassPlan;
  readonly servers: Record<string, ServerProgress>;
  readonly refused: boolean;
}

/** The branch's record as one pass holds it between rounds: the state, its version, and what was last written. */
interface PassRecord {
  readonly requestId: string;
  state: NovaBranchState;
  version: string | undefined;
  written: NovaBranchState | undefined;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The nova-compute service of a host; a host without one fails the evacuation (never skipped). */
export async function computeServiceOf(nova: NovaClient, host: string, how = ''): Promise<NovaService> {
  const [service] = await nova.listComputeServices(host);
  if (!service) {
    const blocker = noComputeService(host);
    throw new NovaEvacuationFailed([blocker], NOTHING_MOVED, `${blocker.reason}${how}: cannot evacuate it`);
  }
  return service;
}

export class NovaEvacuationPass implements ReconcilePass {
  readonly branch = 'nova' as const;
  readonly #deps: NovaEvacuationDeps;
  readonly #options: NovaEvacuationOptions;
  readonly #wait: NovaPassWait;

  constructor(deps: NovaEvacuationDeps) {
    this.#deps = deps;
    this.#options = { ...DEFAULT_NOVA_OPTIONS, ...deps.options };
    this.#wait = deps.wait ?? { waitMs: 0, pollMs: 1000 };
  }

  /**
   * Rounds of observe, plan and act. The first round runs at once; then, while a migration is in flight
   * and within `wait.waitMs`, the pass looks again every `wait.pollMs` and starts the next server the
   * moment a slot frees up — rather than returning and waiting out a Step Functions backoff that knows
   * nothing of when the migration ends (it made every migration a few seconds longer than Nova's own
   * time). Nova has no watch, so the pass polls; it is bounded well inside the function's timeout, and
   * before it starts anything after its first round it asks the workflow whether the request is still
   * wanted (a Restore or an abort meanwhile stops it).
   */
  async run(input: PassInput): Promise<PassResult> {
    const { store } = this.#deps;
    const requestId = input.request.requestId;
    const stored = await store.read(requestId, 'nova', NOVA_STATE_FORMAT);
    const state = await this.#ensureDisabled(stored?.state, input.request);
    const record: PassRecord = { requestId, state, version: stored?.version, written: stored?.state };
    const started = performance.now();
    const at = () => new Date(input.now.getTime() + (performance.now() - started));
    let round = await this.#round(record, input.now, undefined);
    let progressed = round.plan.progressed;
    const { waitMs, pollMs } = this.#wait;
    for (;;) {
      const result = this.#result(round.plan, round.servers, round.refused);
      const inFlight = result.progress.inFlight > 0;
      if (result.done || !inFlight || performance.now() - started + pollMs > waitMs) {
        return { ...result, progressed: progressed || result.progressed };
      }
      await (this.#deps.sleep ?? sleepFor)(pollMs);
      round = await this.#round(record, at(), input.stillWanted);
      progressed ||= round.plan.progressed;
    }
  }

  /**
   * One round. Writes the state only when it changed — and before it acts (intent first: a pass that dies
   * after starting a migration must not forget it started one). `stillWanted`: asked before a start in a
   * round after the first.
   */
  async #round(record: PassRecord, now: Date, stillWanted: (() => Promise<void>) | undefined): Promise<Round> {
    const { store, nova } = this.#deps;
    const observation = await observeHost(nova, record.state);
    const plan = planPass({
      sourceHost: record.state.host,
      servers: record.state.servers,
      observation,
      options: this.#options,
      now,
    });
    const starts = plan.actions.some((a) => a.kind === 'live-migrate' || a.kind === 'cold-migrate');
    if (starts && stillWanted) await stillWanted();
    // The timeline rides in the same writes: it changes only where a server's phase did.
    let servers = withServerTimelines(record.state.servers, await this.#prepareStarts(plan, now), now);
    const write = async () => {
      const next = { ...record.state, servers };
      if (!sameJson(next, record.written)) {
        record.version = await store.write(record.requestId, 'nova', next, record.version);
      }
      record.state = next;
      record.written = next;
    };
    await write();
    const refused = await this.#perform(plan.actions, servers);
    if (refused) {
      servers = withServerTimelines(servers, servers, now);
      await write();
    }
    return { plan, servers, refused };
  }

  /**
   * The Nova branch's prepare (the workflow's PrepareBranches step): find the node's host, refuse as
   * `plan` does when nothing could leave it (no service, no room elsewhere: NovaEvacuationFailed with the
   * plan's blockers, the service untouched), else disable its nova-compute service with drainbridge's
   * reason and record that for the passes. Idempotent (a re-run finds the state it wrote).
   */
  async prepare(
    request: ResolvedRequest,
  ): Promise<{ host: string; disabledByUs: boolean; foreignDisabledReason?: string }> {
    const stored = await this.#deps.store.read(request.requestId, 'nova', NOVA_STATE_FORMAT);
    if (!stored) await this.#refuseIfBlocked(request);
    const state = await this.#ensureDisabled(stored?.state, request);
    if (!stored) await this.#deps.store.write(request.requestId, 'nova', state, undefined);
    return {
      host: state.host,
      disabledByUs: state.disabledByUs,
      ...(state.foreignDisabledReason ? { foreignDisabledReason: state.foreignDisabledReason } : {}),
    };
  }

  #result(plan: PassPlan, servers: Record<string, ServerProgress>, refused: boolean): PassResult {
    const all = Object.values(servers);
    const inFlight = all.filter((p) => p.phase === 'live-migrating' || p.phase === 'cold-migrating').length;
    const failed = Object.entries(servers).filter(([, p]) => p.phase === 'failed');
    const failureBlockers = failed.map(([id, p]) => failureBlocker(id, p));
    const otherBlockers = plan.blockers.filter((b) => b.code !== 'MigrationFailed' && b.code !== 'NoValidHost');
    const canContinue = inFlight > 0 || plan.candidateIds.some((id) => servers[id]?.phase === 'pending');
    const progress = { total: all.length, moved: all.filter((p) => p.phase === 'moved').length, inFlight, skipped: 0 };
    if (failed.length > 0 && !canContinue) throw new NovaEvacuationFailed(failureBlockers, progress);
    return {
      done: plan.done && !refused,
      progressed: plan.progressed,
      progress,
      blockers: [...otherBlockers, ...failureBlockers],
    };
  }

  /** First pass: find the host's service. Every pass: make sure it is disabled (by us, or already by someone). */
  async #ensureDisabled(state: NovaBranchState | undefined, request: ResolvedRequest): Promise<NovaBranchState> {
    const { nova, logger } = this.#deps;
    const mapping = state ? { host: state.host, source: 'node-name' as const } : await this.#hostOf(request);
    const how =
      mapping.source === 'node-name'
        ? ` (node ${request.nodeName})`
        : ` (node ${request.nodeName}, from ${mapping.source})`;
    const service = await computeServiceOf(nova, mapping.host, how);
    const base: NovaBranchState = state ?? {
      host: mapping.host,
      serviceId: service.id,
      disabledByUs: false,
      servers: {},
    };
    if (service.status === 'disabled') {
      if (state) return base;
      // Our own disable from a pass that died before it could record it.
      if (isOurDisable(service.disabledReason, request.requestId)) return { ...base, disabledByUs: true };
      logger?.info('nova-compute service already disabled by someone else; it stays so', { host: mapping.host });
      return { ...base, ...(service.disabledReason ? { foreignDisabledReason: service.disabledReason } : {}) };
    }
    const reason = `${ownershipToken(request.requestId)} ${request.reason || 'node maintenance'} (node ${request.nodeName})`;
    await nova.disableService(service.id, reason);
    logger?.info('disabled nova-compute service', { host: mapping.host, reason });
    return { ...base, disabledByUs: true };
  }

  /** The plan's refusing blockers for the request's host, thrown before anything is done to it. */
  async #refuseIfBlocked(request: ResolvedRequest): Promise<void> {
    if (!this.#deps.refusal) return;
    const { host } = await this.#hostOf(request);
    const blockers = await this.#deps.refusal(host);
    if (blockers.length === 0) return;
    const words = blockers.map((b) => `[${b.code}] ${b.reason}`).join('; ');
    throw new NovaEvacuationFailed(
      blockers,
      NOTHING_MOVED,
      `Nova evacuation refused, nova-compute on host "${host}" left enabled: ${words}`,
    );
  }

  async #hostOf(request: ResolvedRequest): Promise<HostMapping> {
    return this.#deps.resolveHost ? this.#deps.resolveHost(request) : { host: request.nodeName, source: 'node-name' };
  }

  /** Records each start (attempt, clock, migration id high-water mark) before it is requested. */
  async #prepareStarts(plan: PassPlan, now: Date): Promise<Record<string, ServerProgress>> {
    const servers = { ...plan.servers };
    for (const action of plan.actions) {
      if (action.kind !== 'live-migrate' && action.kind !== 'cold-migrate') continue;
      const type = action.kind === 'live-migrate' ? 'live-migration' : 'migration';
      const previous = await this.#deps.nova.listMigrations(action.serverId, type);
      const current = servers[action.serverId];
      if (!current) continue;
      const { migrationId: _m, ...rest } = withoutRequests(current);
      servers[action.serverId] = {
        ...rest,
        phase: action.kind === 'live-migrate' ? 'live-migrating' : 'cold-migrating',
        attempts: current.attempts + 1,
        startedAt: now.toISOString(),
        sinceMigrationId: previous.at(-1)?.id ?? 0,
      };
    }
    return servers;
  }

  /** Performs the actions. A refused start fails that attempt (updated in `servers`); returns whether any was refused. */
  async #perform(actions: readonly NovaAction[], servers: Record<string, ServerProgress>): Promise<boolean> {
    let refused = false;
    for (const action of actions) {
      try {
        await this.#performOne(action);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.#deps.logger?.warn('Nova refused an action', {
          action: action.kind,
          serverId: action.serverId,
          error: message,
        });
        const current = servers[action.serverId];
        if (current && (action.kind === 'live-migrate' || action.kind === 'cold-migrate')) {
          const phase = current.attempts >= this.#options.maxAttempts ? 'failed' : 'pending';
          servers[action.serverId] = { ...current, phase, lastFailure: message };
          refused = true;
        }
      }
    }
    return refused;
  }

  async #performOne(action: NovaAction): Promise<void> {
    const { nova, logger } = this.#deps;
    logger?.info('nova action', { action: action.kind, serverId: action.serverId });
    switch (action.kind) {
      case 'live-migrate':
        return nova.liveMigrate(action.serverId);
      case 'cold-migrate':
        return nova.coldMigrate(action.serverId);
      case 'confirm':
        return nova.confirmResize(action.serverId);
      case 'abort':
        return nova.abortMigration(action.serverId, action.migrationId);
      case 'force-complete':
        return nova.forceCompleteMigration(action.serverId, action.migrationId);
    }
  }
}
