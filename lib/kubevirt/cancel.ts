/**
 * Restore and `drainbridge abort`: stop drainbridge's own migrations, leave every VM running where it
 * is. Deleting an unfinished VirtualMachineInstanceMigration is how KubeVirt aborts it (before the
 * hand-off the target pod goes; after it virt-handler aborts the transfer and the VM stays on its
 * source). Finished migrations are history and stay. Migrations someone else made — KubeVirt's own
 * evacuations after an eviction elsewhere, an operator's `virtctl migrate` — are reported, never touched.
 */
import type { KubeClient } from '../kube/client.ts';
import { KubeVirtApi } from './api.ts';
import {
  isFinalMigration,
  isOwnMigration,
  migrationMaker,
  ownMigrationsSelector,
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
): Promise<KubeVirtCancelled> {
  const api = new KubeVirtApi(kube);
  let aborted = 0;
  for (const requestId of requestIds) {
    const own = (await api.migrations(ownMigrationsSelector(requestId))).filter((vmim) =>
      isOwnMigration(vmim, requestId),
    );
    for (const vmim of own.filter((m) => !isFinalMigration(m))) {
      await api.deleteMigration(vmim);
      aborted++;
    }
  }
  const onNode = new Set(
    ((await api.vmisOnNode(nodeName)) ?? []).map((vmi) => `${vmi.metadata.namespace}/${vmi.metadata.name}`),
  );
  const others = (await api.migrations()).filter(
    (vmim) => !isFinalMigration(vmim) && migrationMaker(vmim) !== 'drainbridge' && onNode.has(vmiKeyOfMigration(vmim)),
  );
  return { aborted, leftAlone: others.map(describeOther) };
}

function describeOther(vmim: Vmim): string {
  const who = migrationMaker(vmim) === 'kubevirt' ? "KubeVirt's evacuation migration" : 'migration';
  return `${who} ${vmim.metadata.namespace}/${vmim.metadata.name} of VMI ${vmiKeyOfMigration(vmim)} is ${vmim.status?.phase || 'Pending'}: not drainbridge's, left running`;
}
