/** Renders a node plan for people (`drainbridge plan`) and for programs (`--json`). Pure. */
import { isBlocked } from '../domain/plan.ts';
import type { NodePlan } from './plan-node.ts';

/** What moving an item means in each branch. */
const MOVE_VERB: Readonly<Record<string, string>> = { nova: 'to live-migrate', kubevirt: 'to live-migrate' };

/** Extra lines a branch planner may carry: the Nova host and the room on the other hosts. */
function capacityLines(branch: NodePlan['plan']['branches'][number]): string[] {
  const extra = branch as {
    host?: string;
    capacity?: { fits: boolean; targets: readonly string[]; freeBefore: Record<string, Record<string, number>> };
  };
  if (!extra.host) return [];
  const lines = [`  Nova host: ${extra.host}`];
  if (!extra.capacity) return lines;
  const room = Object.entries(extra.capacity.freeBefore).map(
    ([host, free]) =>
      `${host} (${Object.entries(free)
        .map(([rc, n]) => `${rc} ${n}`)
        .join(', ')})`,
  );
  lines.push(
    `  room on the other enabled hosts: ${extra.capacity.fits ? 'enough' : 'NOT enough'} — free: ${room.join('; ') || 'none'}`,
  );
  return lines;
}

function section(title: string, lines: readonly string[]): string[] {
  if (lines.length === 0) return [`  ${title}: none`];
  return [`  ${title} (${lines.length}):`, ...lines.map((line) => `    ${line}`)];
}

/** The text `drainbridge plan` prints. */
export function renderPlanText(nodePlan: NodePlan): string {
  const { plan } = nodePlan;
  const out = [`Plan for node ${plan.nodeName} (server dry-run evictions: ${nodePlan.serverDryRun ? 'yes' : 'no'})`];
  for (const branch of plan.branches) {
    out.push('', `Branch ${branch.branch}:`, ...capacityLines(branch));
    out.push(
      ...section(
        MOVE_VERB[branch.branch] ?? 'to evict',
        branch.toMove.map((item) => item.name),
      ),
    );
    out.push(
      ...section(
        'skipped',
        branch.skipped.map((skip) => `${skip.item.name}: ${skip.reason}`),
      ),
    );
    out.push(
      ...section(
        'blockers',
        branch.blockers.map((blocker) => `[${blocker.code}] ${blocker.reason}`),
      ),
    );
  }
  if (nodePlan.warnings.length > 0) out.push('', ...nodePlan.warnings.map((warning) => `Warning: ${warning}`));
  const count = plan.branches.reduce((sum, branch) => sum + branch.blockers.length, 0);
  out.push('', isBlocked(plan) ? `BLOCKED: ${count} blocker(s); the evacuation would not finish.` : 'Not blocked.');
  return out.join('\n');
}

/** The JSON `drainbridge plan --json` prints. */
export function renderPlanJson(nodePlan: NodePlan): string {
  return JSON.stringify(
    {
      ...nodePlan.plan,
      warnings: nodePlan.warnings,
      serverDryRun: nodePlan.serverDryRun,
      blocked: isBlocked(nodePlan.plan),
    },
    null,
    2,
  );
}
