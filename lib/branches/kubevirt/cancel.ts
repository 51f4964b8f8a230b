/**
 * Restore and `drainbridge abort`: stop drainbridge's own migrations, leave every VM running where it
 * is. Deleting an unfinished VirtualMachineInstanceMigration is how KubeVirt aborts it (before the
 * hand-off the target pod goes; after it virt-handler aborts the transfer and the VM stays on its
 * source). Finished migrations are history and stay. Migrations someone else made — KubeVirt's own
 * evacuations after an eviction elsewhere, an operator's `virtctl migrate` — are reported, never touched.
 * Both are said on the VMIs too (Events `MigrationAborted`, `MigrationLeftRunning`), so that an abort —
 * whose Evacuation Failed event has no place for them — reports them as a Restore does.
 */
import type { KubeClient } from '../../clients/kube/client.ts';
import { KubeVirtApi } from '../../clients/kubevirt/api.ts';
import { recordVmiEvents, type VmiEvent } from './kube-events.ts';
import {
  isFinalMigration,
  isOwnMigration,
  keyOf,
  migrationMaker,
  ownMigrationsSelector,
  type Vmi,
  type Vmim,
  vmiKeyOfMigration,
} from './model.ts';

export interface KubeVirtCancelled {
  /** drainbridge's unfinished migrations deleted (aborted). */
  readonly aborted: number;
  /** Sentences for the `Node Restored` event: others' migrations of the node's VMIs, left running. */
  readonly leftAlone: readonly string[];
}

/** Aborts drainbridge's unfinished migrations of these requests; reports others' migrations off `nodeName`. */
export async function cancelKubeVirtMigrations(
  kube: KubeClient,
  requestIds: readonly string[],
  nodeName: string,
  now: Date = new Date(),
): Promise<KubeVirtCancelled> {
  const api = new KubeVirtApi(kube);
  const onNode = new Map(((await api.vmisOnNode(nodeName)) ?? []).map((vmi) => [keyOf(vmi), vmi]));
  const events: VmiEvent[] = [];
  let aborted = 0;
  for (const requestId of requestIds) {
    const own = (await api.migrations(ownMigrationsSelector(requestId))).filter((vmim) =>
      isOwnMigration(vmim, requestId),
    );
    for (const vmim of own.filter((m) => !isFinalMigration(m))) {
      await api.deleteMigration(vmim);
      aborted++;
      // Said once: a migration already being deleted was aborted by an earlier call.
      if (!vmim.metadata.deletionTimestamp) {
        const message = `drainbridge aborted its migration ${vmim.metadata.name} (request ${requestId}): the VM keeps running on node ${nodeName}`;
        events.push(eventOn(vmim, onNode, { reason: 'MigrationAborted', message, type: 'Normal' }));
      }
    }
  }
  const others = (await api.migrations()).filter(
    (vmim) => !isFinalMigration(vmim) && migrationMaker(vmim) !== 'drainbridge' && onNode.has(vmiKeyOfMigration(vmim)),
  );
  for (const vmim of others) {
    const message = `${describeOther(vmim)}; drainbridge stopped only its own migrations (request ${requestIds[0] ?? ''})`;
    events.push(eventOn(vmim, onNode, { reason: 'MigrationLeftRunning', message, type: 'Normal' }));
  }
  await recordVmiEvents(kube, events, now);
  return { aborted, leftAlone: others.map(describeOther) };
}

/** The Event about a migration, on its VMI (by the uid KubeVirt reports on the node, when it does). */
function eventOn(vmim: Vmim, onNode: ReadonlyMap<string, Vmi>, event: Omit<VmiEvent, 'vmi'>): VmiEvent {
  const vmi = { namespace: vmim.metadata.namespace, name: vmim.spec.vmiName ?? '' };
  return { vmi: { ...vmi, uid: onNode.get(vmiKeyOfMigration(vmim))?.metadata.uid ?? '' }, ...event };
}

function describeOther(vmim: Vmim): string {
  const who = migrationMaker(vmim) === 'kubevirt' ? "KubeVirt's evacuation migration" : 'migration';
  return `${who} ${vmim.metadata.namespace}/${vmim.metadata.name} of VMI ${vmiKeyOfMigration(vmim)} is ${vmim.status?.phase || 'Pending'}: not drainbridge's, left running`;
}
