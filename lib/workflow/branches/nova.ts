/**
 * The Nova branch: live-migrates the node's Nova host's servers (lib/nova, through the Nova port that
 * deps.ts builds from the configuration — NO_NOVA when Nova is off). PrepareNova and RestoreNova, which
 * disable and re-enable the host's nova-compute service, are Nova's own steps of the state machines.
 */
import type { BranchPlan } from '../../domain/plan.ts';
import type { NovaPlan } from '../../nova/index.ts';
import { NOVA_STATE_FORMAT } from '../../nova/model.ts';
import type { RecordFormat } from '../../util/json-record.ts';
import { novaPlannerFor } from '../nova-wiring.ts';
import type { BranchDefinition } from './branch.ts';

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

export const novaBranch: BranchDefinition = {
  name: 'nova',
  stage: 'parallel',
  moves: 'vms',
  words: { toMove: 'to live-migrate', moved: 'servers migrated' },
  stateFormat: NOVA_STATE_FORMAT as RecordFormat<unknown>,
  pass: (deps) => deps.nova.pass(),
  cancel: async (deps, requestIds) => ({
    aborted: (await deps.nova.cancel(requestIds)).abortedMigrations,
    leftAlone: [],
  }),
  planner: (setup) => novaPlannerFor(setup.config, { kube: setup.kube }),
  planLines: capacityLines,
};
