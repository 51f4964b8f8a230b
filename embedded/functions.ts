/**
 * Every Lambda function of serverless.yml, by its key, as the embedded executor calls it: the very
 * handlers in functions/ (middy stack included), over dependencies given here instead of the environment.
 */

import { handler as admit } from '../functions/admit.ts';
import { handler as awaitSlot } from '../functions/await-slot.ts';
import { handler as failEvacuation } from '../functions/fail-evacuation.ts';
import { handler as finishEvacuation } from '../functions/finish-evacuation.ts';
import { handler as finishRestore } from '../functions/finish-restore.ts';
import { handler as openWindow } from '../functions/open-window.ts';
import { handler as pass } from '../functions/pass.ts';
import { handler as planStart } from '../functions/plan-start.ts';
import { handler as prepareBranches } from '../functions/prepare-branches.ts';
import { handler as releaseHold } from '../functions/release-hold.ts';
import { handler as resolveTarget } from '../functions/resolve-target.ts';
import { handler as restoreBranches } from '../functions/restore-branches.ts';
import type { WorkflowDeps } from '../lib/workflow/deps.ts';
import type { LocalHandler } from './executor.ts';

const FUNCTIONS = {
  resolveTarget,
  planStart,
  admit,
  awaitSlot,
  prepareBranches,
  pass,
  finishEvacuation,
  failEvacuation,
  releaseHold,
  restoreBranches,
  finishRestore,
  openWindow,
};

/** The handlers bound to `deps`; `now` lets tests move time. */
export function embeddedHandlers(deps: WorkflowDeps, now?: () => Date): Record<string, LocalHandler> {
  const out: Record<string, LocalHandler> = {};
  for (const [key, defined] of Object.entries(FUNCTIONS)) {
    out[key] = (defined.withDeps as (d: WorkflowDeps, n?: () => Date) => LocalHandler)(deps, now);
  }
  return out;
}
