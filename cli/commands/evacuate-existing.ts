/**
 * What `drainbridge evacuate NODE` does when drainbridge already evacuates NODE: follow the request under
 * way instead of adding a second hold (two processes would evict the same pods, and each one's `restore`
 * would leave the node cordoned for the other's hold), resume it when nothing drives it any more, or —
 * with `--request-id` naming another request — start that one as asked. Pure: decided from the node's
 * ledger and the node's Evacuation records, read by the caller.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { MaintenanceRequestedEvent } from '../../lib/bus/contracts/index.ts';
import type { EvacuationObject } from '../../lib/clients/kube/paths.ts';
import { type Driving, drivingOf, holdsRequest } from '../../lib/workflow/driver.ts';
import { planResume } from '../../lib/workflow/resume.ts';

export type ExistingDecision =
  /**
   * Nothing else evacuates the node (or `--request-id` asked for this request on purpose): run as asked —
   * with `detail`, the request as its record has it, when it is one drainbridge knows and the command
   * line gave no drain flags (`drainbridge evacuate NODE --request-id ID`, as status prints it, resumes
   * with the drain options the request began with).
   */
  | { readonly action: 'run'; readonly detail?: MaintenanceRequestedEvent }
  /** Another request evacuates the node and a live execution drives it (or it ended): follow it. */
  | { readonly action: 'follow'; readonly record: EvacuationObject; readonly driving: Driving }
  /** Another request evacuates the node and nothing drives it: resume that request here. */
  | { readonly action: 'resume'; readonly detail: MaintenanceRequestedEvent; readonly driving: Driving };

export interface ExistingFacts {
  readonly node: V1Node;
  /** The Evacuation records of the node (label drainbridge.io/node). */
  readonly records: readonly EvacuationObject[];
  /** The request asked for, and whether `--request-id` named it: the person names the request, and gets it. */
  readonly requestId: string;
  readonly explicitId: boolean;
  /** Whether any kubectl drain flag was given. */
  readonly drainFlags: boolean;
  readonly now: Date;
}

/** Ended ones last: a request under way is the one to follow. */
function underWayFirst(a: { driving: Driving }, b: { driving: Driving }): number {
  return Number(a.driving.state === 'idle') - Number(b.driving.state === 'idle');
}

/**
 * Decides. A request holding the node is followed whether under way or ended (NodeDrained: the node is
 * evacuated already; the follow says so and exits with its outcome). An owner mark that cannot be read
 * throws RecordUnreadable (exit 5, with its repair): read as "nobody drives it", this process would
 * evict beside a live one.
 */
export function planExisting(facts: ExistingFacts): ExistingDecision {
  if (facts.explicitId) return asRecorded(facts);
  const holding = facts.records
    // A request whose Restore started ends its maintenance: a new evacuation is a new request.
    .filter((record) => holdsRequest(facts.node, record.spec.requestId) && !record.status?.restore?.startedAt)
    .map((record) => ({ record, driving: drivingOf(record, true, facts.now) }))
    .sort(underWayFirst);
  const first = holding[0];
  if (!first) return { action: 'run' };
  if (first.driving.state !== 'abandoned') return { action: 'follow', ...first };
  const resume = planResume(first.record, facts.node);
  if (resume.action !== 'evacuate') return { action: 'follow', ...first };
  return { action: 'resume', detail: resume.detail, driving: first.driving };
}

/** The named request as its record has it, if it is under way and no drain flag says otherwise. */
function asRecorded(facts: ExistingFacts): ExistingDecision {
  const record = facts.records.find((candidate) => candidate.spec.requestId === facts.requestId);
  if (!record || facts.drainFlags) return { action: 'run' };
  const resume = planResume(record, facts.node);
  return resume.action === 'evacuate' ? { action: 'run', detail: resume.detail } : { action: 'run' };
}
