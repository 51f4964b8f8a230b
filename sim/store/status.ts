/**
 * `metav1.Status` errors worded exactly as the apiserver words them (k8s.io/apimachinery
 * pkg/api/errors): clients such as kubectl and @kubernetes/client-node branch on `reason` and `code`,
 * and people read `message`.
 */

/**
 * One `details.causes[]` entry (`metav1.StatusCause`). Its Go field is `Type`, but it goes on the wire
 * as `reason` (`json:"reason,omitempty"`): clients such as kubectl's `HasStatusCause` read that key.
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The wire form of a failure. */
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  /** Omitted when empty (`json:"reason,omitempty"`), e.g. on an admission webhook's denial. */
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A failure to send as a `Status` with HTTP status `code`. */
export class StatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'StatusError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /** The JSON body the apiserver sends. */
  toStatus(): StatusBody {
    const body: StatusBody = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      code: this.code,
    };
    if (this.reason) body.reason = this.reason;
    if (this.details) body.details = this.details;
    return body;
  }
}

/** group + plural, as `schema.GroupResource`. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** `pods`, `deployments.apps`: the apiserver's `GroupResource.String()`. */
export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function detailsOf(gr: GroupResource, name: string): StatusDetails {
  const details: StatusDetails = { name, kind: gr.resource };
  if (gr.group) details.group = gr.group;
  return details;
}

/** 404 `pods "x" not found`. */
export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, detailsOf(gr, name));
}

/** 409 `pods "x" already exists`. */
export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(
    409,
    'AlreadyExists',
    `${qualifiedResource(gr)} "${name}" already exists`,
    detailsOf(gr, name),
  );
}

/** 409 Conflict, as an update with a stale resourceVersion or a failed precondition gets it. */
export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  return new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
    detailsOf(gr, name),
  );
}

/** The reason text of a stale-resourceVersion conflict (`registry.OptimisticLockErrorMsg`). */
export const OPTIMISTIC_LOCK_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

/** 422 Invalid: `Pod "x" is invalid: spec.foo: Required value`. */
export function invalid(kind: { group: string; kind: string }, name: string, causes: StatusCause[]): StatusError {
  const qualifiedKind = kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
  const list = causes.map((c) => `${c.field}: ${c.message}`);
  const text = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  const details: StatusDetails = { name, kind: kind.kind, causes };
  if (kind.group) details.group = kind.group;
  return new StatusError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${text}`, details);
}

/** 400 BadRequest with a free message. */
export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

/** 403 Forbidden: `pods "x" is forbidden: <why>`; an empty name reads `pods is forbidden: …`. */
export function forbidden(gr: GroupResource, name: string, why: string, causes?: StatusCause[]): StatusError {
  const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
  const details = detailsOf(gr, name);
  if (causes) details.causes = causes;
  return new StatusError(403, 'Forbidden', `${subject} is forbidden: ${why}`, details);
}

/** 410 Gone for a watch or list from a compacted resourceVersion. */
export function gone(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

/** 429 TooManyRequests with optional causes (evictions blocked by a budget). */
export function tooManyRequests(message: string, causes?: StatusCause[]): StatusError {
  const details: StatusDetails = {};
  if (causes) details.causes = causes;
  return new StatusError(429, 'TooManyRequests', message, causes ? details : undefined);
}

/** 500 InternalError: `Internal error occurred: <why>`. */
export function internalError(why: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${why}`, { causes: [{ message: why }] });
}

/** 405 MethodNotAllowed. */
export function methodNotAllowed(message: string): StatusError {
  return new StatusError(405, 'MethodNotAllowed', message);
}

/** Narrows an unknown thrown value. */
export function isStatusError(error: unknown): error is StatusError {
  return error instanceof StatusError;
}
