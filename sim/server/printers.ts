/**
 * Server-side printing columns for `kubectl get` (Table responses), as the apiserver's printers
 * (pkg/printers/internalversion) define them for the kinds drainbridge's users look at. Priority 1
 * columns are the `-o wide` ones.
 */
import { fieldValue } from '../store/fields.ts';
import type { KubeObject, PrinterColumn, ResourceType } from '../store/types.ts';
import { jsonPathValue } from './jsonpath.ts';

/** A column plus how to compute its cell. */
export interface Column {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  priority: number;
  description: string;
  cell: (object: KubeObject, nowMs: number) => unknown;
}

type Obj = Record<string, unknown>;
const at = (object: KubeObject, path: string): unknown => {
  let current: unknown = object;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Obj)[part];
  }
  return current;
};
const num = (object: KubeObject, path: string): number => Number(at(object, path) ?? 0);
const str = (object: KubeObject, path: string): string => fieldValue(object, path);
const orNone = (value: string): string => (value === '' ? '<none>' : value);

/** kubectl's `HumanDuration` ("5s", "3m2s", "4h", "2d3h", …). */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '<unknown>';
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

const age = (object: KubeObject, nowMs: number): string => {
  const created = Date.parse(object.metadata.creationTimestamp ?? '');
  return Number.isNaN(created) ? '<unknown>' : humanDuration(nowMs - created);
};

const NAME: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  priority: 0,
  description: 'Name must be unique within a namespace.',
  cell: (o) => o.metadata.name,
};
const AGE: Column = {
  name: 'Age',
  type: 'string',
  priority: 0,
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: age,
};

const col = (name: string, cell: Column['cell'], priority = 0, type: Column['type'] = 'string'): Column => ({
  name,
  type,
  priority,
  description: name,
  cell,
});

function nodeStatus(node: KubeObject): string {
  const conditions = (at(node, 'status.conditions') ?? []) as Obj[];
  const ready = conditions.find((c) => c.type === 'Ready');
  let status = ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown';
  if (at(node, 'spec.unschedulable') === true) status += ',SchedulingDisabled';
  return status;
}

function nodeRoles(node: KubeObject): string {
  const roles = Object.keys(node.metadata.labels ?? {})
    .filter((key) => key.startsWith('node-role.kubernetes.io/'))
    .map((key) => key.slice('node-role.kubernetes.io/'.length));
  return roles.length > 0 ? roles.sort().join(',') : '<none>';
}

function nodeAddress(node: KubeObject, type: string): string {
  const addresses = (at(node, 'status.addresses') ?? []) as Obj[];
  return orNone(String(addresses.find((a) => a.type === type)?.address ?? ''));
}

function containerStatuses(pod: KubeObject): Obj[] {
  return (at(pod, 'status.containerStatuses') ?? []) as Obj[];
}

function podReady(pod: KubeObject): string {
  const total = ((at(pod, 'spec.containers') ?? []) as unknown[]).length;
  const ready = containerStatuses(pod).filter((s) => s.ready === true).length;
  return `${ready}/${total}`;
}

function podStatus(pod: KubeObject): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  const reason = str(pod, 'status.reason');
  if (reason) return reason;
  for (const status of containerStatuses(pod)) {
    const state = (status.state ?? {}) as Obj;
    const waiting = (state.waiting ?? {}) as Obj;
    const terminated = (state.terminated ?? {}) as Obj;
    if (waiting.reason) return String(waiting.reason);
    if (terminated.reason && str(pod, 'status.phase') !== 'Running') return String(terminated.reason);
  }
  return str(pod, 'status.phase') || 'Pending';
}

function podRestarts(pod: KubeObject): number {
  return containerStatuses(pod).reduce((sum, s) => sum + Number(s.restartCount ?? 0), 0);
}

const POD_COLUMNS: Column[] = [
  NAME,
  col('Ready', podReady),
  col('Status', podStatus),
  col('Restarts', podRestarts, 0, 'string'),
  AGE,
  col('IP', (o) => orNone(str(o, 'status.podIP')), 1),
  col('Node', (o) => orNone(str(o, 'spec.nodeName')), 1),
  col('Nominated Node', (o) => orNone(str(o, 'status.nominatedNodeName')), 1),
  col('Readiness Gates', (o) => orNone(((at(o, 'spec.readinessGates') ?? []) as unknown[]).length ? 'gates' : ''), 1),
];

const NODE_COLUMNS: Column[] = [
  NAME,
  col('Status', nodeStatus),
  col('Roles', nodeRoles),
  AGE,
  col('Version', (o) => str(o, 'status.nodeInfo.kubeletVersion')),
  col('Internal-IP', (o) => nodeAddress(o, 'InternalIP'), 1),
  col('External-IP', (o) => nodeAddress(o, 'ExternalIP'), 1),
  col('OS-Image', (o) => orNone(str(o, 'status.nodeInfo.osImage')), 1),
  col('Kernel-Version', (o) => orNone(str(o, 'status.nodeInfo.kernelVersion')), 1),
  col('Container-Runtime', (o) => orNone(str(o, 'status.nodeInfo.containerRuntimeVersion')), 1),
];

const intOrNA = (o: KubeObject, path: string): string => {
  const value = at(o, path);
  return value === undefined ? 'N/A' : String(value);
};

const PDB_COLUMNS: Column[] = [
  NAME,
  col('Min Available', (o) => intOrNA(o, 'spec.minAvailable')),
  col('Max Unavailable', (o) => intOrNA(o, 'spec.maxUnavailable')),
  col('Allowed Disruptions', (o) => num(o, 'status.disruptionsAllowed'), 0, 'integer'),
  AGE,
];

const BY_RESOURCE: Readonly<Record<string, Column[]>> = {
  '/pods': POD_COLUMNS,
  '/nodes': NODE_COLUMNS,
  '/namespaces': [NAME, col('Status', (o) => str(o, 'status.phase')), AGE],
  'policy/poddisruptionbudgets': PDB_COLUMNS,
  'apps/deployments': [
    NAME,
    col('Ready', (o) => `${num(o, 'status.readyReplicas')}/${num(o, 'spec.replicas')}`),
    col('Up-to-date', (o) => num(o, 'status.updatedReplicas'), 0, 'integer'),
    col('Available', (o) => num(o, 'status.availableReplicas'), 0, 'integer'),
    AGE,
  ],
  'apps/replicasets': [
    NAME,
    col('Desired', (o) => num(o, 'spec.replicas'), 0, 'integer'),
    col('Current', (o) => num(o, 'status.replicas'), 0, 'integer'),
    col('Ready', (o) => num(o, 'status.readyReplicas'), 0, 'integer'),
    AGE,
  ],
  'apps/statefulsets': [NAME, col('Ready', (o) => `${num(o, 'status.readyReplicas')}/${num(o, 'spec.replicas')}`), AGE],
  'apps/daemonsets': [
    NAME,
    col('Desired', (o) => num(o, 'status.desiredNumberScheduled'), 0, 'integer'),
    col('Current', (o) => num(o, 'status.currentNumberScheduled'), 0, 'integer'),
    col('Ready', (o) => num(o, 'status.numberReady'), 0, 'integer'),
    col('Up-to-date', (o) => num(o, 'status.updatedNumberScheduled'), 0, 'integer'),
    col('Available', (o) => num(o, 'status.numberAvailable'), 0, 'integer'),
    AGE,
  ],
  'batch/jobs': [
    NAME,
    col('Completions', (o) => `${num(o, 'status.succeeded')}/${at(o, 'spec.completions') ?? 1}`),
    AGE,
  ],
  '/events': [
    col('Last Seen', (o, now) =>
      humanDuration(
        now - Date.parse(str(o, 'lastTimestamp') || str(o, 'eventTime') || (o.metadata.creationTimestamp ?? '')),
      ),
    ),
    col('Type', (o) => str(o, 'type')),
    col('Reason', (o) => str(o, 'reason')),
    col('Object', (o) => `${str(o, 'involvedObject.kind').toLowerCase()}/${str(o, 'involvedObject.name')}`),
    col('Message', (o) => str(o, 'message')),
  ],
};

function crdCell(p: PrinterColumn, value: unknown, now: number): unknown {
  if (value === undefined || value === null) return null;
  if (p.type === 'date') return typeof value === 'string' ? humanDuration(now - Date.parse(value)) : null;
  if (p.type === 'string' && typeof value === 'object') return JSON.stringify(value);
  return value;
}

/**
 * A CRD's columns, as apiextensions serves them: Name, then the printer columns in order; only a CRD
 * version without printer columns gets the default Age column (`serveDefaultColumnsIfEmpty`).
 */
function crdColumns(printerColumns: readonly PrinterColumn[]): Column[] {
  if (printerColumns.length === 0) return [NAME, AGE];
  const columns = printerColumns.map((p) => ({
    name: p.name,
    type: p.type === 'date' ? ('string' as const) : p.type,
    priority: p.priority ?? 0,
    description: p.description ?? `Custom resource definition column (in JSONPath format): ${p.jsonPath}`,
    cell: (o: KubeObject, now: number): unknown => crdCell(p, jsonPathValue(o, p.jsonPath), now),
  }));
  return [NAME, ...columns];
}

/** The columns for a type: the built-in printer, a CRD's printer columns, or Name + Age. */
export function columnsFor(type: ResourceType): Column[] {
  const known = BY_RESOURCE[`${type.group}/${type.resource}`];
  if (known) return known;
  if (type.printerColumns) return crdColumns(type.printerColumns);
  return [NAME, AGE];
}
