/**
 * The drain options of an evacuation nobody typed flags for, by the request's origin, and the order in
 * which options someone did set win over them. docs/drain-defaults.md explains the table; a unit test
 * keeps the two equal. Pure data.
 *
 * kubectl's own defaults refuse DaemonSet pods, emptyDir pods and bare pods: right for a person at a
 * prompt, who reads the refusal and retypes the command, but an evacuation that no person started has
 * nobody to read it and would stay blocked for ever (every real cluster runs DaemonSets).
 */
import { NOTICE_PROVIDERS, type NoticeProvider } from './notice.ts';
import { type DrainOptions, KUBECTL_DRAIN_DEFAULTS, type Origin } from './request.ts';

export interface OriginDrainDefault {
  /** What this origin sets over kubectl's defaults. */
  readonly drain: Partial<DrainOptions>;
  /** Why, in one sentence (docs/drain-defaults.md says it at length). */
  readonly why: string;
}

/**
 * The node stays up: DaemonSet pods never block (they cannot move; kubectl's refusal only asks the person
 * to acknowledge that), but emptyDir data and bare pods are kept, as kubectl does: evicting them loses
 * data or a pod nothing re-creates, so the evacuation fails at once, as `kubectl drain` does, naming the
 * option that lets them go (the node stays cordoned and held until a restore).
 */
const NODE_STAYS_UP: Partial<DrainOptions> = Object.freeze({ ignoreDaemonSets: true });

/**
 * The node goes down regardless (it is deleted, stopped, rebooted or serviced): the options of
 * node-maintenance-operator, AWS Node Termination Handler and kured (Force, DeleteEmptyDirData,
 * IgnoreAllDaemonSets). An emptyDir or a bare pod is lost with the node anyway; evicting it first at least
 * ends it gracefully and lets a controller (if any) start it elsewhere. `force` still evicts (through
 * PodDisruptionBudgets); only `disableEviction` deletes.
 */
const NODE_GOES_DOWN: Partial<DrainOptions> = Object.freeze({
  ignoreDaemonSets: true,
  deleteEmptyDirData: true,
  force: true,
});

/**
 * Every cloud whose notices drainbridge reads (NOTICE_PROVIDERS): its notices take the VM down (stopped,
 * rebooted, redeployed, retired, preempted or its host serviced), so the node goes down, as AWS Node
 * Termination Handler drains. A new cloud has this default without a line here.
 */
const CLOUD_DEFAULTS = Object.fromEntries(
  NOTICE_PROVIDERS.map((provider) => [
    provider,
    {
      drain: NODE_GOES_DOWN,
      why: 'a cloud notice: the VM is stopped, rebooted, retired, preempted or its host serviced (as AWS NTH drains)',
    },
  ]),
) as Record<NoticeProvider, OriginDrainDefault>;

/** One entry per origin: adding an origin to ORIGINS without deciding its defaults does not compile. */
export const ORIGIN_DRAIN_DEFAULTS: Readonly<Record<Origin, OriginDrainDefault>> = Object.freeze({
  cordon: {
    drain: NODE_STAYS_UP,
    why: 'someone cordoned the node; it keeps running, so emptyDir data and bare pods wait for an explicit option',
  },
  manual: {
    drain: NODE_STAYS_UP,
    why: 'a request sent by hand (serverless invoke, a put-events) without `drain`: nothing says the node goes down',
  },
  'node-maintenance': {
    drain: NODE_GOES_DOWN,
    why: "a NodeMaintenance asks for the node's maintenance; node-maintenance-operator drains with these options",
  },
  ...CLOUD_DEFAULTS,
  schedule: {
    drain: NODE_GOES_DOWN,
    why: 'a maintenance window takes the node for maintenance (patching, reboot), as kured does',
  },
});

/**
 * The drain options of one request, each field from the first of these that sets it:
 *  1. `requested`: typed for this request (the event's `drain`: `drainbridge evacuate` flags, a window's
 *     or a notice policy's `drain`, a forwarder's or node agent's command-line flags);
 *  2. `operator`: set for every request of this process (`drainbridge run`'s drain flags, then the
 *     DRAINBRIDGE_DRAIN_* variables that are set);
 *  3. the origin's default (ORIGIN_DRAIN_DEFAULTS);
 *  4. kubectl's default.
 */
export function resolveDrainOptions(
  origin: Origin,
  operator: Partial<DrainOptions>,
  requested: Partial<DrainOptions> | undefined,
): DrainOptions {
  return {
    ...KUBECTL_DRAIN_DEFAULTS,
    ...ORIGIN_DRAIN_DEFAULTS[origin].drain,
    ...definedOnly(operator),
    ...definedOnly(requested ?? {}),
  };
}

function definedOnly(options: Partial<DrainOptions>): Partial<DrainOptions> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}
