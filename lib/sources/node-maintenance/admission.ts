/**
 * NMO's admission checks for a NodeMaintenance (its internal/webhook/v1beta1/nodemaintenance_webhook.go),
 * as a decision over an AdmissionReview and the facts read for it. Pure.
 *
 *  - CREATE, in NMO's order: the node exists; no other NodeMaintenance (of the same group) names it; a
 *    control-plane node's eviction keeps etcd quorum — decided by lib/branches/pods/quorum.ts, the function the
 *    drain's quorum guard and `drainbridge plan` ask, and worded as the controller words it (status.ts);
 *  - UPDATE: `spec.nodeName` unchanged;
 *  - anything else: allowed.
 * A refusal is NMO's: HTTP 200 with `allowed: false`, code 403, reason Forbidden, the message verbatim.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Blocker } from '../../model/plan.ts';
import { NMO_ERRORS } from './messages.ts';

/** The part of `admission.k8s.io/v1` AdmissionReview's request read here. */
export interface NodeMaintenanceAdmission {
  readonly uid: string;
  readonly operation: string;
  readonly nodeName: string;
  /** UPDATE: the stored object's `spec.nodeName`. */
  readonly oldNodeName?: string;
}

/** What a CREATE is decided from (read by the webhook per request). */
export interface AdmissionFacts {
  /** The named node (undefined: none such). */
  readonly node: V1Node | undefined;
  /** `spec.nodeName` of every NodeMaintenance of the group already stored. */
  readonly maintainedNodes: readonly string[];
  /** The ControlPlaneQuorum blocker for evacuating the node now, if any. */
  readonly quorum: Blocker | undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function nodeNameOf(object: unknown): string | undefined {
  if (!isObject(object) || !isObject(object.spec)) return undefined;
  return typeof object.spec.nodeName === 'string' ? object.spec.nodeName : undefined;
}

/** Reads an AdmissionReview; a string says what is wrong with it (the webhook's 400). */
export function parseAdmissionReview(body: unknown): NodeMaintenanceAdmission | string {
  if (!isObject(body) || body.kind !== 'AdmissionReview' || body.apiVersion !== 'admission.k8s.io/v1')
    return 'expected an admission.k8s.io/v1 AdmissionReview';
  const request = body.request;
  if (!isObject(request)) return 'the AdmissionReview has no request';
  if (typeof request.uid !== 'string' || request.uid === '') return 'the AdmissionReview request has no uid';
  if (typeof request.operation !== 'string') return 'the AdmissionReview request has no operation';
  const checked = request.operation === 'CREATE' || request.operation === 'UPDATE';
  const nodeName = nodeNameOf(request.object);
  if (checked && nodeName === undefined) return 'request.object is not a NodeMaintenance with spec.nodeName';
  const oldNodeName = nodeNameOf(request.oldObject);
  if (request.operation === 'UPDATE' && oldNodeName === undefined)
    return 'request.oldObject is not a NodeMaintenance with spec.nodeName';
  return {
    uid: request.uid,
    operation: request.operation,
    nodeName: nodeName ?? '',
    ...(oldNodeName !== undefined ? { oldNodeName } : {}),
  };
}

/** Does this request need the facts of a CREATE? */
export const needsFacts = (admission: NodeMaintenanceAdmission): boolean => admission.operation === 'CREATE';

/** The controller's words for the quorum refusal (status.ts): NMO's message, then drainbridge's reason. */
export function quorumMessage(node: string, blocker: Blocker): string {
  return `${NMO_ERRORS.controlPlaneQuorum(node)}: ${blocker.reason ?? ''}`.replace(/: $/, '');
}

/** NMO's refusal for the request, or undefined to allow it. `facts`: required for a CREATE. */
export function admissionRefusal(admission: NodeMaintenanceAdmission, facts?: AdmissionFacts): string | undefined {
  const node = admission.nodeName;
  if (admission.operation === 'UPDATE') return admission.oldNodeName !== node ? NMO_ERRORS.nodeNameUpdate : undefined;
  if (admission.operation !== 'CREATE' || !facts) return undefined;
  if (!facts.node) return NMO_ERRORS.nodeNotFound(node);
  if (facts.maintainedNodes.includes(node)) return NMO_ERRORS.maintenanceExists(node);
  if (facts.quorum) return quorumMessage(node, facts.quorum);
  return undefined;
}

/** The AdmissionReview answered: allowed, or refused with `message` (code 403, as controller-runtime's Denied). */
export function admissionResponse(uid: string, message: string | undefined): Record<string, unknown> {
  const response = message
    ? { uid, allowed: false, status: { code: 403, reason: 'Forbidden', message } }
    : { uid, allowed: true };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
