/**
 * What the soak saw of the cluster — taken from the simulator's request log, its store's watches and
 * its admission hooks, and from the replicas' processes — never from drainbridge's own records or
 * logs of what it did. The checker (checker.ts) judges only this, so a test can hand it any history.
 */

/** A pod removed (evicted or deleted) by one of drainbridge's accounts, as the API server answered it. */
export interface PodRemoval {
  readonly at: number;
  readonly user: string;
  readonly namespace: string;
  readonly name: string;
  readonly how: 'eviction' | 'delete';
  /** The HTTP status the request was answered with (2xx: the pod went). */
  readonly status: number;
  /** The budgets covering the pod at that instant, with the disruptions they allowed then. */
  readonly budgets: readonly { readonly name: string; readonly disruptionsAllowed: number }[];
  /** A virt-launcher pod (a VM's). */
  readonly launcher: boolean;
}

/** A node write by drainbridge that took away a cordon, and whether a person's cordon stood then. */
export interface Uncordon {
  readonly at: number;
  readonly user: string;
  readonly node: string;
  readonly status: number;
  readonly personCordonStood: boolean;
}

/**
 * A PDB with fewer healthy pods than its minimum, seen on a change to its status. Nothing but drainbridge
 * (and the soak's seeded bug, acting as drainbridge) removes pods in the soak, so a breach is drainbridge's.
 */
export interface BudgetBreach {
  readonly at: number;
  readonly budget: string;
  readonly healthy: number;
  readonly desired: number;
}

/** How many nodes were held (ledger with a hold, or unreadable) and cordoned by drainbridge, from this instant on. */
export interface HeldSample {
  readonly at: number;
  readonly held: readonly string[];
  readonly cordonedByDrainbridge: readonly string[];
}

export interface VmHistory {
  /** `namespace/name` → uid of every VirtualMachineInstance running at the start. */
  readonly atStart: Readonly<Record<string, string>>;
  /** The same at the end: uid, phase, whether it is being deleted. */
  readonly atEnd: Readonly<Record<string, { uid: string; phase: string; deleting: boolean }>>;
  /** A VMI of the start seen deleted or Succeeded/Failed at any time (with when and how). */
  readonly shutdowns: readonly { readonly key: string; readonly at: number; readonly what: string }[];
}

/** One Evacuation record as its history went: when first seen and when it reached an end (or never). */
export interface RequestHistory {
  readonly requestId: string;
  readonly node: string;
  /** Who asked: cordon, NodeMaintenance, schedule (a window), manual (the CLI)… */
  readonly origin?: string;
  readonly firstSeenAt: number;
  /**
   * The latest outcome: succeeded (NodeDrained), failed, aborted, restored; for a request that never held
   * its node, also not-started (its window closed first) or withdrawn (its cordon lifted, its CLI stopped);
   * undefined: never ended.
   */
  readonly outcome?: 'succeeded' | 'failed' | 'aborted' | 'restored' | 'not-started' | 'withdrawn';
  /** When it first reached any of those (the bound is judged on this). */
  readonly endedAt?: number;
  /** The record's phase when last seen (what a request that never ended was left in). */
  readonly lastPhase?: string;
  /** A failure's blocker (lastError), which must be named. */
  readonly lastError?: string;
  /** Why a request not started or withdrawn ended so (outcomeReason), which must be named. */
  readonly endReason?: string;
  /** A request with a start time (a notice's): its latest planned start (status.start.startAt). */
  readonly startAt?: number;
  /** When it last went from holding (or about to) to released: restored, not started or withdrawn. */
  readonly releasedAt?: number;
  /** The instants its record changed (the first 400): when drainbridge acted on it. */
  readonly changes?: readonly number[];
  /** The starts its record says a reschedule moved it to (status.reschedules[].to). */
  readonly rescheduledTo?: readonly string[];
}

/** A cloud maintenance notice the soak's fake metadata servers served to a node agent (soak/clouds.ts). */
export interface NoticeHistory {
  readonly provider: string;
  readonly node: string;
  /** The notice type (system-reboot, Reboot, MIGRATE_ON_HOST_MAINTENANCE, upcoming-maintenance). */
  readonly what: string;
  /** Request ids of this node's notices from this provider start with this (lib/sources/clouds/ids.ts). */
  readonly requestPrefix: string;
  readonly announcedAt: number;
  /** Each move of its start, with the new start (ISO 8601). */
  readonly reschedules: readonly { readonly at: number; readonly notBefore: string }[];
  /** When it went away, and how: withdrawn (cancelled by the provider) or completed (its maintenance done). */
  readonly goneAt?: number;
  readonly gone?: 'withdrawn' | 'completed';
}

/** A node at the end of the soak, after the epilogue ended every maintenance. */
export interface NodeAtEnd {
  readonly name: string;
  readonly unschedulable: boolean;
  /** Request ids the ledger holds the node for; 'unreadable' when it cannot be parsed. */
  readonly holds: readonly string[] | 'unreadable';
  /** A person's cordon stands (the soak's people cordoned it and have not uncordoned it). */
  readonly personCordon: boolean;
}

/** A nova-compute service as Nova's API shows it (os-services). */
export interface NovaServiceState {
  readonly status: 'enabled' | 'disabled';
  /** `disabled_reason` of a disabled service (drainbridge's start with `drainbridge:<requestId>:`). */
  readonly reason?: string;
}

/** A Nova server as Nova lists it; status `GONE` when Nova lists it no more (deleted). */
export interface NovaServerState {
  readonly status: string;
  readonly host: string | null;
}

/**
 * An operator's own disable of a host's nova-compute (the soak's person, with their own reason), from
 * Nova's answer to the disable until the person set out to enable it again.
 */
export interface OperatorNovaDisable {
  readonly host: string;
  readonly reason: string;
  readonly from: number;
  /** Undefined: it still stood at the end. */
  readonly until?: number;
  /** The service as the person found it just before enabling it (their disable, or what became of it). */
  readonly foundBeforeEnable?: NovaServiceState;
}

/**
 * Nova as the soak sampled it (its API, as admin, every few seconds and once after the epilogue) — not
 * drainbridge's records: the lab's compute hosts, the servers booted on them at the start, and every change.
 */
export interface NovaHistory {
  /** Compute host → the soak node that is it (drainbridge.io/nova-host). */
  readonly nodeOf: Readonly<Record<string, string>>;
  /** The servers booted at the start (ACTIVE then), with their first host. */
  readonly servers: readonly { readonly id: string; readonly name: string; readonly host: string }[];
  /** Samples taken, and those Nova did not answer (not judged: a hole in what was seen). */
  readonly samples: number;
  readonly failedSamples: number;
  /** Every change of a service seen, the first sample's state included. */
  readonly serviceChanges: readonly (NovaServiceState & { readonly at: number; readonly host: string })[];
  /** Every change of a booted server's status or host seen, the first sample's included. */
  readonly serverChanges: readonly (NovaServerState & { readonly at: number; readonly id: string })[];
  readonly operatorDisables: readonly OperatorNovaDisable[];
  /** After the epilogue ended every maintenance (before the soak's own clean-up): host → service. */
  readonly servicesAtEnd: Readonly<Record<string, NovaServiceState>>;
  /** The same, server id → server (absent or GONE: Nova lists it no more). */
  readonly serversAtEnd: Readonly<Record<string, NovaServerState>>;
}

/** One replica process's life. */
export interface ReplicaLife {
  readonly replica: string;
  readonly pid: number;
  /** The signal the soak sent it (undefined: none). */
  readonly sentSignal?: string;
  /** How it exited (undefined: still running at the end, then stopped by the soak's SIGTERM). */
  readonly exit?: { readonly code: number | null; readonly signal: string | null };
  /** Lines of its output that tell of a crash (unhandled rejection, uncaught exception, stack trace). */
  readonly crashLines: readonly string[];
  /** RSS (bytes) five minutes into its life and at its end, when it lived that long. */
  readonly rssAtMinute5?: number;
  readonly rssAtEnd?: number;
  /** RSS (bytes) sampled once a minute of its life (index: the minute); memory-flat judges their floors. */
  readonly rssByMinute?: readonly number[];
  /** A replica that took the lead: the minute of its life it first led (undefined: it never led). */
  readonly ledFromMinute?: number;
}

export interface SoakLog {
  readonly seed: number;
  readonly maxHeldNodes: number;
  /** Pod DELETEs were asked for (--disable-eviction). */
  readonly deletesAllowed: boolean;
  /** How long a request may take from its record to its end (ms). */
  readonly requestBoundMs: number;
  /** When the soak stopped looking (ms since the epoch): requests not ended by then are judged then. */
  readonly endedAt: number;
  readonly podRemovals: readonly PodRemoval[];
  readonly uncordons: readonly Uncordon[];
  readonly held: readonly HeldSample[];
  /** Every change of a PodDisruptionBudget's status: how many were seen, and those below its minimum. */
  readonly budgetSamples: number;
  readonly budgetBreaches: readonly BudgetBreach[];
  readonly vms: VmHistory;
  readonly requests: readonly RequestHistory[];
  readonly nodesAtEnd: readonly NodeAtEnd[];
  readonly replicas: readonly ReplicaLife[];
  /** What Nova showed of its hosts and servers (`--nova`); undefined without a Nova lab: its invariants judge nothing. */
  readonly nova?: NovaHistory;
  /** The cloud notices served (every one gone by the end: the epilogue withdraws those still standing). */
  readonly notices: readonly NoticeHistory[];
}
