/**
 * Maps failures of Kubernetes API calls to drainbridge's named errors, keeping what the API server said
 * (HTTP status, `reason`, `details.causes`) so that callers can classify refusals — an eviction's 429
 * with cause `DisruptionBudget` is a blocker, not a transient fault.
 */
import { ConflictError, DrainbridgeError, TransientError } from '../../errors/index.ts';
import { noAnswerKind } from './reach.ts';

/** One entry of a `metav1.Status`'s `details.causes`. */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** What the API server answered, as a `metav1.Status` carries it. */
export interface ApiStatus {
  /** The HTTP status code; 0 when no response arrived (timeout, connection refused). */
  readonly code: number;
  /** `Status.reason` (`NotFound`, `TooManyRequests`, `Conflict`, `Forbidden`, …), empty when absent. */
  readonly reason: string;
  readonly message: string;
  readonly causes: readonly StatusCause[];
}

/**
 * A Kubernetes API call that failed with a status drainbridge does not map to a named workflow error
 * (404, 403, 422, an eviction's 429). Never retried by the client; callers classify it.
 */
export class KubeApiError extends DrainbridgeError {
  readonly status: ApiStatus;
  /** What was being done, e.g. `evict pod ns/name`. */
  readonly operation: string;
  constructor(operation: string, status: ApiStatus, options?: { cause?: unknown }) {
    // No answer (code 0) has no status line to show: the message says what happened.
    super(`${operation}: ${status.code === 0 ? '' : `${status.code} ${status.reason}: `}${status.message}`, options);
    this.name = 'KubeApiError';
    this.status = status;
    this.operation = operation;
  }
}

/** The message the eviction subresource returns when a pod is covered by more than one PDB (HTTP 500). */
export const MULTIPLE_PDBS_MESSAGE = 'This pod has more than one PodDisruptionBudget';

/** `metav1.StatusCause` type the eviction subresource uses when a PDB refuses the disruption. */
export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';

/** `v1.NamespaceTerminatingCause`: creating anything in a namespace being deleted is forbidden. */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parseBody(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'string') return asRecord(body);
  try {
    return asRecord(JSON.parse(body));
  } catch {
    return undefined;
  }
}

function causesOf(details: Record<string, unknown> | undefined): StatusCause[] {
  const causes = details?.causes;
  if (!Array.isArray(causes)) return [];
  return causes.map((entry) => {
    const cause = asRecord(entry) ?? {};
    const out: { reason?: string; message?: string; field?: string } = {};
    // The wire name of StatusCause.Type is "reason"; "type" is accepted from servers that spell it so.
    const reason = cause.reason ?? cause.type;
    if (typeof reason === 'string') out.reason = reason;
    if (typeof cause.message === 'string') out.message = cause.message;
    if (typeof cause.field === 'string') out.field = cause.field;
    return out;
  });
}

/** Reads a `metav1.Status` from an HTTP status code and a response body (a string or parsed JSON). Pure. */
export function statusFromResponse(code: number, body: unknown): ApiStatus {
  const status = parseBody(body);
  return {
    code,
    reason: typeof status?.reason === 'string' ? status.reason : '',
    message: typeof status?.message === 'string' ? status.message : typeof body === 'string' ? body : '',
    causes: causesOf(asRecord(status?.details)),
  };
}

/** Whether the status carries a cause with this reason (`apierrors.HasStatusCause`). */
export function hasCause(status: ApiStatus, reason: string): boolean {
  return status.causes.some((cause) => cause.reason === reason);
}

/** A 500 that is a definite answer, not a fault: the eviction subresource's "more than one PDB". */
export function isMultiplePdbRefusal(status: ApiStatus): boolean {
  return status.code === 500 && status.message.includes(MULTIPLE_PDBS_MESSAGE);
}

/** Whether an API answer may pass on its own: 5xx (except the multiple-PDB refusal), 429 with no budget cause. */
/**
 * Whether a call without an answer was cut by the other end (ECONNRESET, EPIPE: the server was reached, then
 * dropped the connection — an API server restarting, a load balancer draining), anywhere in its causes.
 * Unlike a refused connection or an unknown host, not a sign of a wrong address.
 */
export function isConnectionCut(error: unknown): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (noAnswerKind(cause) === 'reset') return true;
  }
  return false;
}

export function isTransientStatus(status: ApiStatus): boolean {
  if (status.code === 0) return true;
  if (status.code >= 500) return !isMultiplePdbRefusal(status);
  return status.code === 429 && !hasCause(status, DISRUPTION_BUDGET_CAUSE) && !status.message.includes('evacuation');
}

/**
 * Turns an API status into the error to throw: 409 → ConflictError, transient → TransientError, anything
 * else → KubeApiError. The first two carry the KubeApiError as `cause`, so `apiStatusOf` finds the status.
 */
export function errorForStatus(operation: string, status: ApiStatus, cause?: unknown): Error {
  const apiError = new KubeApiError(operation, status, { cause });
  if (status.code === 409) return new ConflictError(apiError.message, { cause: apiError });
  if (isTransientStatus(status)) return new TransientError(apiError.message, { cause: apiError });
  return apiError;
}

/** The API status behind an error thrown by the client (following `cause`), if there is one. */
export function apiStatusOf(error: unknown): ApiStatus | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof KubeApiError) return current.status;
    current = current.cause;
  }
  return undefined;
}

/** The HTTP status code behind an error thrown by the client; undefined for non-API errors. */
export function apiCodeOf(error: unknown): number | undefined {
  return apiStatusOf(error)?.code;
}

/** True when the error is the API server's 404 for the object. */
export function isNotFound(error: unknown): boolean {
  return apiCodeOf(error) === 404;
}
