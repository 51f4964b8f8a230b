/**
 * What flows through the forwarder, NTH's model: each source (cordon watcher, NodeMaintenance, later the
 * node agent's cloud notices) turns what it observes into normalised events; one publishing path (queue →
 * sink) puts them on the bus. Sources never talk to the bus themselves.
 */
import type { DetailByType, DetailType } from '../bus/contracts/contracts.ts';

/** One event a source wants on the bus. */
export interface ForwardedEvent<T extends DetailType = DetailType> {
  readonly detailType: T;
  readonly detail: DetailByType[T];
  /**
   * What the queue coalesces on: a newer event with the same key replaces an older one still waiting
   * (the cluster state is the durable copy; only the latest state of a subject matters), e.g.
   * `cordon/node-1`, `node-maintenance/<uid>`.
   */
  readonly key: string;
}

/** Told what happened to an event the source offered. */
export interface PublishReceipt {
  readonly event: ForwardedEvent;
  readonly outcome: 'published' | 'rejected' | 'dropped';
}

/** Where a source hands its events; the forwarder's publishing path implements it. */
export interface EventOutlet {
  offer(event: ForwardedEvent): void;
}

/**
 * An event source. It starts its watches at `start` (every replica keeps warm caches), but offers events
 * and writes to the cluster only while `leading` (the forwarder tells it through `lead`/`follow`).
 */
export interface ForwarderSource {
  readonly name: string;
  start(outlet: EventOutlet): Promise<void>;
  /** Caches are filled (for /readyz). */
  readonly synced: boolean;
  /** This replica now publishes: derive everything that should be on the bus from current state. */
  lead(): void;
  /** Another replica publishes: stop offering, forget what was offered. */
  follow(): void;
  /** Called for each event this source offered once the publishing path is done with it. */
  receipt?(receipt: PublishReceipt): void;
  stop(): Promise<void>;
}
