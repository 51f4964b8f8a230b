/**
 * Validating admission webhooks: an admission hook (store.admission) that honours the
 * ValidatingWebhookConfiguration objects in the store. For each webhook whose rules match a create,
 * update, patch (UPDATE) or delete request, in configuration-name then list order, it POSTs an
 * AdmissionReview (review.ts) over TLS (call.ts); the first refusal answers the request with the
 * webhook's status (`admission webhook "x" denied the request: …`). A call that fails (refused
 * connection, timeout, bad answer) refuses the request with 500 `failed calling webhook "x": …` under
 * `failurePolicy: Fail` (the default) and is passed over under `Ignore`.
 *
 * Unlike the apiserver, the hook runs before the request's own validation (a create that the schema
 * refuses may reach the webhook first), webhooks are called one after another rather than in parallel,
 * `deletecollection` and `sideEffects`/dry-run checks are not handled, and `matchPolicy` is Exact.
 */
import { randomUUID } from 'node:crypto';
import { jsonPatch, mergePatch } from '../../store/patch.ts';
import { internalError, type StatusError } from '../../store/status.ts';
import type { AdmissionHook, AdmissionRequest, KubeObject, ObjectStore, ResourceType } from '../../store/types.ts';
import { callWebhook } from './call.ts';
import { type Attributes, type ValidatingWebhook, webhookApplies } from './match.ts';
import { admissionReview, verdictOf, WebhookCallError } from './review.ts';

const CONFIGS = { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' };
const NAMESPACES = { group: '', resource: 'namespaces' };
const OPERATIONS = { create: 'CREATE', update: 'UPDATE', patch: 'UPDATE', delete: 'DELETE' } as const;

/** The objects the review carries: the new one (a patch applied to the stored one) and the old one. */
function objectsOf(request: AdmissionRequest, stored: KubeObject | undefined): { object: unknown; oldObject: unknown } {
  if (request.verb === 'create') return { object: request.body ?? null, oldObject: null };
  if (request.verb === 'delete') return { object: null, oldObject: stored ?? null };
  if (request.verb === 'update' || !stored) return { object: request.body ?? null, oldObject: stored ?? null };
  try {
    const patch = request.body as Parameters<typeof mergePatch>[1];
    const target = stored as Parameters<typeof mergePatch>[0];
    return { object: Array.isArray(patch) ? jsonPatch(target, patch) : mergePatch(target, patch), oldObject: stored };
  } catch {
    // A patch that does not apply fails in the handler with its own error; the webhook sees the old object.
    return { object: stored, oldObject: stored };
  }
}

const labelsOf = (object: unknown): Record<string, string> | undefined =>
  (object as KubeObject | null)?.metadata?.labels;

function kindOf(type: ResourceType, request: AdmissionRequest): { group: string; version: string; kind: string } {
  if (request.subresource === 'eviction') return { group: 'policy', version: 'v1', kind: 'Eviction' };
  return { group: type.group, version: request.version, kind: type.kind };
}

interface Call {
  webhook: ValidatingWebhook;
  review: unknown;
  uid: string;
}

async function runCall({ webhook, review, uid }: Call): Promise<StatusError | undefined> {
  try {
    return verdictOf(webhook.name, uid, await callWebhook(webhook, review));
  } catch (error) {
    if (!(error instanceof WebhookCallError)) throw error;
    if (webhook.failurePolicy === 'Ignore') return undefined;
    return internalError(`failed calling webhook "${webhook.name}": ${error.message}`);
  }
}

function callsFor(store: ObjectStore, request: AdmissionRequest, operation: Attributes['operation']): Call[] {
  const configs = store.scan(CONFIGS);
  if (configs.length === 0) return [];
  const type = store.registry.get({ group: request.group, resource: request.resource });
  if (!type) return [];
  const stored = request.name ? store.get(type, request.namespace, request.name) : undefined;
  const { object, oldObject } = objectsOf(request, stored);
  const namespace = request.namespace ? store.get(NAMESPACES, undefined, request.namespace) : undefined;
  const attributes: Attributes = {
    operation,
    group: request.group,
    version: request.version,
    resource: request.resource,
    namespaced: type.namespaced,
    objectLabels: [labelsOf(object), labelsOf(oldObject)].filter((labels, i) => i === 0 || labels !== undefined),
    ...(request.subresource ? { subresource: request.subresource } : {}),
    ...(namespace?.metadata.labels ? { namespaceLabels: namespace.metadata.labels } : {}),
  };
  const webhooks = [...configs]
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .flatMap((config) => (config as { webhooks?: ValidatingWebhook[] }).webhooks ?? [])
    .filter((webhook) => webhookApplies(webhook, attributes));
  // A create names its object in the body (an empty name: generateName, named only when stored).
  const name = request.name ?? (object as KubeObject | null)?.metadata?.name;
  return webhooks.map((webhook) => {
    const uid = randomUUID();
    const review = admissionReview({
      uid,
      kind: kindOf(type, request),
      resource: { group: request.group, version: request.version, resource: request.resource },
      ...(request.subresource ? { subResource: request.subresource } : {}),
      ...(name ? { name } : {}),
      ...(request.namespace ? { namespace: request.namespace } : {}),
      operation,
      userInfo: request.user,
      object,
      oldObject,
      dryRun: request.dryRun,
    });
    return { webhook, review, uid };
  });
}

/** The hook to add to `store.admission`. */
export function validatingWebhooks(store: ObjectStore): AdmissionHook {
  return {
    name: 'validating-webhooks',
    async admit(request) {
      const operation = OPERATIONS[request.verb as keyof typeof OPERATIONS];
      if (!operation) return undefined;
      for (const call of callsFor(store, request, operation)) {
        const refusal = await runCall(call);
        if (refusal) return { status: refusal };
      }
      return undefined;
    },
  };
}
