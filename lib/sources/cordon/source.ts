/**
 * The cordon source: watches nodes (the shared node informer) and offers `Node Cordoned` /
 * `Node Uncordoned` as decide.ts decides, while this replica leads. What it offered is remembered for the
 * leadership term only, to send each event once; a new leader (or a restarted one) derives everything
 * again from the nodes — a repeat is a duplicate with the same requestId, which the workflow drops.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { ResilientInformer } from '../../clients/kube/http/informer.ts';
import type { Logger } from '../../log/logger.ts';
import { NodeSource } from '../node-source.ts';
import { type CordonSelection, planCordon } from './decide.ts';

export class CordonSource extends NodeSource {
  readonly name = 'cordon';
  readonly #selection: CordonSelection;
  readonly #logger: Logger;
  readonly #now: () => Date;
  /** The cordon requestId offered per node this term (kept until its uncordon is offered). */
  readonly #remembered = new Map<string, string>();

  constructor(nodes: ResilientInformer<V1Node>, selection: CordonSelection, logger: Logger, now = () => new Date()) {
    super(nodes);
    this.#selection = selection;
    this.#logger = logger;
    this.#now = now;
  }

  override follow(): void {
    super.follow();
    this.#remembered.clear();
  }

  protected override forget(node: V1Node): void {
    this.#remembered.delete(node.metadata?.name ?? '');
  }

  protected reconcile(node: V1Node): void {
    const nodeName = node.metadata?.name ?? '';
    const plan = planCordon(node, this.#selection, this.#remembered.get(nodeName));
    const observedAt = this.#now().toISOString();
    if (plan.cordoned) {
      this.#remembered.set(nodeName, plan.cordoned.requestId);
      this.#offer('Node Cordoned', nodeName, plan.cordoned, observedAt);
    }
    for (const request of plan.uncordoned) {
      this.#remembered.delete(nodeName);
      this.#offer('Node Uncordoned', nodeName, request, observedAt);
    }
  }

  #offer(
    detailType: 'Node Cordoned' | 'Node Uncordoned',
    nodeName: string,
    request: { requestId: string; requester: string },
    observedAt: string,
  ): void {
    if (!this.term.offerOnce(detailType, request.requestId)) return;
    this.#logger.info(
      detailType === 'Node Cordoned' ? 'node cordoned: evacuation requested' : 'node uncordoned: maintenance ends',
      {
        node: nodeName,
        requestId: request.requestId,
        requester: request.requester,
      },
    );
    this.outlet?.offer({
      detailType,
      key: `cordon/${nodeName}/${request.requestId}`,
      detail: {
        version: '1',
        requestId: request.requestId,
        requester: request.requester,
        target: { nodeName },
        observedAt,
      },
    });
  }
}
