/** Renders a node plan for people (`drainbridge plan`) and for programs (`--json`). Pure. */
import { type BranchPlan, isBlocked, type NodePlan } from '../model/plan.ts';
import { BRANCH_REGISTRY, wordsOf } from './registry.ts';

/** The branch's own lines under its heading (Nova: its host and the room elsewhere). */
function branchLines(branch: BranchPlan): readonly string[] {
  return BRANCH_REGISTRY.find((b) => b.name === branch.branch)?.planLines?.(branch) ?? [];
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
    out.push('', `Branch ${branch.branch}:`, ...branchLines(branch));
    out.push(
      ...section(
        wordsOf(branch.branch).toMove,
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
