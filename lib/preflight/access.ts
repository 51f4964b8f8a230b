/**
 * The Kubernetes calls each operation makes, as RBAC sees them (verb, group, resource, subresource,
 * namespace), with why. The preflight asks a SelfSubjectAccessReview for exactly these; a test runs each
 * operation against the simulator and checks its request log against this list, so a new call without an
 * entry fails there. Pure data: the workflow's own calls here, each branch's from its definition (the
 * branch registry, lib/branches).
 */

import { BRANCH_REGISTRY } from '../branches/registry.ts';
import type { AccessSettings, ApiAccess } from '../model/api-access.ts';
import { call } from '../model/api-access.ts';

export type { AccessSettings, ApiAccess } from '../model/api-access.ts';
export { call } from '../model/api-access.ts';

/** `check` is every other operation at once. */
export type Operation = 'evacuate' | 'restore' | 'abort' | 'repair' | 'plan' | 'status' | 'report' | 'resume' | 'check';

/** The calls each branch declares for `operation` (its `access`), in registry order. */
function branchAccess(operation: 'evacuate' | 'plan' | 'restore', settings: AccessSettings): ApiAccess[] {
  return BRANCH_REGISTRY.flatMap((branch) => branch.access?.[operation]?.(settings) ?? []);
}

const EVACUATIONS = { group: 'drainbridge.io' } as const;
const READ_NODE = call('get', 'nodes', 'read the node and its ledger');
const RECORD_READ = call('get', 'evacuations', 'read the Evacuation record', EVACUATIONS);
const RECORD_UPDATE = call('update', 'evacuations', 'record progress on the Evacuation record', EVACUATIONS);
// The estimate learns from past evacuations, and a plan shows the starts already scheduled for the node.
const RECORD_LIST = call(
  'list',
  'evacuations',
  'estimate from past evacuations and find scheduled starts',
  EVACUATIONS,
);
// A record expires some time after its request was restored: Admit and FinishRestore sweep (lib/progress/expiry.ts).
const RECORD_EXPIRY = [
  call('list', 'evacuations', 'find restored records past DRAINBRIDGE_RECORD_TTL_HOURS', EVACUATIONS),
  call('delete', 'evacuations', 'delete Evacuation records past DRAINBRIDGE_RECORD_TTL_HOURS', EVACUATIONS),
];
const NODE_EVENTS = call('create', 'events', 'post Events on the node (kubectl describe node)', {
  namespace: 'default',
});

function evacuateAccess(settings: AccessSettings): ApiAccess[] {
  const leases = { group: 'coordination.k8s.io', namespace: settings.namespace };
  return [
    READ_NODE,
    call('list', 'nodes', 'count held nodes for the maintenance slots'),
    call('patch', 'nodes', 'cordon and keep the ledger annotation'),
    call('list', 'pods', "list the node's pods and follow evicted ones until they are gone"),
    call('watch', 'pods', 'wait within a pass for evicted pods to go'),
    settings.disableEviction
      ? call('delete', 'pods', 'delete pods (--disable-eviction)')
      : call('create', 'pods', 'evict pods (policy/v1 Eviction)', { subresource: 'eviction' }),
    call('list', 'poddisruptionbudgets', 'name the PDB behind a refused eviction', { group: 'policy' }),
    call('watch', 'poddisruptionbudgets', 'evict the next pod as soon as its budget allows', { group: 'policy' }),
    call('watch', 'nodes', 'see a Restore while a pass waits'),
    call('get', 'daemonsets', "check a DaemonSet pod's owner still exists", { group: 'apps' }),
    NODE_EVENTS,
    call('get', 'leases', 'read the admission Lease', leases),
    call('create', 'leases', 'create the admission Lease', leases),
    call('update', 'leases', 'take and release the admission Lease', leases),
    RECORD_READ,
    call('create', 'evacuations', 'create the Evacuation record', EVACUATIONS),
    RECORD_UPDATE,
    RECORD_LIST,
    ...RECORD_EXPIRY,
    ...branchAccess('evacuate', settings),
  ];
}

function planAccess(settings: AccessSettings): ApiAccess[] {
  return [
    READ_NODE,
    call('list', 'nodes', 'find room for the replacement pods'),
    call('list', 'pods', "list the node's pods and what runs elsewhere"),
    call('list', 'poddisruptionbudgets', 'find the PDBs that cover the pods', { group: 'policy' }),
    call('get', 'daemonsets', "check a DaemonSet pod's owner still exists", { group: 'apps' }),
    ...(settings.serverDryRun === false
      ? []
      : [call('create', 'pods', 'dry-run each eviction on the API server', { subresource: 'eviction' })]),
    RECORD_LIST,
    call('get', 'leases', 'read the admission queue: would the node be admitted now', ADMISSION_LEASES(settings)),
    ...branchAccess('plan', settings),
  ];
}

/** Where the admission Lease lives. */
const ADMISSION_LEASES = (settings: AccessSettings) => ({
  group: 'coordination.k8s.io',
  namespace: settings.namespace,
});

/** `drainbridge repair`: finds the node's damaged records, then rewrites each (conditionally). */
function repairAccess(settings: AccessSettings): ApiAccess[] {
  const leases = { group: 'coordination.k8s.io', namespace: settings.namespace };
  return [
    READ_NODE,
    call('patch', 'nodes', 'rewrite a damaged ledger'),
    NODE_EVENTS,
    call('get', 'leases', 'read the admission queue on the Lease', leases),
    call('update', 'leases', 'rewrite a damaged admission queue', leases),
    call('list', 'evacuations', "find the node's Evacuation records", EVACUATIONS),
    call('update', 'evacuations', 'rewrite a damaged owner claim or branch state', EVACUATIONS),
  ];
}

/** `drainbridge status`: reads only. */
function statusAccess(settings: AccessSettings): ApiAccess[] {
  return [
    call('get', 'nodes', 'read the node asked about and its ledger'),
    call('list', 'nodes', 'find the nodes drainbridge holds (labelled held, or cordoned)'),
    call('list', 'evacuations', "read the requests' phase, progress and blockers", EVACUATIONS),
    call('get', 'leases', 'read the admission queue on the Lease', {
      group: 'coordination.k8s.io',
      namespace: settings.namespace,
    }),
  ];
}

/** The calls `operation` makes, for the preflight's access reviews: each once, with its first reason. */
export function requiredAccess(operation: Operation, settings: AccessSettings): ApiAccess[] {
  return unique(accessOf(operation, settings));
}

function accessOf(operation: Operation, settings: AccessSettings): ApiAccess[] {
  switch (operation) {
    case 'evacuate':
      return evacuateAccess(settings);
    case 'restore':
      return [
        READ_NODE,
        call('patch', 'nodes', 'uncordon and update the ledger'),
        NODE_EVENTS,
        // The released node leaves the admission Lease's admitted nodes: the next request sees the free slot.
        call('get', 'leases', 'read the admission Lease', ADMISSION_LEASES(settings)),
        call('update', 'leases', 'note the free slot on the admission Lease', ADMISSION_LEASES(settings)),
        RECORD_READ,
        RECORD_UPDATE,
        ...RECORD_EXPIRY,
        // Restore stops every branch's moves of the request first (KubeVirt: its live migrations).
        ...branchAccess('restore', settings),
      ];
    case 'abort':
      // A request waiting for a slot is also taken off the admission queue (lib/workflow/abort.ts): a
      // best-effort write, made only when the request waits, that the abort does not need to succeed.
      return [
        READ_NODE,
        RECORD_READ,
        RECORD_UPDATE,
        call('get', 'leases', 'find a waiting request in the admission queue', ADMISSION_LEASES(settings)),
      ];
    case 'repair':
      return repairAccess(settings);
    case 'plan':
      return planAccess(settings);
    case 'status':
      return statusAccess(settings);
    case 'report':
      return [RECORD_READ];
    case 'resume':
      return [
        call('get', 'leases', "read the circuit breaker's pause on the admission Lease", ADMISSION_LEASES(settings)),
        call('update', 'leases', 'clear the pause on the admission Lease', ADMISSION_LEASES(settings)),
      ];
    case 'check':
      return (['evacuate', 'restore', 'abort', 'repair', 'plan', 'status', 'report', 'resume'] as const).flatMap((op) =>
        accessOf(op, settings),
      );
  }
}

function unique(accesses: readonly ApiAccess[]): ApiAccess[] {
  const seen = new Map<string, ApiAccess>();
  for (const access of accesses) seen.set(describeAccess(access), seen.get(describeAccess(access)) ?? access);
  return [...seen.values()];
}

/** `patch nodes`, `create pods/eviction`, `get leases in drainbridge`. */
export function describeAccess(access: ApiAccess): string {
  const resource = `${access.resource}${access.subresource ? `/${access.subresource}` : ''}`;
  const group = access.group ? `.${access.group}` : '';
  const name = access.name ? ` ${access.name}` : '';
  return `${access.verb} ${resource}${group}${name}${access.namespace ? ` in ${access.namespace}` : ''}`;
}

/**
 * The SelfSubjectAccessReview that asks whether these credentials may make `access`: the same body
 * whichever client sends it (the commands' @kubernetes/client-node one, the services' lightweight one).
 */
export function accessReviewOf(access: ApiAccess) {
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: {
      resourceAttributes: {
        verb: access.verb,
        group: access.group,
        resource: access.resource,
        ...(access.subresource ? { subresource: access.subresource } : {}),
        ...(access.name ? { name: access.name } : {}),
        ...(access.namespace ? { namespace: access.namespace } : {}),
      },
    },
  };
}
