/**
 * The Deployment controller: one ReplicaSet per pod template, named `<deployment>-<pod-template-hash>`
 * with the hash in its selector and pod labels; the current one is scaled to `spec.replicas` and older
 * ones to 0 (a Recreate-style rollout: rolling-update surge/unavailability is not modelled). Writes
 * status (replicas, updated/ready/available/unavailableReplicas, Available and Progressing conditions).
 */
import type { KubeObject } from '../store/types.ts';
import { controllerRefOf, controllerRefTo, isControlledBy, templateHash } from './meta.ts';
import { withCondition } from './pod-status.ts';
import type { ReconcileResult } from './queue.ts';
import { type Context, type Controller, tolerateRace } from './runtime.ts';
import { type Condition, REFS, view, type Workload } from './types.ts';
import { startWorkloadLoop, writeStatus } from './workload.ts';

export const TEMPLATE_HASH_LABEL = 'pod-template-hash';
const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

function replicaSetFor(deployment: Workload, hash: string, revision: number): KubeObject {
  const labels = { ...deployment.spec.template.metadata?.labels, [TEMPLATE_HASH_LABEL]: hash };
  const selector = deployment.spec.selector ?? {};
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${deployment.metadata.name}-${hash}`,
      namespace: deployment.metadata.namespace ?? 'default',
      labels,
      annotations: {
        [REVISION_ANNOTATION]: String(revision),
        'deployment.kubernetes.io/desired-replicas': String(deployment.spec.replicas ?? 1),
        'deployment.kubernetes.io/max-replicas': String(deployment.spec.replicas ?? 1),
      },
      ownerReferences: [controllerRefTo(deployment)],
    },
    spec: {
      replicas: deployment.spec.replicas ?? 1,
      selector: { ...selector, matchLabels: { ...selector.matchLabels, [TEMPLATE_HASH_LABEL]: hash } },
      template: {
        ...structuredClone(deployment.spec.template),
        metadata: { ...deployment.spec.template.metadata, labels },
      },
    },
  };
}

function scaleTo(context: Context, rs: Workload, replicas: number, deployment: Workload): void {
  const from = rs.spec.replicas ?? 1;
  if (from === replicas) return;
  const key = { namespace: rs.metadata.namespace, name: rs.metadata.name ?? '' };
  tolerateRace(() =>
    context.store.mutate(REFS.replicaSets, key, (copy) => {
      const current = view<Workload>(copy);
      current.spec.replicas = replicas;
      return current;
    }),
  );
  const direction = replicas > from ? 'up' : 'down';
  context
    .recorder({ component: 'deployment-controller' })
    .record(
      deployment,
      'Normal',
      'ScalingReplicaSet',
      `Scaled ${direction} replica set ${rs.metadata.name} from ${from} to ${replicas}`,
    );
}

function revisionOf(rs: KubeObject): number {
  return Number(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? 0) || 0;
}

function statusOf(
  deployment: Workload,
  all: readonly Workload[],
  current: Workload | undefined,
  now: string,
): Record<string, unknown> {
  const sum = (field: string): number => all.reduce((total, rs) => total + Number(rs.status?.[field] ?? 0), 0);
  const desired = deployment.spec.replicas ?? 1;
  const available = sum('availableReplicas');
  const previous = (deployment.status?.conditions ?? []) as Condition[];
  let conditions = withCondition(previous, {
    type: 'Available',
    status: available >= desired ? 'True' : 'False',
    reason: available >= desired ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
    message:
      available >= desired ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.',
    lastTransitionTime: now,
    lastUpdateTime: now,
  });
  conditions = withCondition(conditions, {
    type: 'Progressing',
    status: 'True',
    reason: 'NewReplicaSetAvailable',
    message: `ReplicaSet "${current?.metadata.name ?? ''}" has successfully progressed.`,
    lastTransitionTime: now,
    lastUpdateTime: now,
  });
  // lastProbeTime is not part of Deployment conditions, and lastUpdateTime only moves with the status.
  conditions = conditions.map(({ lastProbeTime: _p, ...c }) => {
    const before = previous.find((p) => p.type === c.type);
    return before?.status === c.status && before.lastUpdateTime ? { ...c, lastUpdateTime: before.lastUpdateTime } : c;
  });
  return {
    observedGeneration: deployment.metadata.generation ?? 1,
    replicas: sum('replicas'),
    updatedReplicas: Number(current?.status?.replicas ?? 0),
    readyReplicas: sum('readyReplicas'),
    availableReplicas: available,
    ...(desired - available > 0 ? { unavailableReplicas: desired - available } : {}),
    conditions,
  };
}

function syncDeployment(context: Context, deployment: Workload): ReconcileResult {
  const { store } = context;
  const namespace = deployment.metadata.namespace;
  const owned = store
    .list(REFS.replicaSets, namespace ? { namespace } : {})
    .items.filter((rs) => isControlledBy(rs, deployment))
    .map((rs) => view<Workload>(rs));
  const hash = templateHash(deployment.spec.template);
  let current = owned.find((rs) => rs.metadata.labels?.[TEMPLATE_HASH_LABEL] === hash);
  if (!current) {
    const revision = Math.max(0, ...owned.map(revisionOf)) + 1;
    const created = tolerateRace(() => store.create(REFS.replicaSets, replicaSetFor(deployment, hash, revision)));
    if (created) {
      current = view<Workload>(created);
      context
        .recorder({ component: 'deployment-controller' })
        .record(
          deployment,
          'Normal',
          'ScalingReplicaSet',
          `Scaled up replica set ${created.metadata.name} from 0 to ${deployment.spec.replicas ?? 1}`,
        );
    }
  } else {
    scaleTo(context, current, deployment.spec.replicas ?? 1, deployment);
  }
  for (const old of owned) if (old !== current) scaleTo(context, old, 0, deployment);
  writeStatus(store, REFS.deployments, deployment, statusOf(deployment, owned, current, store.clock.nowIso()));
  return undefined;
}

/** Starts the Deployment controller. */
export function startDeploymentController(context: Context): Controller {
  return startWorkloadLoop(context, {
    name: 'deployment',
    ref: REFS.deployments,
    sync: (deployment) => syncDeployment(context, deployment),
    triggers: [
      {
        ref: REFS.replicaSets,
        keysFor: (rs) => {
          const owner = controllerRefOf(rs);
          return owner?.kind === 'Deployment' ? [`${rs.metadata.namespace}/${owner.name}`] : [];
        },
      },
    ],
  });
}
