/** What every simulated KubeVirt component gets: the controllers' context, the fault registry, the timings. */
import type { EventRecorder } from '../events.ts';
import type { Context } from '../runtime.ts';
import type { KubeVirtFaults } from './faults.ts';
import type { ResolvedTimings } from './options.ts';

export interface KubeVirtContext {
  readonly context: Context;
  readonly faults: KubeVirtFaults;
  readonly timings: ResolvedTimings;
}

/**
 * Event recorders named as KubeVirt's components name their event sources (virt-controller's
 * `application.go` recorders; virt-handler reports with its node as host).
 */
export function recorders(kv: KubeVirtContext): {
  vmi: EventRecorder;
  vm: EventRecorder;
  migration: EventRecorder;
  evacuation: EventRecorder;
  disruptionBudget: EventRecorder;
  handler: (node: string) => EventRecorder;
} {
  const { context } = kv;
  return {
    vmi: context.recorder({ component: 'virtualmachine-controller' }),
    vm: context.recorder({ component: 'virtualmachine-controller' }),
    migration: context.recorder({ component: 'migration-controller' }),
    evacuation: context.recorder({ component: 'evacuation-controller' }),
    disruptionBudget: context.recorder({ component: 'disruptionbudget-controller' }),
    handler: (node) => context.recorder({ component: 'virt-handler', host: node }),
  };
}
