/**
 * OpenWindow: a maintenance window's schedule fired. Lists the nodes its selector matches and puts one
 * `Maintenance Requested` per node on the bus (lib/sources/windows/occurrence.ts); each becomes an Evacuate
 * execution that waits in admission for one of the window's slots (lib/admission), so the
 * nodes go through maintenance `maxNodes` at a time, and those not admitted before the window closes
 * are not started. Changes nothing in the cluster itself.
 */
import { z } from 'zod';
import { Instant } from '../../bus/contracts/fields.ts';
import type { TaskSpec } from '../../lambda/task.ts';
import { WindowDefinitionSchema } from '../../sources/windows/definition.ts';
import { occurrenceOf, windowRequests } from '../../sources/windows/occurrence.ts';
import { depsFromEnvironment, type WorkflowDeps } from '../deps.ts';

/**
 * What a window's schedule sends: the window, and the occurrence's time — EventBridge Scheduler's
 * `<aws.scheduler.scheduled-time>`, the embedded runner's own run time — so a late or repeated delivery
 * names the same occurrence.
 */
export const OpenWindowInput = z.strictObject({ window: WindowDefinitionSchema, scheduledTime: Instant });
export type OpenWindowInput = z.output<typeof OpenWindowInput>;

export interface WindowOpened {
  readonly window: string;
  readonly opensAt: string;
  readonly closesAt: string;
  /** The request ids put on the bus, one per node. */
  readonly requested: readonly string[];
  /** Why nothing was requested, when so. */
  readonly skipped?: string;
}

export const openWindowTask: TaskSpec<OpenWindowInput, WindowOpened, WorkflowDeps> = {
  name: 'openWindow',
  input: OpenWindowInput,
  deps: depsFromEnvironment,
  run: async (input, deps, tools) => {
    const occurrence = occurrenceOf(input.window, new Date(input.scheduledTime));
    const opened = { window: input.window.name, opensAt: occurrence.opensAt, closesAt: occurrence.closesAt };
    if (tools.now().getTime() >= Date.parse(occurrence.closesAt)) {
      const skipped = `the window closed at ${occurrence.closesAt} before this delivery; nothing started`;
      tools.logger.warn(skipped, opened);
      return { ...opened, requested: [], skipped };
    }
    const nodes = await deps.kube.listNodes(input.window.nodeSelector || undefined);
    const names = nodes.map((node) => node.metadata?.name ?? '').filter(Boolean);
    const requests = windowRequests(input.window, occurrence, names);
    for (const request of requests) await deps.publisher.publish('Maintenance Requested', request);
    tools.logger.info('maintenance window opened', { ...opened, nodes: names.length });
    return { ...opened, requested: requests.map((r) => r.requestId) };
  },
};
