/**
 * Topology spread, decided purely: at most MAX held nodes per distinct value of a label key (one per zone,
 * for every zone), and never fewer than MIN schedulable nodes left in a pool. Both bind only the nodes
 * they name: a node without the key, or outside the pool's selector, is not held back by them.
 */
import { type Labels, matchesAll, parseSelector } from '../clients/kube/selectors.ts';

/** At most `max` held nodes share each value of label `key` (`topology.kubernetes.io/zone=1`). */
export interface SpreadLimit {
  readonly key: string;
  readonly max: number;
}

/** At least `min` nodes matching `selector` stay schedulable (not cordoned, Ready). */
export interface MinSchedulable {
  readonly selector: string;
  readonly min: number;
}

/** A node of a pool as read at admission: whether it takes new pods now. */
export interface PoolNode {
  readonly name: string;
  readonly labels: Labels;
  /** Not cordoned and Ready. */
  readonly schedulable: boolean;
}

export interface SpreadFacts {
  readonly node: string;
  readonly heldNodes: readonly string[];
  readonly labelsOf?: (node: string) => Labels;
  readonly spreadLimits?: readonly SpreadLimit[];
  readonly minSchedulable?: readonly MinSchedulable[];
  /** Every node matching a `minSchedulable` selector, as read (the requested one included). */
  readonly pool?: readonly PoolNode[];
}

/**
 * The first spread limit that admitting `node` would break, as a sentence (`zone zone-a already has 1 node
 * in maintenance (node-3)`); undefined when none. Another request's hold on the same node costs nothing:
 * planAdmission admits a node already held before it asks here.
 */
export function brokenSpreadLimit(facts: SpreadFacts): string | undefined {
  const labelsOf: (node: string) => Labels = facts.labelsOf ?? (() => ({}));
  const mine = labelsOf(facts.node);
  for (const limit of facts.spreadLimits ?? []) {
    const value = mine[limit.key];
    if (value === undefined) continue;
    const held = [...new Set(facts.heldNodes)].filter(
      (name) => name !== facts.node && labelsOf(name)[limit.key] === value,
    );
    if (held.length >= limit.max) {
      return `${limit.key}=${value} already has ${held.length} node(s) in maintenance (${held.join(', ')}); at most ${limit.max} per ${limit.key} (DRAINBRIDGE_SPREAD_LIMITS)`;
    }
  }
  return undefined;
}

/**
 * The first pool that admitting `node` would leave with fewer than its minimum of schedulable nodes, as a
 * sentence; undefined when none. Only a node that is schedulable now lowers the count: one already
 * cordoned (by someone else) or NotReady takes no capacity away when it is drained. Held nodes and those
 * being admitted now (`heldNodes`) count as gone, even before their cordon lands.
 */
export function brokenMinimum(facts: SpreadFacts): string | undefined {
  const pool = facts.pool ?? [];
  const requested = pool.find((node) => node.name === facts.node);
  if (!requested?.schedulable) return undefined;
  const held = new Set(facts.heldNodes);
  for (const rule of facts.minSchedulable ?? []) {
    const requirements = parseSelector(rule.selector);
    if (!matchesAll(requirements, requested.labels)) continue;
    const remaining = pool.filter(
      (node) =>
        node.schedulable && node.name !== facts.node && !held.has(node.name) && matchesAll(requirements, node.labels),
    );
    if (remaining.length < rule.min) {
      return `only ${remaining.length} schedulable node(s) would remain in pool "${rule.selector}" (${remaining.map((node) => node.name).join(', ') || 'none'}); at least ${rule.min} must stay (DRAINBRIDGE_MIN_SCHEDULABLE)`;
    }
  }
  return undefined;
}
