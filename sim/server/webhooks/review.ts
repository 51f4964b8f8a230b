/**
 * The AdmissionReview (admission.k8s.io/v1) a validating webhook is sent, and what its answer means, as
 * the apiserver's webhook dispatcher reads it: `allowed: true` lets the request through; `allowed:
 * false` refuses it with the webhook's status, worded by `webhookerrors.ToStatusErr`: code at least 400,
 * `admission webhook "NAME" denied the request: MESSAGE` (the reason when there is no message, `without
 * explanation` when neither). An answer that is no review or carries another uid is a failed call. Pure.
 */
import { StatusError } from '../../store/status.ts';
import type { UserInfo } from '../../store/types.ts';

export interface ReviewRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind: { group: string; version: string; kind: string };
  requestResource: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  userInfo: UserInfo;
  object: unknown;
  oldObject: unknown;
  dryRun: boolean;
  options: { apiVersion: 'meta.k8s.io/v1'; kind: string };
}

const OPTIONS_KIND = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' } as const;

/** The body POSTed to the webhook. */
export function admissionReview(request: Omit<ReviewRequest, 'requestKind' | 'requestResource' | 'options'>): unknown {
  const full: ReviewRequest = {
    ...request,
    requestKind: request.kind,
    requestResource: request.resource,
    options: { apiVersion: 'meta.k8s.io/v1', kind: OPTIONS_KIND[request.operation] },
  };
  if (request.subResource) full.requestSubResource = request.subResource;
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: full };
}

interface ReviewResponse {
  uid?: unknown;
  allowed?: unknown;
  status?: { code?: unknown; message?: unknown; reason?: unknown };
}

/** Thrown for an answer the dispatcher cannot use: the failure policy decides. */
export class WebhookCallError extends Error {
  override name = 'WebhookCallError';
}

/** The refusal for a webhook's `allowed: false` answer (webhookerrors.ToStatusErr). */
export function denial(webhook: string, status: ReviewResponse['status']): StatusError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400;
  const message = typeof status?.message === 'string' ? status.message : '';
  const reason = typeof status?.reason === 'string' ? status.reason : '';
  const text = message
    ? `${deniedBy}: ${message}`
    : reason
      ? `${deniedBy}: ${reason}`
      : `${deniedBy} without explanation`;
  return new StatusError(code, reason, text);
}

/** undefined when allowed; the refusal when denied; throws WebhookCallError for an unusable answer. */
export function verdictOf(webhook: string, uid: string, answer: unknown): StatusError | undefined {
  const response = (answer as { response?: ReviewResponse } | undefined)?.response;
  if (!response || typeof response !== 'object') throw new WebhookCallError('webhook response was absent');
  if (response.uid !== uid) throw new WebhookCallError(`expected response.uid="${uid}", got "${String(response.uid)}"`);
  return response.allowed === true ? undefined : denial(webhook, response.status);
}
