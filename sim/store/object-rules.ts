/**
 * Pure rules the apiserver applies to objects on write: name validation, defaults, generation,
 * and how a delete proceeds (at once, after a grace period, or held by finalizers).
 */
import { invalid, type StatusCause, type StatusError } from './status.ts';
import type { DeleteOptions, KubeObject, ResourceType } from './types.ts';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_HELP =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_HELP =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` + five random characters, as the apiserver's name generator does. */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return `${prefix.slice(0, 58)}${suffix}`;
}

/**
 * Which rule a name breaks, if any: RBAC objects only need a valid path segment (`system:discovery`
 * is fine), namespaces are DNS labels, everything else a DNS subdomain.
 */
function nameRuleFailure(type: ResourceType, name: string): string | undefined {
  if (type.group === 'rbac.authorization.k8s.io') {
    if (name === '.' || name === '..') return `may not be '${name}'`;
    const bad = ['/', '%'].find((c) => name.includes(c));
    return bad ? `may not contain '${bad}'` : undefined;
  }
  if (type.group === '' && type.resource === 'namespaces') {
    return name.length > 63 || !LABEL.test(name) ? LABEL_HELP : undefined;
  }
  return name.length > 253 || !SUBDOMAIN.test(name) ? SUBDOMAIN_HELP : undefined;
}

/** The 422 Invalid for a bad or missing name, or undefined when the name is fine. */
export function nameProblem(type: ResourceType, name: string | undefined): StatusError | undefined {
  const causes: StatusCause[] = [];
  if (!name) {
    causes.push({
      reason: 'FieldValueRequired',
      message: 'Required value: name or generateName is required',
      field: 'metadata.name',
    });
  } else {
    const help = nameRuleFailure(type, name);
    if (help)
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${name}": ${help}`,
        field: 'metadata.name',
      });
  }
  return causes.length > 0 ? invalid(type, name ?? '', causes) : undefined;
}

/** The apiserver's limit on all of an object's annotations, keys and values together (TotalAnnotationSizeLimitB). */
export const ANNOTATIONS_LIMIT_BYTES = 256 * 1024;

/** The 422 Invalid for annotations over the limit (apimachinery's ValidateAnnotationsSize), or undefined. */
export function annotationsProblem(type: ResourceType, object: KubeObject): StatusError | undefined {
  const annotations = object.metadata?.annotations ?? {};
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) size += Buffer.byteLength(key) + Buffer.byteLength(value);
  if (size <= ANNOTATIONS_LIMIT_BYTES) return undefined;
  return invalid(type, object.metadata?.name ?? '', [
    {
      reason: 'FieldValueTooLong',
      message: `Too long: must have at most ${ANNOTATIONS_LIMIT_BYTES} bytes`,
      field: 'metadata.annotations',
    },
  ]);
}

/** Throws the 422 of `annotationsProblem`, if any. */
export function assertAnnotationsFit(type: ResourceType, object: KubeObject): void {
  const problem = annotationsProblem(type, object);
  if (problem) throw problem;
}

function defaultPod(object: KubeObject): void {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  spec.terminationGracePeriodSeconds ??= 30;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.priority ??= 0;
  spec.enableServiceLinks ??= true;
  object.spec = spec;
  const status = (object.status ?? {}) as Record<string, unknown>;
  status.phase ??= 'Pending';
  status.qosClass ??= 'BestEffort';
  object.status = status;
}

function defaultNamespace(object: KubeObject): void {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  spec.finalizers ??= ['kubernetes'];
  object.spec = spec;
  const status = (object.status ?? {}) as Record<string, unknown>;
  status.phase ??= 'Active';
  object.status = status;
  object.metadata.labels = { ...object.metadata.labels, 'kubernetes.io/metadata.name': object.metadata.name ?? '' };
}

/** Fills the defaults the simulator's clients rely on (pods' phase and grace period, namespaces' phase). */
export function applyDefaults(type: ResourceType, object: KubeObject): void {
  if (type.group === '' && type.resource === 'pods') defaultPod(object);
  if (type.group === '' && type.resource === 'namespaces') defaultNamespace(object);
  dropOmittedEmpty(type, object);
}

/**
 * Drops the fields the API server never serialises when empty (Go `omitempty`), so a client reads what it
 * would read from a cluster: a Node's `spec.unschedulable: false` (an uncordon) and `spec.taints: []`
 * come back absent. Only the fields drainbridge and kubectl read are handled.
 */
export function dropOmittedEmpty(type: ResourceType, object: KubeObject): void {
  if (type.group !== '' || type.resource !== 'nodes') return;
  const spec = object.spec as { unschedulable?: unknown; taints?: unknown } | undefined;
  if (!spec || typeof spec !== 'object') return;
  if (spec.unschedulable === false) delete spec.unschedulable;
  if (Array.isArray(spec.taints) && spec.taints.length === 0) delete spec.taints;
}

/** Everything but metadata and status, for generation bumps. */
function specPart(object: KubeObject): string {
  const { metadata: _m, status: _s, resourceVersion: _r, ...rest } = object;
  return JSON.stringify(rest);
}

/** Whether a write changes more than metadata and status. */
export function specChanged(before: KubeObject, after: KubeObject): boolean {
  return specPart(before) !== specPart(after);
}

/** Two objects equal apart from resourceVersion (a no-op write). */
export function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): string =>
    JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return strip(a) === strip(b);
}

/** How a delete proceeds. */
export type DeletionPlan =
  | { action: 'remove' }
  | { action: 'mark'; deletionTimestamp: string; gracePeriodSeconds: number }
  | { action: 'keep' };

function isPod(type: ResourceType): boolean {
  return type.group === '' && type.resource === 'pods';
}

/** The grace period a pod delete gets: 0 for unbound or finished pods, as the pod strategy decides. */
function podGracePeriod(object: KubeObject, options: DeleteOptions): number {
  const spec = (object.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  const phase = ((object.status ?? {}) as { phase?: string }).phase;
  if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
  const requested = options.gracePeriodSeconds ?? object.metadata.deletionGracePeriodSeconds;
  const period = requested ?? spec.terminationGracePeriodSeconds ?? 30;
  // The apiserver turns a negative value into 1 s (BeforeDelete); "the pod's own period" is a kubectl
  // flag meaning "send none". 0 stays 0: the pod goes at once (kubectl --force --grace-period=0).
  return period < 0 ? 1 : period;
}

/**
 * Decides a delete: pods bound to a node and not finished wait out their grace period (the simulated
 * kubelet deletes them again with 0); objects with finalizers are only marked; the rest go at once.
 * A second delete only ever shortens a pending grace period.
 */
export function planDeletion(
  type: ResourceType,
  object: KubeObject,
  options: DeleteOptions,
  nowMs: number,
): DeletionPlan {
  const meta = object.metadata;
  const grace = isPod(type) ? podGracePeriod(object, options) : 0;
  const pendingGrace = meta.deletionGracePeriodSeconds;
  const finalizers = meta.finalizers ?? [];
  if (grace === 0 && finalizers.length === 0) return { action: 'remove' };
  const pending = meta.deletionTimestamp !== undefined && pendingGrace !== undefined;
  if (pending && grace >= (pendingGrace ?? 0)) return { action: 'keep' };
  // A shortened grace period counts from when the first deletion began, as BeforeDelete computes it.
  const startMs = pending ? Date.parse(meta.deletionTimestamp ?? '') - (pendingGrace ?? 0) * 1000 : nowMs;
  const deletionTimestamp = `${new Date(startMs + grace * 1000).toISOString().slice(0, 19)}Z`;
  return { action: 'mark', deletionTimestamp, gracePeriodSeconds: grace };
}

/** Whether an object marked for deletion may now be removed (its finalizers are gone and no grace is pending). */
export function readyToRemove(object: KubeObject): boolean {
  const meta = object.metadata;
  return (
    meta.deletionTimestamp !== undefined &&
    (meta.finalizers ?? []).length === 0 &&
    (meta.deletionGracePeriodSeconds ?? 0) === 0
  );
}
