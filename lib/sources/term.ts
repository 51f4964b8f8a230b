/**
 * What a cluster source (cordon, NodeMaintenance, reboot) keeps for one leadership term: whether this
 * replica leads, and which events it offered, so that each goes out once per term. A receipt other than
 * `published` (refused, dropped) lets that event be offered again. A new term starts empty: the new
 * leader derives everything again from the cluster, and a repeat is a duplicate with the same requestId,
 * which the workflow drops. The source keeps the rest of its lifecycle (what leading starts, what
 * stopping waits for).
 */
import type { DetailType } from '../bus/contracts/contracts.ts';
import type { PublishReceipt } from './types.ts';

export class LeadershipTerm {
  #leading = false;
  /** `detail-type requestId` of what was offered this term and not refused or dropped. */
  readonly #offered = new Set<string>();

  get leading(): boolean {
    return this.#leading;
  }

  lead(): void {
    this.#leading = true;
  }

  /** Leadership lost: nothing offered in the old term counts any more. */
  follow(): void {
    this.#leading = false;
    this.#offered.clear();
  }

  stop(): void {
    this.#leading = false;
  }

  /** Notes the event as offered this term; false when it already was (then it is not offered again). */
  offerOnce(detailType: DetailType, requestId: string): boolean {
    const mark = `${detailType} ${requestId}`;
    if (this.#offered.has(mark)) return false;
    this.#offered.add(mark);
    return true;
  }

  receipt(receipt: PublishReceipt): void {
    if (receipt.outcome !== 'published')
      this.#offered.delete(`${receipt.event.detailType} ${receipt.event.detail.requestId}`);
  }
}
