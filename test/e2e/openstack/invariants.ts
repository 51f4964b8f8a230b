/**
 * The safety invariants of the fault suite (test/support/invariants.ts), on the Nova side, read from the
 * real Nova: no VM shut down or lost (every server of the case still exists, ACTIVE if it was, on an
 * enabled host or still on the source), nova-compute left in the safe state (the source's service
 * disabled with drainbridge's reason while the evacuation failed or is held; re-enabled only by a
 * Restore of drainbridge's own disable), and — checked by each case — the outcome naming the cause.
 */
import assert from 'node:assert/strict';
import type { Lab } from './support.ts';

export interface NovaStart {
  /** Each server of the case and its status when the case began. */
  readonly servers: ReadonlyMap<string, string>;
}

export async function novaStart(lab: Lab, ids: readonly string[]): Promise<NovaStart> {
  const servers = new Map<string, string>();
  for (const id of ids) servers.set(id, (await lab.nova.getServer(id))?.status ?? 'missing');
  return { servers };
}

export interface NovaExpectation {
  readonly source: string;
  /**
   * The source's nova-compute service afterwards: `ours` (disabled with drainbridge's reason for
   * `requestId`: the safe state of a held or failed evacuation), `enabled` (restored), or `foreign` (left
   * as someone else disabled it).
   */
  readonly service: 'ours' | 'enabled' | 'foreign';
  readonly requestId?: string;
}

/** Returns every broken invariant as a sentence (empty when all hold). */
export async function novaViolations(lab: Lab, start: NovaStart, expect: NovaExpectation): Promise<string[]> {
  const found: string[] = [];
  const services = await lab.nova.listComputeServices();
  const enabled = new Set(services.filter((s) => s.status === 'enabled').map((s) => s.host));
  for (const [id, before] of start.servers) {
    const server = await lab.nova.getServer(id);
    if (!server) {
      found.push(`server ${id} was lost`);
      continue;
    }
    if (server.status !== before) found.push(`server ${server.name} went from ${before} to ${server.status}`);
    if (server.host !== expect.source && !enabled.has(server.host ?? '')) {
      found.push(`server ${server.name} ended on ${server.host}, which is not an enabled host`);
    }
  }
  const service = services.find((s) => s.host === expect.source);
  const ours = (reason: string | null | undefined) =>
    expect.requestId
      ? (reason ?? '').startsWith(`drainbridge:${expect.requestId}:`)
      : /^drainbridge:/.test(reason ?? '');
  if (expect.service === 'ours' && !(service?.status === 'disabled' && ours(service.disabledReason))) {
    found.push(
      `nova-compute on ${expect.source} is ${service?.status} (${service?.disabledReason}), not disabled by drainbridge`,
    );
  }
  if (expect.service === 'enabled' && service?.status !== 'enabled') {
    found.push(`nova-compute on ${expect.source} is ${service?.status} after the restore`);
  }
  if (expect.service === 'foreign' && (service?.status !== 'disabled' || ours(service.disabledReason))) {
    found.push(`nova-compute on ${expect.source} lost someone else's disable`);
  }
  return found;
}

export async function assertNovaInvariants(lab: Lab, start: NovaStart, expect: NovaExpectation): Promise<void> {
  assert.deepEqual(await novaViolations(lab, start, expect), [], 'safety invariants (Nova)');
}
