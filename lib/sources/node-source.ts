/**
 * What the cluster sources that watch nodes (cordon, reboot) share: the node informer, the leadership
 * term and the outlet, and their lifecycle — they offer only while leading, and on becoming leader and on
 * every full list they reconcile every node again. A source says what a node means to it (`reconcile`),
 * and adds what its own leading, following, stopping or a node's deletion need.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { ResilientInformer } from '../clients/kube/http/informer.ts';
import { LeadershipTerm } from './term.ts';
import type { EventOutlet, ForwarderSource, PublishReceipt } from './types.ts';

export abstract class NodeSource implements ForwarderSource {
  abstract readonly name: string;
  protected readonly nodes: ResilientInformer<V1Node>;
  protected readonly term = new LeadershipTerm();
  protected outlet: EventOutlet | undefined;

  constructor(nodes: ResilientInformer<V1Node>) {
    this.nodes = nodes;
  }

  get synced(): boolean {
    return this.nodes.synced;
  }

  async start(outlet: EventOutlet): Promise<void> {
    this.outlet = outlet;
    this.nodes.subscribe({
      onChange: (type, node) => {
        if (type === 'delete') this.forget(node);
        else if (this.term.leading) this.reconcile(node);
      },
      onList: () => this.#resync(),
    });
  }

  lead(): void {
    this.term.lead();
    this.#resync();
  }

  follow(): void {
    this.term.follow();
  }

  receipt(receipt: PublishReceipt): void {
    this.term.receipt(receipt);
  }

  async stop(): Promise<void> {
    this.term.stop();
  }

  /** What the source offers for this node as it is now (called only while leading). */
  protected abstract reconcile(node: V1Node): void;

  /** A node was deleted: nothing to offer; a source forgets what it kept for it. */
  protected forget(_node: V1Node): void {}

  #resync(): void {
    if (!this.term.leading) return;
    for (const node of this.nodes.list()) this.reconcile(node);
  }
}
