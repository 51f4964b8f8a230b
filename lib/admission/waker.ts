/**
 * Wakes requests waiting in line when a slot frees: one watch of the Leases in drainbridge's namespace
 * (the admission Lease among a few), and for each new version of the admission Lease the wake-up plan
 * (lib/admission/wake.ts) — the tokens parked at the front of the line that a freed slot is owed to —
 * handed to `deliver` (the embedded executor's sendTaskSuccess in `drainbridge run`; Step Functions'
 * SendTaskSuccess on AWS). Only the leader delivers (followers keep their caches warm). A wake-up that
 * fails or never comes costs the wait's fallback, nothing else: no retry here.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeHttpClient } from '../clients/kube/http/client.ts';
import { ResilientInformer } from '../clients/kube/http/informer.ts';
import type { Logger } from '../log/logger.ts';
import { ADMISSION_LEASE_NAME, planWakeUps, type WakeWatch } from './wake-plan.ts';

export interface SlotWakerParts {
  readonly client: KubeHttpClient;
  readonly namespace: string;
  readonly logger: Logger;
  /** Sends one token back; resolves false when nobody waited with it (it woke already, or timed out). */
  readonly deliver: (token: string) => Promise<boolean> | boolean;
  /** Whether this replica delivers now (the leader); the watch runs either way. */
  readonly leading: () => boolean;
  readonly now?: () => Date;
  readonly watchTimeoutSeconds?: number;
}

export class SlotWaker {
  readonly leases: ResilientInformer<V1Lease>;
  readonly #parts: SlotWakerParts;
  #watch: WakeWatch | undefined;
  /** Tokens delivered and found waiting, and not (tests and the benchmark read them). */
  readonly delivered = { woken: 0, notWaiting: 0, failed: 0 };

  constructor(parts: SlotWakerParts) {
    this.#parts = parts;
    this.leases = new ResilientInformer<V1Lease>({
      resource: 'leases',
      path: `/apis/coordination.k8s.io/v1/namespaces/${parts.namespace}/leases`,
      client: parts.client,
      logger: parts.logger,
      ...(parts.watchTimeoutSeconds ? { watchTimeoutSeconds: parts.watchTimeoutSeconds } : {}),
    });
    this.leases.subscribe({
      onChange: (type, lease) => {
        if (lease.metadata?.name !== ADMISSION_LEASE_NAME) return;
        this.#observe(type === 'delete' ? undefined : lease);
      },
    });
  }

  start(): void {
    this.leases.start();
  }

  stop(): Promise<void> {
    return this.leases.stop();
  }

  #observe(lease: V1Lease | undefined): void {
    const now = this.#parts.now?.() ?? new Date();
    const { watch, tokens } = planWakeUps(this.#watch, lease, now);
    this.#watch = watch;
    if (!this.#parts.leading()) return;
    for (const token of tokens) void this.#deliver(token);
  }

  async #deliver(token: string): Promise<void> {
    try {
      if (await this.#parts.deliver(token)) this.delivered.woken++;
      else this.delivered.notWaiting++;
    } catch (error) {
      this.delivered.failed++;
      this.#parts.logger.warn('a wake-up could not be sent; the waiting request looks again at its fallback', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
