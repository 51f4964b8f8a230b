/**
 * Reads and writes the simulated KubeVirt components share: a VMI's launcher pods, the VMIs on a
 * node, the migrations of a VMI, and race-tolerant read-modify-writes. Loops write straight to the
 * store, as every simulated controller does.
 */
import type { KubeObject, ObjectStore, ResourceRef } from '../../store/types.ts';
import { isDeleting, isTerminal } from '../meta.ts';
import { tolerateRace } from '../runtime.ts';
import { type Pod, REFS, view } from '../types.ts';
import { isFinalMigration, KV_REFS, LABELS, type Vmi, type Vmim } from './api.ts';
import { isLauncherOf } from './launcher.ts';

/** Every launcher pod of the VMI (any phase), oldest first. */
export function launcherPodsOf(store: ObjectStore, vmi: Vmi): Pod[] {
  const items = store.list(REFS.pods, {
    namespace: vmi.metadata.namespace,
    labelSelector: `${LABELS.createdBy}=${vmi.metadata.uid}`,
  }).items;
  return items
    .filter((pod) => isLauncherOf(pod, vmi))
    .map((pod) => view<Pod>(pod))
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
}

/** Not Succeeded or Failed: what KubeVirt counts as the VMI's active pods. */
export function isActivePod(pod: Pod): boolean {
  return !isTerminal(pod);
}

/** Running, Ready and not being deleted. */
export function isServing(pod: Pod): boolean {
  const ready = (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  return pod.status?.phase === 'Running' && ready && !isDeleting(pod);
}

/** Whether the pod is the target pod of some migration. */
export function isTargetPod(pod: Pod): boolean {
  return pod.metadata.labels?.[LABELS.migrationJobUid] !== undefined;
}

/** The VMI's current launcher pod: the active one on its node (before scheduling: the active non-target one). */
export function currentPodOf(vmi: Vmi, pods: readonly Pod[]): Pod | undefined {
  const node = vmi.status?.nodeName;
  const active = pods.filter(isActivePod);
  if (node) return active.find((pod) => pod.spec.nodeName === node);
  return active.find((pod) => !isTargetPod(pod));
}

export function getVmi(store: ObjectStore, namespace: string, name: string): Vmi | undefined {
  const object = store.get(KV_REFS.vmis, namespace, name);
  return object ? view<Vmi>(object) : undefined;
}

export function listVmis(store: ObjectStore): Vmi[] {
  return store.list(KV_REFS.vmis).items.map((o) => view<Vmi>(o));
}

/** Every migration, oldest first (ties by name), as KubeVirt's queue roughly processes them. */
export function listMigrations(store: ObjectStore): Vmim[] {
  return store
    .list(KV_REFS.vmims)
    .items.map((o) => view<Vmim>(o))
    .sort((a, b) => {
      const byTime = (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '');
      return byTime !== 0 ? byTime : a.metadata.name.localeCompare(b.metadata.name);
    });
}

/** Migrations that are not Succeeded or Failed (`migrations.ListUnfinishedMigrations`). */
export function unfinishedMigrations(store: ObjectStore): Vmim[] {
  return listMigrations(store).filter((m) => !isFinalMigration(m));
}

/** Read-modify-write; a 404 or 409 (someone else changed or removed it) leaves it to the next pass. */
export function mutateObject<T extends KubeObject>(
  store: ObjectStore,
  ref: ResourceRef,
  object: T,
  change: (copy: T) => void,
): T | undefined {
  const key = { namespace: object.metadata.namespace, name: object.metadata.name ?? '' };
  const written = tolerateRace(() =>
    store.mutate(ref, key, (copy) => {
      change(copy as T);
      return copy;
    }),
  );
  return written as T | undefined;
}

/** Drops `finalizer` from the metadata; the field goes when it empties (`omitempty`, as the API shows it). */
export function dropFinalizer(metadata: KubeObject['metadata'], finalizer: string): void {
  const rest = (metadata.finalizers ?? []).filter((f) => f !== finalizer);
  if (rest.length > 0) metadata.finalizers = rest;
  else delete metadata.finalizers;
}

/** Removes `finalizer` from the object (which may then be removed by the store). */
export function removeFinalizer(store: ObjectStore, ref: ResourceRef, object: KubeObject, finalizer: string): void {
  if (!object.metadata.finalizers?.includes(finalizer)) return;
  mutateObject(store, ref, object, (copy) => dropFinalizer(copy.metadata, finalizer));
}

/** Writes a pod's status (a kubelet-side change such as a launcher exiting). */
export function writePodStatus(store: ObjectStore, pod: Pod, status: Pod['status']): void {
  const key = { namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' };
  tolerateRace(() => store.mutate(REFS.pods, key, (copy) => ({ ...copy, status }), { subresource: 'status' }));
}
