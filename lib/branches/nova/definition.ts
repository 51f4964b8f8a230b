/**
 * The Nova branch: live-migrates the node's Nova host's servers (lib/branches/nova), through the Nova port its
 * `connect` makes from the configuration (NO_NOVA when Nova is off). Its prepare disables the host's
 * nova-compute service; its restore re-enables it when the disabled reason is still drainbridge's.
 */
import type { BranchPlan } from '../../model/plan.ts';
import type { RecordFormat } from '../../util/json-record.ts';
import { type BranchDefinition, itemRowsReader } from '../contract/branch.ts';
import { perItemEstimate } from '../contract/estimates.ts';
import type { WorkflowDeps } from '../contract/workflow-deps.ts';
import type { NovaPlan } from './index.ts';
import { NOVA_STATE_FORMAT, serverTimelines } from './model.ts';
import { NO_NOVA, type NovaPort } from './port.ts';
import { novaPlannerFor, novaPortFor } from './wiring.ts';

/** The Nova host and the room on the other enabled hosts (Placement), as `drainbridge plan` prints them. */
function capacityLines(plan: BranchPlan): string[] {
  const nova = plan as Partial<Pick<NovaPlan, 'host' | 'capacity'>>;
  if (!nova.host) return [];
  const lines = [`  Nova host: ${nova.host}`];
  if (!nova.capacity) return lines;
  const room = Object.entries(nova.capacity.freeBefore).map(
    ([host, free]) =>
      `${host} (${Object.entries(free)
        .map(([rc, n]) => `${rc} ${n}`)
        .join(', ')})`,
  );
  lines.push(
    `  room on the other enabled hosts: ${nova.capacity.fits ? 'enough' : 'NOT enough'} — free: ${room.join('; ') || 'none'}`,
  );
  return lines;
}

/** The port `connect` made (deps built by hand without it: Nova off). */
function portOf(deps: WorkflowDeps): NovaPort {
  return (deps.connections.get('nova') as NovaPort | undefined) ?? NO_NOVA;
}

export const novaBranch: BranchDefinition = {
  name: 'nova',
  stage: 'parallel',
  moves: { podEviction: false, counter: 'servers-migrated', column: { key: 'nova', heading: 'SERVERS', position: 2 } },
  words: { toMove: 'to live-migrate', moved: 'servers migrated' },
  stateFormat: NOVA_STATE_FORMAT as RecordFormat<unknown>,
  itemRows: itemRowsReader(NOVA_STATE_FORMAT, serverTimelines),
  connect: novaPortFor,
  prepare: (deps, request) => portOf(deps).prepare(request),
  pass: (deps) => portOf(deps).pass(),
  cancel: async (deps, requestIds) => ({
    aborted: (await portOf(deps).cancel(requestIds)).abortedMigrations,
    leftAlone: [],
  }),
  restore: async (deps, request, otherRequestIds) => {
    const restored = await portOf(deps).restore(request, otherRequestIds);
    return { leftAlone: restored.leftAlone, restoredFields: { novaServiceEnabled: restored.serviceEnabled } };
  },
  estimate: perItemEstimate,
  // Loaded only when Nova is on: the check brings the OpenStack HTTP stack.
  preflight: async ({ config, env }) =>
    config.nova.enabled ? (await import('./preflight.ts')).checkNova(env) : undefined,
  planner: (setup) => novaPlannerFor(setup.config, { kube: setup.kube }),
  planLines: capacityLines,
};
