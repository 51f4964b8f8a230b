/**
 * The safety invariants every fault scenario asserts (docs/safety.md), checked from what the simulated
 * cluster saw — its store and its request log — never from drainbridge's own account:
 *
 *   1. no VM shut down or lost: every VirtualMachineInstance present at the start still runs, and
 *      drainbridge never evicted or deleted a virt-launcher pod;
 *   2. no pod deleted where eviction was possible: drainbridge sent no pod DELETE (unless the scenario
 *      opted into --disable-eviction);
 *   3. no more nodes held than the limit, at any moment: nodes whose ledger holds a request (or cannot be
 *      read), and nodes whose cordon drainbridge wrote (managedFields), watched on every change;
 *   4. nodes left in the safe state: a node drainbridge holds is cordoned (unless someone uncordoned it
 *      and that was recorded); a node drainbridge holds no longer and that was schedulable at the start is
 *      schedulable again unless someone else cordoned it;
 *   5. the outcome names the cause (checked by each scenario with `expectOutcome`).
 *
 * A violation throws InvariantViolation (listing every broken invariant), which the summary reporter
 * counts as "violated" rather than as a harness failure.
 */
import type { Simulator } from '../../sim/index.ts';
import type { KubeObject } from '../../sim/store/types.ts';
import { DRAINBRIDGE_SA } from './request-log.ts';

export class InvariantViolation extends Error {
  readonly violations: readonly string[];
  constructor(violations: readonly string[]) {
    super(`safety invariant(s) violated:\n  - ${violations.join('\n  - ')}`);
    this.name = 'InvariantViolation';
    this.violations = violations;
  }
}

const NODES = { group: '', resource: 'nodes' };
const VMIS = { group: 'kubevirt.io', resource: 'virtualmachineinstances' };
const LEDGER = 'drainbridge.io/ledger';

/** Read independently of drainbridge's reader: held when the ledger has a hold or cannot be parsed. */
export function ledgerHolds(node: KubeObject): 'none' | 'held' | 'unreadable' {
  const text = node.metadata.annotations?.[LEDGER];
  if (!text) return 'none';
  try {
    const ledger = JSON.parse(text) as { holds?: unknown };
    if (typeof ledger?.holds !== 'object' || ledger.holds === null || Array.isArray(ledger.holds)) return 'unreadable';
    return Object.keys(ledger.holds).length > 0 ? 'held' : 'none';
  } catch {
    return 'unreadable';
  }
}

/** Whether drainbridge's field manager wrote the node's current cordon (managedFields). */
function cordonedByDrainbridge(node: KubeObject): boolean {
  if ((node.spec as { unschedulable?: boolean } | undefined)?.unschedulable !== true) return false;
  const entries = (node.metadata.managedFields ?? []) as { manager?: string; fieldsV1?: unknown }[];
  const owner = entries.find((e) => JSON.stringify(e.fieldsV1 ?? {}).includes('"f:unschedulable"'));
  return owner?.manager === 'drainbridge';
}

function outOfBandRecorded(node: KubeObject): boolean {
  try {
    return Boolean(JSON.parse(node.metadata.annotations?.[LEDGER] ?? '{}').outOfBandUncordonAt);
  } catch {
    return false;
  }
}

const unschedulable = (node: KubeObject): boolean =>
  (node.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;

export interface InvariantOptions {
  /** DRAINBRIDGE_MAX_HELD_NODES of the run. */
  readonly maxHeldNodes: number;
  /** The scenario opted into --disable-eviction: pod DELETEs are what was asked for. */
  readonly deletesAllowed?: boolean;
  /** Nodes a person (the scenario) cordoned or uncordoned on purpose: their cordon is theirs to judge. */
  readonly touchedByPeople?: readonly string[];
}

export interface WatchedRun {
  /** The most nodes held at once, and when (request-log seq). */
  readonly maxHeld: number;
  readonly maxCordonedByDrainbridge: number;
  /** Checks every invariant now; throws InvariantViolation listing each one broken. */
  assertHeld(extra?: { touchedByPeople?: readonly string[] }): void;
  /** The violations, without throwing. */
  violations(extra?: { touchedByPeople?: readonly string[] }): string[];
  stop(): void;
}

/** Starts watching a run on `sim`: call before the scenario acts, `assertHeld()` at its end. */
export function watchInvariants(sim: Simulator, options: InvariantOptions): WatchedRun {
  const mark = sim.requestLog.mark();
  const schedulableAtStart = new Set(
    sim.store
      .list(NODES)
      .items.filter((n) => !unschedulable(n))
      .map((n) => n.metadata.name ?? ''),
  );
  const vmisAtStart = vmiNames(sim);
  const peak = { held: 0, cordoned: 0, heldNames: [] as string[], cordonedNames: [] as string[] };
  const sample = () => {
    const nodes = sim.store.list(NODES).items;
    const held = nodes.filter((n) => ledgerHolds(n) !== 'none').map((n) => n.metadata.name ?? '');
    const cordoned = nodes.filter(cordonedByDrainbridge).map((n) => n.metadata.name ?? '');
    if (held.length > peak.held) Object.assign(peak, { held: held.length, heldNames: held });
    if (cordoned.length > peak.cordoned) Object.assign(peak, { cordoned: cordoned.length, cordonedNames: cordoned });
  };
  sample();
  // Every change to a node is an event here, in order: the peak is exact, not sampled on a timer.
  const watch = sim.store.watch(NODES, { resourceVersion: sim.store.currentResourceVersion() }, sample);

  const violations = (extra: { touchedByPeople?: readonly string[] } = {}): string[] => {
    const people = new Set([...(options.touchedByPeople ?? []), ...(extra.touchedByPeople ?? [])]);
    return [
      ...vmViolations(sim, mark, vmisAtStart),
      ...deleteViolations(sim, mark, options),
      ...limitViolations(peak, options.maxHeldNodes),
      ...safeStateViolations(sim, schedulableAtStart, people),
    ];
  };
  return {
    get maxHeld() {
      return peak.held;
    },
    get maxCordonedByDrainbridge() {
      return peak.cordoned;
    },
    violations,
    assertHeld: (extra) => {
      const found = violations(extra);
      if (found.length > 0) throw new InvariantViolation(found);
    },
    stop: () => watch.stop(),
  };
}

/** Running VMIs at the start, by `namespace/name` → uid (a VM restarted gets a new instance, a new uid). */
function vmiNames(sim: Simulator): Map<string, string> {
  if (!sim.store.registry.get(VMIS)) return new Map();
  return new Map(
    sim.store.list(VMIS).items.map((v) => [`${v.metadata.namespace}/${v.metadata.name}`, v.metadata.uid ?? '']),
  );
}

function vmViolations(sim: Simulator, mark: number, atStart: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [key, uid] of atStart) {
    const [namespace, name] = key.split('/');
    const vmi = sim.store.get(VMIS, namespace, name ?? '');
    const phase = (vmi?.status as { phase?: string } | undefined)?.phase;
    if (!vmi) found.push(`VM ${key} was lost (its VirtualMachineInstance is gone)`);
    else if (vmi.metadata.uid !== uid || vmi.metadata.deletionTimestamp) {
      found.push(
        `VM ${key} was shut down (its VirtualMachineInstance was deleted${vmi.metadata.uid !== uid ? ' and started again' : ''})`,
      );
    } else if (phase === 'Succeeded' || phase === 'Failed') found.push(`VM ${key} was shut down (phase ${phase})`);
  }
  const launchers = sim.requestLog
    .writes({ since: mark, user: DRAINBRIDGE_SA, resource: 'pods' })
    .filter((r) => r.name.startsWith('virt-launcher-'));
  for (const record of launchers) {
    const how = record.subresource === 'eviction' ? 'evicted' : `${record.verb}d`;
    found.push(`drainbridge ${how} launcher pod ${record.namespace}/${record.name}`);
  }
  return found;
}

function deleteViolations(sim: Simulator, mark: number, options: InvariantOptions): string[] {
  if (options.deletesAllowed) return [];
  return sim.requestLog
    .writes({ since: mark, user: DRAINBRIDGE_SA, resource: 'pods', verb: 'delete' })
    .filter((r) => !r.subresource)
    .map((r) => `drainbridge deleted pod ${r.namespace}/${r.name} where an eviction was possible`);
}

function limitViolations(
  peak: { held: number; cordoned: number; heldNames: string[]; cordonedNames: string[] },
  limit: number,
): string[] {
  const found: string[] = [];
  if (peak.held > limit) found.push(`${peak.held} nodes held at once (limit ${limit}): ${peak.heldNames.join(', ')}`);
  if (peak.cordoned > limit) {
    found.push(
      `${peak.cordoned} nodes cordoned by drainbridge at once (limit ${limit}): ${peak.cordonedNames.join(', ')}`,
    );
  }
  return found;
}

function safeStateViolations(
  sim: Simulator,
  schedulableAtStart: ReadonlySet<string>,
  people: ReadonlySet<string>,
): string[] {
  const found: string[] = [];
  for (const node of sim.store.list(NODES).items) {
    const name = node.metadata.name ?? '';
    if (people.has(name)) continue;
    const holds = ledgerHolds(node);
    if (holds !== 'none' && !unschedulable(node) && !outOfBandRecorded(node)) {
      found.push(`node ${name} is held (${holds}) but schedulable: the safe state was not kept`);
    }
    if (holds === 'none' && schedulableAtStart.has(name) && unschedulable(node) && cordonedByDrainbridge(node)) {
      found.push(`node ${name} is no longer held but drainbridge's cordon was left on it`);
    }
  }
  return found;
}
