/** The `scale` subresource of Deployments, ReplicaSets and StatefulSets (`kubectl scale`), as autoscaling/v1 Scale. */
import { formatSelector, type LabelSelector, requirementsOf } from '../../../lib/clients/kube/selectors.ts';
import { mergePatch, strategicMergePatch } from '../../store/patch.ts';
import { badRequest, conflict, OPTIMISTIC_LOCK_MESSAGE } from '../../store/status.ts';
import type { KubeObject } from '../../store/types.ts';
import type { Reply, RequestContext } from '../context.ts';
import { namespaceOf, refOf } from './read.ts';

function scaleOf(object: KubeObject): KubeObject {
  const spec = (object.spec ?? {}) as { replicas?: number; selector?: LabelSelector };
  const status = (object.status ?? {}) as { replicas?: number };
  const { name, namespace, uid, resourceVersion, creationTimestamp } = object.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: spec.replicas ?? 1 },
    status: {
      replicas: status.replicas ?? 0,
      selector: spec.selector ? formatSelector(requirementsOf(spec.selector)) : '',
    },
  };
}

function replicasOf(scale: unknown): number {
  const replicas = (scale as { spec?: { replicas?: unknown } } | undefined)?.spec?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw badRequest('spec.replicas: Invalid value: must be a non-negative integer');
  }
  return replicas;
}

/** GET, PUT and PATCH on `<workload>/scale`. */
export async function scaleWorkload(ctx: RequestContext): Promise<Reply> {
  const { ref } = refOf(ctx);
  const key = { namespace: namespaceOf(ctx) ?? '', name: ctx.info.name };
  const store = ctx.parts.store;
  const current = scaleOf(store.mustGet(ref, key.namespace, key.name));
  if (ctx.info.verb === 'get') return { code: 200, body: current };
  const body = await ctx.body();
  let wanted: unknown = body;
  if (ctx.info.verb === 'patch') {
    const strategic = (ctx.req.headers['content-type'] ?? '').includes('strategic');
    wanted = strategic ? strategicMergePatch(current, body) : mergePatch(current, body);
  }
  const replicas = replicasOf(wanted);
  const expected = (wanted as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  if (expected && expected !== current.metadata.resourceVersion) throw conflict(ref, key.name, OPTIMISTIC_LOCK_MESSAGE);
  const updated = store.mutate(
    ref,
    key,
    (copy) => {
      copy.spec = { ...(copy.spec as object), replicas };
      return copy;
    },
    { dryRun: ctx.dryRun },
  );
  return { code: 200, body: scaleOf(updated) };
}
