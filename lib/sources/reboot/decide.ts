/**
 * Which maintenances a node's reboot ends (kured's way of knowing a reboot happened: the kubelet's
 * `status.nodeInfo.bootID` changed). A hold taken with `endsOn: reboot` (a maintenance window's choice)
 * recorded the node's boot ID then; once the node reports another one and is Ready again, that
 * maintenance is over. Pure.
 */
import type { V1Node } from '@kubernetes/client-node';
import { ORIGINS, type Origin } from '../../model/request.ts';
import { ledgerOf } from '../../node/ledger.ts';

export interface RebootEnd {
  readonly requestId: string;
  readonly origin: Origin;
  /** The boot ID when the hold was taken, and now. */
  readonly bootIdBefore: string;
  readonly bootIdNow: string;
}

export function isReady(node: V1Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The holds on `node` that its reboot has ended (none while it is not Ready). */
export function rebootEnds(node: V1Node): RebootEnd[] {
  const bootIdNow = node.status?.nodeInfo?.bootID;
  if (!bootIdNow || !isReady(node)) return [];
  const ends: RebootEnd[] = [];
  // A ledger that cannot be read ends nothing: its holds are unknown until drainbridge repair.
  const read = ledgerOf(node);
  const holds = read.status === 'ok' ? read.ledger.holds : {};
  for (const [requestId, hold] of Object.entries(holds)) {
    if (hold.endsOn !== 'reboot' || !hold.bootID || hold.bootID === bootIdNow) continue;
    const origin = (ORIGINS as readonly string[]).includes(hold.origin) ? (hold.origin as Origin) : 'schedule';
    ends.push({ requestId, origin, bootIdBefore: hold.bootID, bootIdNow });
  }
  return ends;
}

/** What the reboot source keeps of a node: its name, the ledger, the boot ID and the Ready condition. */
export function trimForReboot(node: V1Node, ledgerAnnotation: string): V1Node {
  const ledger = node.metadata?.annotations?.[ledgerAnnotation];
  const ready = (node.status?.conditions ?? []).filter((c) => c.type === 'Ready');
  const bootID = node.status?.nodeInfo?.bootID;
  return {
    metadata: {
      name: node.metadata?.name,
      uid: node.metadata?.uid,
      resourceVersion: node.metadata?.resourceVersion,
      ...(ledger ? { annotations: { [ledgerAnnotation]: ledger } } : {}),
    },
    status: {
      conditions: ready,
      ...(bootID ? { nodeInfo: { bootID } as NonNullable<V1Node['status']>['nodeInfo'] } : {}),
    },
  };
}
