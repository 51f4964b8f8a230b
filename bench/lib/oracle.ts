/**
 * The oracle: a drain that cannot be beaten, to check the computed physical floor. It cordons the node
 * straight in the store, then every 20 ms reads the pods and the PodDisruptionBudgets' status from the
 * store and asks the eviction API (as the admin, so PDBs apply as for any tool) for every pod a budget
 * allows right now. It has no backoff and no polling interval worth the name, so its wall time is the
 * cluster's own: how long the evicted pods take to terminate and their replacements to become Ready.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { apiStatusOf } from '../../lib/clients/kube/errors.ts';
import { selectorMatches } from '../../lib/clients/kube/selectors.ts';
import type { DrainbridgeCluster } from '../../sim/drainbridge.ts';
import { budgetsIn, drainablePodsOn, type PodView } from './cluster-view.ts';
import type { FloorBudget } from './floor.ts';

const TICK_MS = 20;
const NODES = { group: '', resource: 'nodes' };

export interface OracleOutcome {
  readonly ok: boolean;
  readonly wallMs: number;
  readonly evictionsAccepted: number;
  readonly evictionsRefused: number;
  readonly failure: string;
  readonly timedOut: boolean;
  readonly endedAt: number;
}

/** The pods a budget allows now: unbudgeted ones, and as many under one budget as its status allows. */
function allowedNow(pods: readonly PodView[], budgets: readonly FloorBudget[]): PodView[] {
  const left = new Map(budgets.map((b) => [`${b.namespace}/${b.name}`, b.disruptionsAllowed]));
  return pods.filter((pod) => {
    const mine = budgets.filter(
      (b) => b.namespace === pod.metadata.namespace && selectorMatches(b.selector, pod.metadata.labels),
    );
    if (mine.length === 0) return true;
    const key = `${mine[0]?.namespace}/${mine[0]?.name}`;
    const allowance = left.get(key) ?? 0;
    if (mine.length > 1 || allowance <= 0) return false;
    left.set(key, allowance - 1);
    return true;
  });
}

async function evict(client: KubeClient, pod: PodView): Promise<'accepted' | 'refused'> {
  try {
    await client.evictPod(pod as unknown as V1Pod);
    return 'accepted';
  } catch (error) {
    if (apiStatusOf(error) === undefined) throw error;
    return 'refused';
  }
}

/** Drains `node` of `cluster` as fast as the cluster allows; never rejects. */
export async function runOracleDrain(
  cluster: DrainbridgeCluster,
  node: string,
  settings: { podSelector: string; timeoutMs: number },
): Promise<OracleOutcome> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.adminKubeconfigPath);
  const client = new KubeClient(kubeConfig, { retry: { attempts: 1 } });
  const { sim } = cluster;
  const started = performance.now();
  const accepted = new Set<string>();
  let refused = 0;
  const end = (failure: string, timedOut = false): OracleOutcome => ({
    ok: failure === '',
    wallMs: performance.now() - started,
    evictionsAccepted: accepted.size,
    evictionsRefused: refused,
    failure,
    timedOut,
    endedAt: Date.now(),
  });
  try {
    sim.store.mutate(NODES, { name: node }, (copy) => ({
      ...copy,
      spec: { ...(copy.spec as Record<string, unknown>), unschedulable: true },
    }));
    for (;;) {
      const pods = drainablePodsOn(sim, node, settings.podSelector);
      if (pods.length === 0) return end('');
      if (performance.now() - started > settings.timeoutMs)
        return end(`time limit of ${settings.timeoutMs / 1000} s reached`, true);
      const due = pods.filter((pod) => !accepted.has(pod.metadata.uid ?? '') && !pod.metadata.deletionTimestamp);
      const asked = allowedNow(due, budgetsIn(sim));
      const answers = await Promise.all(asked.map((pod) => evict(client, pod)));
      answers.forEach((answer, index) => {
        if (answer === 'accepted') accepted.add(asked[index]?.metadata.uid ?? '');
        else refused++;
      });
      await sleep(TICK_MS);
    }
  } catch (error) {
    return end(error instanceof Error ? error.message : String(error));
  }
}
