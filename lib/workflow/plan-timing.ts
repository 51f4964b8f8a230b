/**
 * The timing part of `drainbridge plan`: how long the node's evacuation is estimated to take (the same
 * estimate PlanStart makes), when an evacuation for a maintenance at `notBefore` would start, and the
 * starts already scheduled for the node (requests waiting for their start, from their Evacuation
 * records). Reads only.
 */

import type { KubeClient } from '../clients/kube/client.ts';
import { isNotFound } from '../clients/kube/errors.ts';
import type { EvacuationObject, EvacuationStart } from '../clients/kube/paths.ts';
import type { Config } from '../config/index.ts';
import type { Estimate } from '../model/estimate.ts';
import { INSTALL_COMMAND } from '../model/install.ts';
import type { NodePlan } from '../model/plan.ts';
import type { DrainOptions } from '../model/request.ts';
import { estimateNode } from './estimate-observe.ts';
import { lateWarning, planStart } from './start-time.ts';

export interface PlannedStartOf {
  readonly notBefore: string;
  readonly startAt: string;
  readonly late: boolean;
  readonly warning?: string;
}

export interface PlanTiming {
  readonly estimate: Estimate;
  readonly marginSeconds: number;
  /** For `--not-before`: when the evacuation would start. */
  readonly start?: PlannedStartOf;
  /** Requests for this node waiting for their start (Evacuation records in MaintenanceScheduled). */
  readonly scheduled: readonly (EvacuationStart & { readonly requestId: string })[];
  /**
   * Set when the Evacuation CRD is not installed (drainbridge not installed yet): no scheduled starts can be
   * known and the estimate has no past evacuations to learn from; says so and how to install it.
   */
  readonly recordsUnavailable?: string;
}

/** Why the records part is missing, in the words plan prints (text and JSON). */
export const NO_RECORDS = `scheduled starts need the Evacuation CRD, which is not installed (${INSTALL_COMMAND} installs it); the estimate uses no past evacuations`;

/** The Evacuation records, or undefined when the API does not serve them (the CRD is not installed). */
async function listRecordsIfServed(kube: KubeClient): Promise<EvacuationObject[] | undefined> {
  try {
    return await kube.listEvacuations();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export async function planTiming(
  config: Config,
  kube: KubeClient,
  nodeName: string,
  settings: {
    readonly options: DrainOptions;
    readonly notBefore?: Date;
    readonly now: Date;
    readonly planned?: NodePlan;
  },
): Promise<PlanTiming> {
  const listed = await listRecordsIfServed(kube);
  const records = listed ?? [];
  const estimate = await estimateNode(config, kube, {
    name: nodeName,
    options: settings.options,
    records,
    ...(settings.planned ? { planned: settings.planned } : {}),
  });
  const { marginSeconds } = config.startTiming;
  const scheduled = records
    .filter((r) => r.spec.nodeName === nodeName && r.status?.phase === 'MaintenanceScheduled' && r.status.start)
    .map((r) => ({ requestId: r.spec.requestId, ...(r.status?.start as EvacuationStart) }));
  const base = { estimate, marginSeconds, scheduled, ...(listed ? {} : { recordsUnavailable: NO_RECORDS }) };
  if (!settings.notBefore) return base;
  const decision = planStart({
    notBefore: settings.notBefore,
    now: settings.now,
    estimateSeconds: estimate.seconds,
    marginSeconds,
  });
  const start = {
    notBefore: settings.notBefore.toISOString(),
    startAt: decision.startAt.toISOString(),
    late: decision.late,
    ...(decision.late ? { warning: lateWarning(nodeName, decision, estimate.seconds) } : {}),
  };
  return { ...base, start };
}

/** The lines `drainbridge plan` prints for the timing. Pure. */
export function renderTimingText(timing: PlanTiming): string {
  const out = ['', `Estimated evacuation time: ${timing.estimate.seconds} s`];
  out.push(...timing.estimate.branches.map((branch) => `  ${branch.basis}`));
  if (timing.start) {
    const { start } = timing;
    out.push(
      `A maintenance at ${start.notBefore} starts the evacuation at ${start.startAt}`,
      `  (notBefore − ${timing.estimate.seconds} s estimate − ${timing.marginSeconds} s margin${start.late ? '; at once' : ''})`,
    );
    if (start.warning) out.push(`  WARNING: ${start.warning}`);
  }
  if (timing.recordsUnavailable) out.push(`Note: ${timing.recordsUnavailable}`);
  for (const waiting of timing.scheduled) {
    out.push(
      `Scheduled: request ${waiting.requestId} starts at ${waiting.startAt} for a maintenance at ${waiting.notBefore} (estimate ${waiting.estimateSeconds} s)`,
    );
    if (waiting.warning) out.push(`  WARNING: ${waiting.warning}`);
  }
  return out.join('\n');
}
