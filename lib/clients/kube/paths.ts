/**
 * Pure builders for what drainbridge sends to the API server: request bodies, merge patches, names of
 * the drainbridge-owned resources. Tested directly, no client needed.
 */

import type { V1Eviction, V1Pod } from '@kubernetes/client-node';
import type { WindowOccurrence } from '../../model/window.ts';

/** A JSON merge patch (RFC 7386): `null` deletes a key. */
export type MergePatch = { readonly [key: string]: MergePatchValue };
export type MergePatchValue = string | number | boolean | null | readonly unknown[] | MergePatch;

/** The Evacuation custom resource's coordinates (see deploy/base/crds/evacuations.yaml). Cluster-scoped. */
export const EVACUATION_API = Object.freeze({
  group: 'drainbridge.io',
  version: 'v1alpha1',
  plural: 'evacuations',
});

/** One Evacuation record, as stored. `status` holds per-branch progress; see lib/progress/evacuation-store.ts. */
export interface EvacuationObject {
  apiVersion: string;
  kind: 'Evacuation';
  metadata: {
    name: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: {
    requestId: string;
    nodeName: string;
    requester?: string;
    origin?: string;
    reason?: string;
    /** The request's drain options as resolved (kubectl drain's, see lib/model/request.ts). */
    drain?: Record<string, unknown>;
    deadline?: string;
    notBefore?: string;
    /** A window's request: its occurrence (a resumed request is started within it only). */
    window?: WindowOccurrence;
    /**
     * A cloud notice's request: the revision of the notice that `notBefore` is from. An execution whose
     * request carries an older one was superseded by a reschedule (lib/progress/reschedule.ts).
     */
    revision?: { key: string; at: string };
  };
  status?: EvacuationStatus;
}

/** Per-branch state and counts. `version` is the branch's own optimistic-concurrency counter. */
export interface EvacuationBranchStatus {
  version: string;
  state: unknown;
  total?: number;
  moved?: number;
  inFlight?: number;
  skipped?: number;
  blockers?: string[];
  /** The branch's first pass and the pass that found it done (ISO 8601): observed durations for estimates. */
  startedAt?: string;
  finishedAt?: string;
  /** What the branch waits for that becomes a blocker only if the evacuation gives up (External VMIs). */
  waiting?: string[];
  /**
   * Each blocker the branch reported, from when it was first reported to when it was no more (the
   * timeline of `drainbridge report`; lib/model/timeline.ts `BranchSpan`, bounded there).
   */
  blockerSpans?: {
    code: string;
    from: string;
    to?: string;
    reason?: string;
    item?: { kind: string; uid: string; name: string };
  }[];
}

/** What releasing a request's hold did (the Restore's ReleaseHold), as the record keeps it. */
export interface RecordedRelease {
  lastHold: boolean;
  uncordoned: boolean;
  restoredSummary: string;
  leftAlone?: string[];
}

/**
 * How a request that never held its node ended: failed or aborted while it waited for a slot; not started
 * (its maintenance window closed first); withdrawn (its cordon lifted, or the CLI that asked was stopped).
 */
export type NeverHeldOutcome = 'failed' | 'aborted' | 'not-started' | 'withdrawn';

/** The end of a never-held request as recorded: how, and why in a sentence. */
export interface NeverHeldEnd {
  readonly outcome: NeverHeldOutcome;
  readonly why?: string;
}

export interface EvacuationStatus {
  /** When drainbridge created the record (its own clock, as every time in the record; ISO 8601). */
  requestedAt?: string;
  phase?: string;
  /** Each phase the evacuation entered and when (ISO 8601), oldest first: the report's phase bar. */
  phases?: { phase: string; at: string }[];
  /** Sums over branches, for printer columns. */
  moved?: number;
  total?: number;
  blockerCount?: number;
  /** The first blocker's sentence, for the printer column. */
  firstBlocker?: string;
  branches?: Record<string, EvacuationBranchStatus>;
  /** Set by `drainbridge abort`: the evacuation stops at its next step and keeps the safe state. */
  abortRequested?: { by: string; at: string };
  /**
   * What stopped the request for good until an operator acts (a record drainbridge keeps that cannot
   * be read): the error's name and sentence, and when it was seen.
   */
  blocked?: { error: string; message: string; at: string };
  /** Why the evacuation failed (`<ErrorName>: <message>`). */
  lastError?: string;
  /**
   * Why a request not admitted yet waits (a limit, a closed health gate, a paused admission), as at its
   * last decision on the nodes; removed once it holds its node.
   */
  waiting?: string;
  /**
   * When a request that never held its node ended (it failed waiting in line, or was aborted there): it
   * has nothing to restore, so this starts its record's expiry as a finished Restore does (expiry.ts).
   */
  endedAt?: string;
  /** How such a request ended (set with endedAt): `kubectl get evacuations` and `drainbridge status` say it. */
  outcome?: NeverHeldOutcome;
  /** Why it ended so, in a sentence (a failure's own sentence is lastError). */
  outcomeReason?: string;
  /**
   * A Restore of this request: when it started and finished (resumption after a restart), and what its
   * release of the hold did — so a Restore resumed after the release reports that, not "nothing".
   */
  restore?: { startedAt?: string; finishedAt?: string; release?: RecordedRelease };
  /**
   * Set by the first pass of an execution that nears Step Functions' history limit: every branch of that
   * execution leaves at its next pass, and the execution continues as a new one (state-machines/evacuate.asl.yml).
   */
  continueRequested?: { executionId: string; at: string };
  /** A request with notBefore: when its evacuation starts and on what estimate (lib/workflow/start-time.ts). */
  start?: EvacuationStart;
  /**
   * Ended by the node agent because the notice's source stayed unreadable past the notice's end or the
   * limit: since its first unreadable read, and the agent's sentence (lib/workflow/unreadable-end.ts).
   */
  sourceUnreadable?: { since: string; message: string; at: string };
  /** The notice's start as it moved, latest last (at most a few): `drainbridge status` shows the last one. */
  reschedules?: Reschedule[];
}

/** A cloud notice's start moved (same request, a later revision): from when to when, and what was done. */
export interface Reschedule {
  /** The notBefore the request had, and the one it has now (absent when the notice has none any more). */
  from?: string;
  to?: string;
  /** The revision that moved it (the provider's key) and when drainbridge recorded it. */
  revision: string;
  at: string;
  /**
   * `replanned`: the evacuation had not started and waits for the new start; `kept`: it had, the node stays
   * drained; `restored`: it had ended, the new start is far (the notice policy's gap): the node was restored
   * and is evacuated again for the new start.
   */
  outcome: 'replanned' | 'kept' | 'restored';
  /** One sentence for `drainbridge status`. */
  message: string;
}

/** The start time of an evacuation and its estimate, as the Evacuation record keeps it. */
export interface EvacuationStart {
  notBefore: string;
  startAt: string;
  estimateSeconds: number;
  marginSeconds: number;
  late: boolean;
  basis: string[];
  warning?: string;
}

/** `namespace/name` of a pod. */
export function podKey(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/**
 * The policy/v1 Eviction for a pod: uid precondition always; grace period only when given and not
 * negative (kubectl: -1 means "the pod's own"); dryRun for `drainbridge plan`.
 */
export function evictionBody(pod: V1Pod, gracePeriodSeconds?: number, dryRun?: boolean): V1Eviction {
  const deleteOptions: NonNullable<V1Eviction['deleteOptions']> = { preconditions: { uid: pod.metadata?.uid } };
  if (gracePeriodSeconds !== undefined && gracePeriodSeconds >= 0)
    deleteOptions.gracePeriodSeconds = gracePeriodSeconds;
  if (dryRun) deleteOptions.dryRun = ['All'];
  return {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: pod.metadata?.name, namespace: pod.metadata?.namespace },
    deleteOptions,
  };
}

const NAME_ALLOWED = /[^a-z0-9.-]/g;

/**
 * The Evacuation name for a request id: a DNS subdomain (lowercase alphanumerics, '-', '.'; ≤ 253).
 * Ids that need rewriting get a short hash suffix so that two ids never map to one name.
 */
export function evacuationName(requestId: string): string {
  const cleaned = requestId
    .toLowerCase()
    .replace(NAME_ALLOWED, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  if (cleaned === requestId && cleaned.length > 0 && cleaned.length <= 253) return cleaned;
  return `${cleaned.slice(0, 240) || 'request'}-${fnv1a(requestId)}`;
}

/** 32-bit FNV-1a as 8 hex digits: a stable short suffix, not a security hash. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (const char of text) {
    hash ^= char.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
