/**
 * The simulator's control loops, started together on one store: scheduler, a kubelet per node, node lifecycle,
 * ReplicaSet, Deployment, StatefulSet, DaemonSet, Job and disruption (PDB) controllers. All timing goes
 * through the store's Clock. See README.md in this folder for what each loop does and does not do.
 */
import type { ObjectStore } from '../store/types.ts';
import { startDaemonSetController } from './daemonset.ts';
import { startDeploymentController } from './deployment.ts';
import { startDisruptionController } from './disruption.ts';
import { startJobController } from './job.ts';
import { startKubelets } from './kubelet.ts';
import { type KubeVirt, resolveTimings, startKubeVirt } from './kubevirt/index.ts';
import { startNodeLifecycleController } from './node-lifecycle.ts';
import { startReplicaSetController } from './replicaset.ts';
import { type Controller, type ControllerOptions, createContext, resolveOptions } from './runtime.ts';
import { startScheduler } from './scheduler.ts';
import { startStatefulSetController } from './statefulset.ts';

export { RUN_SECONDS_ANNOTATION } from './kubelet.ts';
export type { KubeVirt, KubeVirtOptions, MigrationSettings } from './kubevirt/index.ts';
export type { ControllerOptions, StaticPod } from './runtime.ts';

/** The running loops. `stop()` ends every watch and timer they hold; the store's clock is left alone. */
export interface Controllers {
  /** The simulated KubeVirt, when `options.kubevirt` asked for it. */
  readonly kubevirt: KubeVirt | undefined;
  stop(): void;
}

/** Starts every control loop on `store`. Throws a RangeError naming a bad option before starting anything. */
export function startControllers(store: ObjectStore, options: ControllerOptions = {}): Controllers {
  const resolved = resolveOptions(options);
  if (options.kubevirt) resolveTimings(options.kubevirt.timings);
  const context = createContext(store, resolved);
  const running: Controller[] = [
    startScheduler(context),
    startKubelets(context),
    startNodeLifecycleController(context),
    startReplicaSetController(context),
    startDeploymentController(context),
    startStatefulSetController(context),
    startDaemonSetController(context),
    startJobController(context),
    startDisruptionController(context),
  ];
  const kubevirt = options.kubevirt ? startKubeVirt(context, options.kubevirt) : undefined;
  let stopped = false;
  return {
    kubevirt,
    stop() {
      if (stopped) return;
      stopped = true;
      kubevirt?.stop();
      for (const controller of running) controller.stop();
      context.close();
    },
  };
}
