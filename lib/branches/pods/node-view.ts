/**
 * What one eviction pass reads of the cluster, read once and then kept current by watches while the pass
 * waits: the node's pods (listed as kubectl lists them), the PodDisruptionBudgets (listed when a pod is
 * due) and the node itself (its ledger says whether the request still holds it). A pass that waits for
 * pods to leave or for a budget to allow more wakes on the event that it waits for instead of sleeping
 * out a Step Functions backoff, and asks the apiserver nothing between rounds but the evictions.
 */
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { KubeClient } from '../../clients/kube/client.ts';
import { ChangeSignal, WatchedList } from '../../clients/kube/watched-list.ts';
import type { DrainOptions } from '../../model/request.ts';
import { isHeld, ledgerOf } from '../../node/ledger.ts';
import { daemonSetState } from './observe.ts';
import { daemonSetsToCheck } from './selection.ts';

/** Whether a PDB event can let a held pod go: it allows a disruption now. */
const allowsDisruption = (type: string, pdb: V1PodDisruptionBudget): boolean =>
  type !== 'DELETED' && (pdb.status?.disruptionsAllowed ?? 0) > 0;

export class NodeView {
  readonly #client: KubeClient;
  readonly #nodeName: string;
  readonly #options: DrainOptions;
  readonly #signal = new ChangeSignal();
  readonly #daemonSets = new Map<string, boolean | string>();
  #pods: WatchedList<V1Pod> | undefined;
  #budgets: WatchedList<V1PodDisruptionBudget> | undefined;
  #node: WatchedList<V1Node> | undefined;
  #watching = false;
  /** How long the server keeps each watch open: the wait's bound and a margin. */
  #watchSeconds = 0;

  constructor(client: KubeClient, node: V1Node, options: DrainOptions) {
    this.#client = client;
    this.#nodeName = node.metadata?.name ?? '';
    this.#options = options;
    // An uncordon while the pass waits and the node is still held (someone else's uncordon) ends the
    // wait: only a pass's start records and reports it, and a deadline that passed meanwhile would end
    // the request before any pass saw it. (A release that uncordons only wakes it: the round then sees
    // the hold gone and stops.)
    let cordoned = node.spec?.unschedulable === true;
    const uncordonedWhileHeld = (_type: string, seen: V1Node): boolean => {
      const was = cordoned;
      cordoned = seen.spec?.unschedulable === true;
      const read = ledgerOf(seen);
      return was && !cordoned && read.status === 'ok' && isHeld(read.ledger);
    };
    this.#node = new WatchedList<V1Node>(
      [node],
      node.metadata?.resourceVersion ?? '',
      {
        path: '/api/v1/nodes',
        query: { fieldSelector: `metadata.name=${this.#nodeName}` },
        wakes: () => true,
        ends: uncordonedWhileHeld,
      },
      this.#signal,
    );
  }

  /** Lists the node's pods (the first round) or returns them as the watch last saw them. */
  async pods(): Promise<readonly V1Pod[]> {
    if (!this.#pods) {
      const listed = await this.#client.listPodsOnNodeAt(this.#nodeName, {
        labelSelector: this.#options.podSelector,
        chunkSize: this.#options.chunkSize,
      });
      const query: Record<string, string> = { fieldSelector: `spec.nodeName=${this.#nodeName}` };
      if (this.#options.podSelector) query.labelSelector = this.#options.podSelector;
      this.#pods = new WatchedList(
        listed.items,
        listed.resourceVersion,
        {
          path: '/api/v1/pods',
          query,
          wakes: (type) => type === 'DELETED' || type === 'ADDED',
        },
        this.#signal,
      );
    }
    const pods = this.#pods.items();
    await this.#lookUpDaemonSets(pods);
    return pods;
  }

  /** Every PDB: listed on first use, then as the watch last saw them. */
  async budgets(): Promise<readonly V1PodDisruptionBudget[]> {
    if (!this.#budgets) {
      const listed = await this.#client.listPodDisruptionBudgetsAt();
      this.#budgets = new WatchedList(
        listed.items,
        listed.resourceVersion,
        { path: '/apis/policy/v1/poddisruptionbudgets', query: {}, wakes: allowsDisruption },
        this.#signal,
      );
      if (this.#watching) await this.#budgets.start(this.#client.kubeConfig, this.#watchSeconds);
    }
    return this.#budgets.items();
  }

  /** The node as last seen. */
  node(): V1Node | undefined {
    return this.#node?.items()[0];
  }

  /** For the daemonSet filter: true, false (404) or the lookup error's message (looked up once per pass). */
  readonly daemonSetExists = (namespace: string, name: string): boolean | string =>
    this.#daemonSets.get(`${namespace}/${name}`) ?? false;

  /**
   * Waits up to `ms` for what the pass waits on (a pod left or arrived, a budget allows a disruption, the
   * node changed); the first call opens the watches, within the same `ms`, to last `watchMs` (the whole
   * wait of the pass; default `ms`). False after `ms`, or when a watch ended, failed or did not open
   * (`ended` then says so: the views may be stale and the pass must return).
   */
  async changed(ms: number, watchMs = ms): Promise<boolean> {
    const until = performance.now() + ms;
    if (!this.#watching) {
      this.#watching = true;
      this.#watchSeconds = watchMs / 1000 + 5;
      const lists = [this.#pods, this.#budgets, this.#node].filter((list) => list !== undefined);
      // Each open is bounded (a hung one ends the signal); the wait's bound counts the time they took.
      await Promise.all(lists.map((list) => list.start(this.#client.kubeConfig, this.#watchSeconds)));
    }
    return this.#signal.changed(until - performance.now());
  }

  /** A watch ended, failed or did not open: what the views show may be stale. */
  get ended(): boolean {
    return this.#signal.ended;
  }

  /** Ends every watch. */
  close(): void {
    for (const list of [this.#pods, this.#budgets, this.#node]) list?.close();
  }

  async #lookUpDaemonSets(pods: readonly V1Pod[]): Promise<void> {
    for (const { namespace, name } of daemonSetsToCheck(pods)) {
      const key = `${namespace}/${name}`;
      if (!this.#daemonSets.has(key)) this.#daemonSets.set(key, await daemonSetState(this.#client, namespace, name));
    }
  }
}
