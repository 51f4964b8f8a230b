/**
 * POST pods/<name>/eviction: deletes the pod if its disruption budget allows, as the apiserver's
 * EvictionREST does (rules in eviction-rules.ts). Answers 201 with a Success Status.
 */
import { badRequest, conflict, forbidden, notFound, StatusError } from '../../store/status.ts';
import type { DeleteOptions, KubeObject, ObjectStore } from '../../store/types.ts';
import type { Reply, RequestContext } from '../context.ts';
import { deleteOptionsOf } from '../query.ts';
import {
  budgetNotObserved,
  canIgnoreBudget,
  checkBudget,
  decrementedBudget,
  matchingBudgets,
  shouldEnforceResourceVersion,
  unhealthyPodBypassesBudget,
} from './eviction-rules.ts';

const PODS = { group: '', resource: 'pods' };
const NAMESPACES = { group: '', resource: 'namespaces' };
const PDBS = { group: 'policy', resource: 'poddisruptionbudgets' };
/** Upstream names the resource "Pod" in the conflicts of its precondition check. */
const POD_KIND_RESOURCE = { group: '', resource: 'Pod' };

const SUCCESS = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };

interface EvictionBody {
  metadata?: { name?: string };
  deleteOptions?: unknown;
}

/** NamespaceLifecycle admission for the eviction create: 404 for a missing namespace, 403 while terminating. */
function checkNamespace(store: ObjectStore, namespace: string, podName: string): void {
  const ns = store.get(NAMESPACES, undefined, namespace);
  if (!ns) throw notFound(NAMESPACES, namespace);
  if ((ns.status as { phase?: string } | undefined)?.phase === 'Terminating') {
    throw forbidden(
      PODS,
      podName,
      `unable to create new content in namespace ${namespace} because it is being terminated`,
      [
        {
          reason: 'NamespaceTerminating',
          message: `namespace ${namespace} is being terminated`,
          field: 'metadata.namespace',
        },
      ],
    );
  }
}

function checkPreconditions(pod: KubeObject, options: DeleteOptions): void {
  const { uid, resourceVersion } = options.preconditions ?? {};
  const name = pod.metadata.name ?? '';
  if (uid && uid !== pod.metadata.uid) {
    throw conflict(
      POD_KIND_RESOURCE,
      name,
      `the UID in the precondition (${uid}) does not match the UID in record (${pod.metadata.uid}). The object might have been deleted and then recreated`,
    );
  }
  if (resourceVersion && resourceVersion !== pod.metadata.resourceVersion) {
    throw conflict(
      POD_KIND_RESOURCE,
      name,
      `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion}). The object might have been modified`,
    );
  }
}

/** Marks the pod with the DisruptionTarget condition, then deletes it (addConditionAndDeletePod). */
function addConditionAndDelete(store: ObjectStore, pod: KubeObject, options: DeleteOptions): void {
  const key = { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '' };
  let deleteOptions = options;
  if (!options.dryRun) {
    checkPreconditions(store.mustGet(PODS, key.namespace, key.name), options);
    const updated = store.mutate(PODS, key, (copy) => {
      const status = (copy.status ?? {}) as { conditions?: Record<string, unknown>[] };
      const conditions = (status.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget');
      conditions.push({
        type: 'DisruptionTarget',
        status: 'True',
        lastTransitionTime: store.clock.nowIso(),
        reason: 'EvictionByEvictionAPI',
        message: 'Eviction API: evicting',
      });
      copy.status = { ...status, conditions };
      return copy;
    });
    if (options.preconditions?.resourceVersion) {
      deleteOptions = {
        ...options,
        preconditions: { ...options.preconditions, resourceVersion: updated.metadata.resourceVersion },
      };
    }
  }
  store.delete(PODS, key, deleteOptions);
}

function withResourceVersion(options: DeleteOptions, pod: KubeObject): DeleteOptions {
  return { ...options, preconditions: { ...options.preconditions, resourceVersion: pod.metadata.resourceVersion } };
}

/** The budget path: returns the options to delete with, or a Reply when the answer is not a deletion. */
function passBudget(store: ObjectStore, pod: KubeObject, options: DeleteOptions): DeleteOptions | Reply {
  const budgets = matchingBudgets(pod, store.list(PDBS, { namespace: pod.metadata.namespace }).items);
  if (budgets.length > 1) {
    const message = 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
    return {
      code: 500,
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 },
    };
  }
  const pdb = budgets[0];
  if (!pdb) return options;
  if (unhealthyPodBypassesBudget(pod, pdb)) return withResourceVersion(options, pod);
  checkBudget(pdb);
  if (!options.dryRun) {
    const next = decrementedBudget(pdb, pod.metadata.name ?? '', store.clock.nowIso());
    store.update(PDBS, next, { subresource: 'status' });
  }
  return options;
}

function evictionBody(raw: unknown, name: string): EvictionBody {
  const body = (raw && typeof raw === 'object' ? raw : {}) as EvictionBody;
  if ((body.metadata?.name ?? '') !== name) throw badRequest('name in URL does not match name in Eviction object');
  return body;
}

/** The handler. */
export async function evictPod(ctx: RequestContext): Promise<Reply> {
  const store = ctx.parts.store;
  const { namespace, name } = ctx.info;
  const body = evictionBody(await ctx.body(), name);
  const original = deleteOptionsOf(new URLSearchParams(), body.deleteOptions, ctx.dryRun);
  checkNamespace(store, namespace, name);
  const pod = store.mustGet(PODS, namespace, name);
  if (canIgnoreBudget(pod)) {
    const options =
      shouldEnforceResourceVersion(pod) && !original.preconditions?.resourceVersion
        ? withResourceVersion(original, pod)
        : original;
    addConditionAndDelete(store, pod, options);
    return { code: 201, body: SUCCESS };
  }
  const outcome = passBudget(store, pod, original);
  if (outcome && 'code' in outcome) return outcome;
  try {
    addConditionAndDelete(store, pod, outcome as DeleteOptions);
  } catch (error) {
    const addedPrecondition =
      (outcome as DeleteOptions).preconditions?.resourceVersion && !original.preconditions?.resourceVersion;
    if (error instanceof StatusError && error.code === 409 && addedPrecondition)
      throw budgetNotObserved(pdbNameOf(store, pod));
    throw error;
  }
  return { code: 201, body: SUCCESS };
}

function pdbNameOf(store: ObjectStore, pod: KubeObject): string {
  return matchingBudgets(pod, store.list(PDBS, { namespace: pod.metadata.namespace }).items)[0]?.metadata.name ?? '';
}
