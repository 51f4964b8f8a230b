/**
 * virt-api's admission webhooks that drainbridge meets, as admission hooks on the store's chain (HTTP
 * requests only, like real webhooks; controllers writing to the store bypass them).
 *
 * `virt-launcher-eviction-interceptor.kubevirt.io` — the pod eviction admitter
 * (`pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go`), on every
 * `pods/eviction` create: pods that are not running virt-launcher pods pass. For a launcher pod, by
 * the VMI's effective eviction strategy:
 * - `None`, or `LiveMigrateIfPossible` on a non-migratable VMI: passes — the eviction proceeds and the
 *   VM shuts down (there is no PDB to stop it).
 * - `LiveMigrate` on a non-migratable VMI: 429 "VMI <name> is configured with an eviction strategy
 *   but is not live-migratable".
 * - `LiveMigrate`, migratable `LiveMigrateIfPossible`, and `External`: the VMI is marked for
 *   evacuation (`status.evacuationNodeName` = the pod's node; not on a dry run) and the request is
 *   answered 429 `Eviction triggered evacuation of VMI "<ns>/<name>"`; once marked, 429 "Evacuation in
 *   progress: Eviction triggered evacuation of VMI ..."; a pod not on the VMI's node (a migration
 *   target) gets 429 "Eviction request for target Pod".
 *
 * `migration-create-validator.kubevirt.io` with the migration mutator
 * (`admitters/migration-create-admitter.go`, `mutators/migration-create-mutator.go`): a created
 * migration gets the `kubevirt.io/vmi-name` label and the `kubevirt.io/migrationJobFinalize`
 * finalizer; it is refused (400) when its VMI does not exist, is final, is not live-migratable, or
 * already has an unfinished migration.
 *
 * Denials are worded as a 1.32 apiserver wraps a webhook's answer (`ToStatusErr`): `admission webhook
 * "<name>" denied the request: <message>`, the webhook's code, no reason.
 */
import { type StatusCause, StatusError } from '../../store/status.ts';
import type { AdmissionHook, AdmissionRequest, AdmissionVerdict, ObjectStore } from '../../store/types.ts';
import { isTerminal } from '../meta.ts';
import { type Pod, REFS, view } from '../types.ts';
import {
  ANNOTATIONS,
  conditionOf,
  FINALIZERS,
  GROUP,
  isFinalMigration,
  isFinalVmi,
  isMigratable,
  KV_REFS,
  LABELS,
  type Vmi,
  type Vmim,
} from './api.ts';
import { clusterConfig, evictionStrategyOf } from './config.ts';
import { getVmi, mutateObject } from './objects.ts';

export const EVICTION_WEBHOOK = 'virt-launcher-eviction-interceptor.kubevirt.io';
export const MIGRATION_WEBHOOK = 'migration-create-validator.kubevirt.io';

function denied(webhook: string, code: number, message: string, causes?: StatusCause[]): AdmissionVerdict {
  const text = `admission webhook "${webhook}" denied the request: ${message}`;
  return { status: new StatusError(code, '', text, causes ? { causes } : undefined) };
}

const evictionDenied = (message: string): AdmissionVerdict => denied(EVICTION_WEBHOOK, 429, message);

/** Whether the VMI's strategy wants it evacuated rather than evicted (undefined: let the eviction through). */
function evacuationVerdict(store: ObjectStore, vmi: Vmi): 'mark' | 'pass' | AdmissionVerdict {
  const strategy = evictionStrategyOf(vmi, clusterConfig(store));
  if (strategy === 'LiveMigrate') {
    if (!isMigratable(vmi)) {
      return evictionDenied(
        `VMI ${vmi.metadata.name} is configured with an eviction strategy but is not live-migratable`,
      );
    }
    return 'mark';
  }
  if (strategy === 'External' || (strategy === 'LiveMigrateIfPossible' && isMigratable(vmi))) return 'mark';
  return 'pass';
}

function admitLauncherEviction(store: ObjectStore, request: AdmissionRequest, pod: Pod): AdmissionVerdict {
  const vmiName = pod.metadata.annotations?.[ANNOTATIONS.domain];
  if (!vmiName) return undefined;
  const namespace = request.namespace ?? '';
  const vmi = getVmi(store, namespace, vmiName);
  if (!vmi) {
    return evictionDenied(`kubevirt failed getting the vmi: virtualmachineinstances.${GROUP} "${vmiName}" not found`);
  }
  const verdict = evacuationVerdict(store, vmi);
  if (verdict === 'pass') return undefined;
  if (verdict !== 'mark') return verdict;
  const triggered = `Eviction triggered evacuation of VMI "${namespace}/${vmiName}"`;
  if (vmi.status?.evacuationNodeName) return evictionDenied(`Evacuation in progress: ${triggered}`);
  if (vmi.status?.nodeName !== pod.spec.nodeName) return evictionDenied('Eviction request for target Pod');
  if (!request.dryRun) {
    mutateObject(store, KV_REFS.vmis, vmi, (copy) => {
      copy.status = { ...copy.status, evacuationNodeName: pod.spec.nodeName ?? '' };
    });
  }
  return evictionDenied(triggered);
}

/** The pod eviction admitter. */
export function evictionWebhook(store: ObjectStore): AdmissionHook {
  return {
    name: EVICTION_WEBHOOK,
    admit(request) {
      const isEviction =
        request.verb === 'create' &&
        request.group === '' &&
        request.resource === 'pods' &&
        request.subresource === 'eviction';
      if (!isEviction) return undefined;
      const stored = store.get(REFS.pods, request.namespace, request.name ?? '');
      if (!stored) return undefined;
      const pod = view<Pod>(stored);
      if (pod.metadata.labels?.[LABELS.app] !== 'virt-launcher' || isTerminal(pod)) return undefined;
      return admitLauncherEviction(store, request, pod);
    },
  };
}

/** The mutator's changes, made to the request body in place (as its JSON patch would). */
function mutateMigration(body: Vmim): void {
  body.metadata = {
    ...body.metadata,
    labels: { ...body.metadata?.labels, [LABELS.vmiName]: body.spec?.vmiName ?? '' },
  };
  body.metadata.finalizers = [...(body.metadata.finalizers ?? []), FINALIZERS.migration];
}

function validateMigration(store: ObjectStore, namespace: string, body: Vmim): AdmissionVerdict {
  const vmiName = body.spec?.vmiName;
  if (!vmiName) {
    const cause = { reason: 'FieldValueRequired', message: 'vmiName is missing', field: 'spec.vmiName' };
    return denied(MIGRATION_WEBHOOK, 422, cause.message, [cause]);
  }
  const vmi = getVmi(store, namespace, vmiName);
  if (!vmi) return denied(MIGRATION_WEBHOOK, 400, `the VMI "${namespace}/${vmiName}" does not exist`);
  if (isFinalVmi(vmi)) return denied(MIGRATION_WEBHOOK, 400, 'Cannot migrate VMI in finalized state.');
  const migratable = conditionOf(vmi, 'LiveMigratable');
  if (migratable?.status === 'False') {
    const message = `Cannot migrate VMI, Reason: ${migratable.reason}, Message: ${migratable.message}`;
    return denied(MIGRATION_WEBHOOK, 400, message);
  }
  const inFlight = store
    .list(KV_REFS.vmims, { namespace, labelSelector: `${LABELS.vmiName}=${vmiName}` })
    .items.find((m) => !isFinalMigration(m as Vmim));
  if (inFlight) {
    const message = `in-flight migration detected. Active migration job (${inFlight.metadata.uid}) is currently already in progress for VMI ${vmiName}.`;
    return denied(MIGRATION_WEBHOOK, 400, message);
  }
  return undefined;
}

/** The migration mutator and create validator. */
export function migrationWebhook(store: ObjectStore): AdmissionHook {
  return {
    name: MIGRATION_WEBHOOK,
    admit(request) {
      const isCreate =
        request.verb === 'create' &&
        request.group === GROUP &&
        request.resource === KV_REFS.vmims.resource &&
        !request.subresource;
      if (!isCreate || !request.body || typeof request.body !== 'object') return undefined;
      const body = request.body as Vmim;
      mutateMigration(body);
      return validateMigration(store, request.namespace ?? body.metadata?.namespace ?? 'default', body);
    },
  };
}
