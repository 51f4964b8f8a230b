/**
 * The Kubernetes calls each long-running service makes (`drainbridge run`, `forwarder`, the node agent),
 * grouped by the part of it that makes them, with the role of deploy/base that grants them. The service
 * reviews these before it starts leading (service-check.ts): a required part missing refuses the start;
 * an optional part (a source another setting can turn off) missing runs the service without it. Pure data.
 */
import { type ApiAccess, call, describeAccess, requiredAccess } from './access.ts';

export type Service = 'run' | 'forwarder' | 'node-agent';
export const SERVICES: readonly Service[] = ['run', 'forwarder', 'node-agent'];

/** The role of deploy/base whose binding grants a part's calls. */
export interface Grant {
  readonly kind: 'ClusterRole' | 'Role';
  readonly name: string;
  /** A Role's namespace. */
  readonly namespace?: string;
}

export interface ServicePart {
  /** What the part is, in a phrase: `the NodeMaintenance source`. */
  readonly name: string;
  /** For an optional part: the forwarder source it is and the setting that turns it off. */
  readonly optional?: { readonly source: string; readonly setting: string };
  readonly accesses: readonly ApiAccess[];
  readonly grant: Grant;
}

export interface ServiceSettings {
  /** DRAINBRIDGE_NAMESPACE: the Leases. */
  readonly namespace: string;
  /** DRAINBRIDGE_NODE_MAINTENANCE: the NodeMaintenance source runs. */
  readonly nodeMaintenance: boolean;
  /** --disable-eviction is never a service setting; the KubeVirt restart opt-in is. */
  readonly kubevirtRestart?: boolean;
}

const NMO = { group: 'nodemaintenance.medik8s.io' } as const;
const RECORDS = { group: 'drainbridge.io' } as const;
const clusterRole = (name: string): Grant => ({ kind: 'ClusterRole', name });

/** The forwarder's own watches (cordons, reboots) and its leader-election Lease. */
function watchesAndLease(settings: ServiceSettings, leaseRole: string, nodesRole: string): ServicePart[] {
  const leases = { group: 'coordination.k8s.io', namespace: settings.namespace };
  return [
    {
      name: 'the cordon and reboot sources',
      accesses: [
        call('list', 'nodes', 'list the nodes (cordons, the ledger, boot IDs)'),
        call('watch', 'nodes', 'watch the nodes (cordons, the ledger, boot IDs)'),
      ],
      grant: clusterRole(nodesRole),
    },
    {
      name: 'leader election',
      accesses: [
        call('get', 'leases', 'read the leader-election Lease', leases),
        call('create', 'leases', 'create the leader-election Lease', leases),
        call('update', 'leases', 'take and renew the leader-election Lease', leases),
      ],
      grant: { kind: 'Role', name: leaseRole, namespace: settings.namespace },
    },
  ];
}

/** The NodeMaintenance source: a controller over NodeMaintenances (lib/sources/node-maintenance). */
const NODE_MAINTENANCE_PART: ServicePart = {
  name: 'the NodeMaintenance source',
  optional: { source: 'node-maintenance', setting: 'DRAINBRIDGE_NODE_MAINTENANCE=false' },
  accesses: [
    call('list', 'nodemaintenances', 'list NodeMaintenances', NMO),
    call('watch', 'nodemaintenances', 'watch NodeMaintenances', NMO),
    call('patch', 'nodemaintenances', "add and remove drainbridge's finalizer", NMO),
    call('patch', 'nodemaintenances', 'mirror the evacuation into the status', { ...NMO, subresource: 'status' }),
    call('list', 'evacuations', 'list the Evacuation records (the status mirror)', RECORDS),
    call('watch', 'evacuations', 'watch the Evacuation records (the status mirror)', RECORDS),
    call('list', 'pods', "count the node's pods for the first status (NMO's totalpods, evictionPods)"),
    call('get', 'customresourcedefinitions', 'see whether node-maintenance-operator owns the CRD', {
      group: 'apiextensions.k8s.io',
      name: 'nodemaintenances.nodemaintenance.medik8s.io',
    }),
    call('create', 'events', 'post Events on NodeMaintenances', { namespace: 'default' }),
  ],
  grant: clusterRole('drainbridge-forwarder'),
};

/**
 * The NodeMaintenance source's medik8s node Leases (`medik8s-leases/node-<node>`, taken as NMO takes
 * them), granted by the Role drainbridge-node-leases of deploy/base in that namespace.
 */
const NODE_LEASES = { group: 'coordination.k8s.io', namespace: 'medik8s-leases' } as const;
const NODE_LEASE_PART: ServicePart = {
  name: "the NodeMaintenance source's node Leases",
  optional: NODE_MAINTENANCE_PART.optional,
  accesses: [
    call('get', 'leases', "read a node's medik8s Lease", NODE_LEASES),
    call('create', 'leases', "take a node's medik8s Lease", NODE_LEASES),
    call('update', 'leases', "renew or take over a node's medik8s Lease", NODE_LEASES),
    call('delete', 'leases', "release a node's medik8s Lease when its maintenance ends", NODE_LEASES),
  ],
  grant: { kind: 'Role', name: 'drainbridge-node-leases', namespace: 'medik8s-leases' },
};

/** `drainbridge run`'s watch of the admission Lease, which wakes requests waiting in line as slots free (lib/admission/waker.ts). */
function wakeUpPart(settings: ServiceSettings): ServicePart {
  const leases = { group: 'coordination.k8s.io', namespace: settings.namespace };
  return {
    name: 'the wake-ups of requests waiting in line',
    accesses: [
      call('list', 'leases', 'list the admission Lease (wake requests waiting in line)', leases),
      call('watch', 'leases', 'watch the admission Lease (wake requests waiting in line)', leases),
    ],
    grant: { kind: 'Role', name: 'drainbridge-leases', namespace: settings.namespace },
  };
}

/** What `drainbridge run` runs the state machines with: every call of evacuate, restore and abort. */
function workflowPart(settings: ServiceSettings): ServicePart {
  const access = { namespace: settings.namespace, ...(settings.kubevirtRestart ? { kubevirtRestart: true } : {}) };
  const calls = (['evacuate', 'restore', 'abort'] as const).flatMap((operation) => requiredAccess(operation, access));
  // The Lease Role of deploy/base grants the Leases; the ClusterRole the rest.
  return {
    name: 'the embedded workflow',
    accesses: calls.filter((a) => a.resource !== 'leases'),
    grant: clusterRole('drainbridge'),
  };
}

/**
 * Every part `service` runs with `settings`, required ones first; each call listed once, under the first
 * part that makes it (a denied call is named once).
 */
export function serviceParts(service: Service, settings: ServiceSettings): ServicePart[] {
  const seen = new Set<string>();
  return partsOf(service, settings).map((part) => {
    const accesses = part.accesses.filter((access) => {
      const key = describeAccess(access);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return { ...part, accesses };
  });
}

function partsOf(service: Service, settings: ServiceSettings): ServicePart[] {
  const nodeMaintenance = settings.nodeMaintenance ? [NODE_MAINTENANCE_PART, NODE_LEASE_PART] : [];
  switch (service) {
    case 'forwarder':
      return [
        ...watchesAndLease(settings, 'drainbridge-forwarder-leases', 'drainbridge-forwarder'),
        ...nodeMaintenance,
      ];
    case 'run':
      return [
        ...watchesAndLease(settings, 'drainbridge-leases', 'drainbridge'),
        wakeUpPart(settings),
        workflowPart(settings),
        ...nodeMaintenance,
      ];
    case 'node-agent':
      return [
        {
          name: 'the node agent',
          accesses: [
            call('get', 'nodes', "read its node's ledger"),
            call('list', 'nodes', "find a notice's node by its provider ID"),
            call('get', 'evacuations', 'read the record of a notice', RECORDS),
            call('list', 'evacuations', "list its node's records", RECORDS),
          ],
          grant: clusterRole('drainbridge-node-agent'),
        },
      ];
  }
}

/** `system:serviceaccount:ns:name` → the ServiceAccount, for a binding's subject. */
function subjectFlag(user: string | undefined): { flag: string; short: string } {
  const account = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user ?? '');
  if (account) return { flag: `--serviceaccount=${account[1]}:${account[2]}`, short: account[2] as string };
  if (user) return { flag: `--user=${user}`, short: user.replace(/[^a-z0-9-]/gi, '-').toLowerCase() };
  return { flag: '--user=YOUR-USER', short: 'you' };
}

/** The one command that binds `grant`'s role (installed by kubectl apply -k deploy/base) to `user`. */
export function grantCommand(grant: Grant, user: string | undefined): string {
  const subject = subjectFlag(user);
  const name = `${grant.name}-${subject.short}`;
  return grant.kind === 'ClusterRole'
    ? `kubectl create clusterrolebinding ${name} --clusterrole=${grant.name} ${subject.flag}`
    : `kubectl -n ${grant.namespace} create rolebinding ${name} --role=${grant.name} ${subject.flag}`;
}
