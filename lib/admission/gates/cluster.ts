/**
 * The cluster's own health, read from the API server: at most N NotReady nodes, no PodDisruptionBudget
 * stuck at zero allowed disruptions (beyond the node's own pods, whose budgets the drain waits on itself),
 * no other unhealthy node in the requested node's failure domain. Each verdict is pure over what was read.
 */
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { budgetsCovering } from '../../branches/pods/refusals.ts';
import type { GateSpecOf } from '../../model/gate-spec.ts';
import { blocked, type Gate, type GateVerdict, open } from './gate.ts';

export const DEFAULT_FAILURE_DOMAIN_KEY = 'topology.kubernetes.io/zone';
/** How long a budget may sit at zero before it blocks (its own pods restarting, a rollout) when `for` is unset. */
export const DEFAULT_PDB_AT_ZERO_SECONDS = 600;

const nameOf = (node: V1Node): string => node.metadata?.name ?? '';

function isReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

function listed(names: readonly string[], limit = 5): string {
  const more = names.length > limit ? `, … ${names.length - limit} more` : '';
  return `${names.slice(0, limit).join(', ')}${more}`;
}

/** More than `max` NotReady nodes besides the requested one blocks. */
export function notReadyVerdict(nodes: readonly V1Node[], requested: string, max: number): GateVerdict {
  const notReady = nodes.filter((node) => nameOf(node) !== requested && !isReady(node)).map(nameOf);
  if (notReady.length <= max) return open(`${notReady.length} other node(s) NotReady (at most ${max})`);
  return blocked(`${notReady.length} other node(s) NotReady (${listed(notReady)}); at most ${max}`);
}

/** Since when a budget has allowed no disruption: its DisruptionAllowed condition's last change; undefined when it allows one. */
function atZeroSince(pdb: V1PodDisruptionBudget): Date | 'unknown' | undefined {
  if ((pdb.status?.disruptionsAllowed ?? 0) > 0) return undefined;
  const condition = pdb.status?.conditions?.find((c) => c.type === 'DisruptionAllowed');
  if (condition?.status === 'True') return undefined;
  const since = condition?.lastTransitionTime;
  return since === undefined ? 'unknown' : new Date(since);
}

/**
 * A budget at zero for longer than `forSeconds` blocks, unless it covers a pod of the requested node: the
 * drain waits on that one itself (and names it as its blocker). A budget with no status yet, or no
 * DisruptionAllowed condition, is taken as at zero for an unknown time, and blocks.
 */
export function pdbVerdict(
  pdbs: readonly V1PodDisruptionBudget[],
  podsOnNode: readonly V1Pod[],
  at: { readonly now: Date; readonly forSeconds: number },
): GateVerdict {
  const stuck: string[] = [];
  for (const pdb of pdbs) {
    const since = atZeroSince(pdb);
    if (since === undefined) continue;
    if (since !== 'unknown' && at.now.getTime() - since.getTime() <= at.forSeconds * 1000) continue;
    if (podsOnNode.some((pod) => budgetsCovering(pod, [pdb]).length > 0)) continue;
    const namespace = pdb.metadata?.namespace ?? '';
    const age = since === 'unknown' ? 'for an unknown time' : `since ${since.toISOString()}`;
    stuck.push(`${namespace}/${pdb.metadata?.name ?? ''} (${age})`);
  }
  if (stuck.length === 0) return open(`no PodDisruptionBudget at zero for longer than ${at.forSeconds}s`);
  return blocked(`PodDisruptionBudget ${listed(stuck, 3)} allows no disruption for longer than ${at.forSeconds}s`);
}

/** Another node of the requested node's failure domain (same `key` value) NotReady or cordoned by someone else blocks. */
export function failureDomainVerdict(nodes: readonly V1Node[], requested: V1Node, key: string): GateVerdict {
  const domain = requested.metadata?.labels?.[key];
  if (domain === undefined) return open(`node ${nameOf(requested)} has no ${key} label`);
  const unhealthy = nodes
    .filter((node) => nameOf(node) !== nameOf(requested) && node.metadata?.labels?.[key] === domain)
    .filter((node) => !isReady(node))
    .map(nameOf);
  if (unhealthy.length === 0) return open(`every other node of ${key}=${domain} is Ready`);
  return blocked(`${key}=${domain} has NotReady node(s) ${listed(unhealthy)}`);
}

export function notReadyGate(spec: GateSpecOf<'not-ready-nodes'>, timeoutSeconds: number): Gate {
  return {
    name: spec.name ?? spec.kind,
    timeoutSeconds,
    async check({ client, node }) {
      return notReadyVerdict(await client.listNodes(), nameOf(node), spec.max);
    },
  };
}

export function pdbGate(spec: GateSpecOf<'pdbs-at-zero'>, timeoutSeconds: number): Gate {
  return {
    name: spec.name ?? spec.kind,
    timeoutSeconds,
    async check({ client, node, now }) {
      const [pdbs, pods] = await Promise.all([client.listPodDisruptionBudgets(), client.listPodsOnNode(nameOf(node))]);
      return pdbVerdict(pdbs, pods, { now, forSeconds: spec.for ?? DEFAULT_PDB_AT_ZERO_SECONDS });
    },
  };
}

export function failureDomainGate(spec: GateSpecOf<'failure-domain'>, timeoutSeconds: number): Gate {
  const key = spec.key ?? DEFAULT_FAILURE_DOMAIN_KEY;
  return {
    name: spec.name ?? spec.kind,
    timeoutSeconds,
    async check({ client, node }) {
      const domain = node.metadata?.labels?.[key];
      if (domain === undefined) return open(`node ${nameOf(node)} has no ${key} label`);
      return failureDomainVerdict(await client.listNodes(`${key}=${domain}`), node, key);
    },
  };
}
