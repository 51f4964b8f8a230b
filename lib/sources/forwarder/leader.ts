/**
 * Leader election on a coordination.k8s.io Lease, as client-go's leaderelection does it: the leader
 * renews `renewTime` every `renewEveryMs`; a candidate takes the Lease over when its record has not
 * changed for `leaseDurationMs` by the candidate's own clock (so clock skew between replicas does not
 * matter); every write is conditional on the Lease's resourceVersion, so two candidates cannot both win.
 * A leader that cannot renew within `renewDeadlineMs` of its last renewal steps down at that moment —
 * a renewal in flight is cut off there, however long the API server takes — so it has stopped before
 * its Lease can expire elsewhere. On a graceful stop the leader releases the Lease (empty holder), and a
 * candidate takes it at its next read.
 *
 * What a candidate guarantees: it reads the Lease every `retryEveryMs`, so it sees a leader's last
 * renewal at most one retry period after it was written, and it reads again exactly when that record
 * has stood unchanged for a lease duration. A leader that dies is therefore replaced within
 * `leaseDurationMs + retryEveryMs` of its death (plus the two requests of the takeover), never sooner
 * than `leaseDurationMs` after its last renewal.
 *
 * Requests: the leader sends one conditional update per renewal (no read); a candidate reads the Lease
 * every `retryEveryMs`.
 */
import type { V1Lease } from '@kubernetes/client-node';
import { deadline } from '../../clients/kube/http/signals.ts';
import { createLease, type LeaseCalls, readLease, updateLease } from '../../clients/kube/lease.ts';
import { ConflictError } from '../../errors/index.ts';
import type { Logger } from '../../log/logger.ts';

export interface LeaderElectionOptions {
  readonly client: LeaseCalls;
  readonly namespace: string;
  readonly name: string;
  /** This replica's identity (pod name + a per-process suffix). */
  readonly identity: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly renewEveryMs?: number;
  readonly retryEveryMs?: number;
  readonly logger: Logger;
  readonly onStartedLeading: (previousHolder: string | undefined) => void;
  readonly onStoppedLeading: () => void;
  readonly now?: () => number;
}

export interface ElectionTimings {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly renewEveryMs: number;
  readonly retryEveryMs: number;
}

/**
 * The timings for a lease duration, in client-go's proportions: renew every third of it, step down after
 * two thirds without a renewal, candidates read about seven times per duration (at least 0.5 s apart).
 * 15 s → renew every 5 s, step down after 10 s, read every ≈ 2.1 s: a dead leader is replaced within ≈ 17 s.
 */
export function electionTimings(leaseDurationMs: number): ElectionTimings {
  return {
    leaseDurationMs,
    renewDeadlineMs: Math.round(leaseDurationMs * (2 / 3)),
    renewEveryMs: Math.round(leaseDurationMs / 3),
    retryEveryMs: Math.max(500, Math.round(leaseDurationMs / 7)),
  };
}

/** The longest a dead leader stays unreplaced: a lease duration plus a retry period (the takeover's two requests aside). */
export function takeoverBoundMs(timings: Pick<ElectionTimings, 'leaseDurationMs' | 'retryEveryMs'>): number {
  return timings.leaseDurationMs + timings.retryEveryMs;
}

export const LEADER_DEFAULTS: ElectionTimings = electionTimings(15_000);

/** What the candidate last saw of the Lease and when (its own clock). */
interface Observation {
  readonly holder: string;
  readonly renewTime: string;
  readonly at: number;
  /** The holder's lease duration as the record states it. */
  readonly durationMs: number;
}

const holderOf = (lease: V1Lease | undefined): string => lease?.spec?.holderIdentity ?? '';
const timeText = (value: unknown): string => (value instanceof Date ? value.toISOString() : String(value ?? ''));

export class LeaderElector {
  readonly #o: LeaderElectionOptions & ElectionTimings;
  #lease: V1Lease | undefined;
  #observed: Observation | undefined;
  #leading = false;
  /** onStartedLeading was called for the current term. */
  #announced = false;
  #lastRenew = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;
  #running: Promise<void> = Promise.resolve();
  /** The last tick's Lease request failed (a leader then tries again after a retry period, not a renew period). */
  #failed = false;
  /** Cancels the Lease request in flight when stopping. */
  #cancel = new AbortController();

  constructor(options: LeaderElectionOptions) {
    this.#o = { ...LEADER_DEFAULTS, ...options } as LeaderElectionOptions & ElectionTimings;
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  get identity(): string {
    return this.#o.identity;
  }

  #now(): number {
    return this.#o.now?.() ?? Date.now();
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#cancel = new AbortController();
    this.#schedule(0);
  }

  /**
   * Stops campaigning (a Lease request in flight is cancelled); a leader releases the Lease so another
   * replica takes over at once — trying for at most `releaseWithinMs`, else the Lease expires on its own.
   */
  async stop(releaseWithinMs = 5_000): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#cancel.abort();
    await this.#running;
    const lease = this.#lease;
    const held = this.#leading && lease !== undefined;
    this.#stepDown();
    if (!held || !lease) return;
    const limit = deadline([], Math.max(1, releaseWithinMs));
    try {
      await updateLease(
        this.#o.client,
        this.#o.namespace,
        {
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new Date(this.#now()) },
        },
        { signal: limit.signal },
      );
    } catch (error) {
      this.#o.logger.warn('could not release the leader Lease; it expires on its own', { error: String(error) });
    } finally {
      limit.release();
    }
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#tick().finally(() => this.#schedule(this.#nextDelay()));
    }, delayMs);
  }

  /**
   * When to act next. A leader renews every renew period — after a failed request every retry period —
   * and never later than its renew deadline (where it steps down). A candidate reads every retry period,
   * and exactly when the record it watches has stood unchanged for a lease duration.
   */
  #nextDelay(): number {
    const now = this.#now();
    if (this.#leading) {
      const nominal = this.#failed ? this.#o.retryEveryMs : this.#o.renewEveryMs;
      return Math.max(0, Math.min(nominal, this.#lastRenew + this.#o.renewDeadlineMs - now));
    }
    const observed = this.#observed;
    if (!observed?.holder || observed.holder === this.#o.identity) return this.#o.retryEveryMs;
    const expiresIn = observed.at + observed.durationMs - now;
    return expiresIn > 0 ? Math.min(this.#o.retryEveryMs, expiresIn) : this.#o.retryEveryMs;
  }

  async #tick(): Promise<void> {
    // A leader's requests end at its renew deadline, however long the API server takes to answer.
    const limit = this.#leading
      ? deadline([this.#cancel.signal], Math.max(1, this.#lastRenew + this.#o.renewDeadlineMs - this.#now()))
      : undefined;
    const calls = { signal: limit?.signal ?? this.#cancel.signal };
    try {
      if (this.#leading) await this.#renew(calls);
      else await this.#tryAcquire(calls);
      this.#failed = false;
    } catch (error) {
      if (this.#stopped) return;
      this.#failed = true;
      this.#o.logger.warn('leader election: Lease request failed', { error: String(error), leading: this.#leading });
      this.#lease = undefined;
    } finally {
      limit?.release();
    }
    if (this.#leading && this.#now() - this.#lastRenew >= this.#o.renewDeadlineMs) {
      this.#o.logger.error('leader election: could not renew the Lease in time; stepping down', {
        lease: this.#o.name,
      });
      this.#stepDown();
    }
  }

  #record(renewTime: Date, transitions: number, acquire: boolean): V1Lease {
    const current = this.#lease;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...current?.metadata, name: this.#o.name, namespace: this.#o.namespace },
      spec: {
        ...current?.spec,
        holderIdentity: this.#o.identity,
        leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
        renewTime,
        ...(acquire ? { acquireTime: renewTime, leaseTransitions: transitions } : {}),
      },
    };
  }

  async #renew(calls: { signal: AbortSignal }): Promise<void> {
    if (!this.#lease) {
      // After a failed request the last known version is unknown: read before writing.
      this.#lease = await readLease(this.#o.client, this.#o.namespace, this.#o.name, calls);
      if (holderOf(this.#lease) !== this.#o.identity) {
        this.#stepDown();
        return;
      }
    }
    // Counted from before the write: the record others time out from is at least this recent.
    const sentAt = this.#now();
    try {
      this.#lease = await updateLease(
        this.#o.client,
        this.#o.namespace,
        this.#record(new Date(sentAt), 0, false),
        calls,
      );
      this.#lastRenew = sentAt;
    } catch (error) {
      if (error instanceof ConflictError) {
        // Someone else wrote the Lease: read it and see whether it is still ours.
        this.#lease = await readLease(this.#o.client, this.#o.namespace, this.#o.name, calls);
        if (holderOf(this.#lease) !== this.#o.identity) this.#stepDown();
        return;
      }
      throw error;
    }
  }

  async #tryAcquire(calls: { signal: AbortSignal }): Promise<void> {
    const lease = await readLease(this.#o.client, this.#o.namespace, this.#o.name, calls);
    this.#lease = lease;
    const now = this.#now();
    const holder = holderOf(lease);
    const renewTime = timeText(lease?.spec?.renewTime);
    const durationMs = (lease?.spec?.leaseDurationSeconds ?? 0) * 1000;
    if (!this.#observed || this.#observed.holder !== holder || this.#observed.renewTime !== renewTime) {
      this.#observed = { holder, renewTime, at: now, durationMs };
    }
    if (holder && holder !== this.#o.identity && now < this.#observed.at + durationMs) return;
    const transitions = (lease?.spec?.leaseTransitions ?? 0) + (holder === this.#o.identity ? 0 : 1);
    const sentAt = this.#now();
    const record = this.#record(new Date(sentAt), transitions, true);
    try {
      this.#lease = lease
        ? await updateLease(this.#o.client, this.#o.namespace, record, calls)
        : await createLease(this.#o.client, this.#o.namespace, record, calls);
    } catch (error) {
      if (error instanceof ConflictError) return; // another candidate won this round
      throw error;
    }
    this.#lastRenew = sentAt;
    this.#leading = true;
    // Won while stopping: stop() releases it; nobody is told to lead.
    if (this.#stopped) return;
    this.#o.logger.info('leader election: this replica leads', {
      lease: this.#o.name,
      previousHolder: holder || undefined,
    });
    this.#announced = true;
    this.#o.onStartedLeading(holder && holder !== this.#o.identity ? holder : undefined);
  }

  #stepDown(): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#observed = undefined;
    if (this.#announced) this.#o.onStoppedLeading();
    this.#announced = false;
  }
}
