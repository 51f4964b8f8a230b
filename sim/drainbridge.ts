/**
 * A simulated cluster ready for drainbridge: the scenario settled, drainbridge's CRDs and least-privilege
 * RBAC from deploy/ applied, and a kubeconfig file for drainbridge's ServiceAccount (never the admin's).
 * Used by the demo, the workflow suite and the benchmarks.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { whenSettled } from './scenarios/index.ts';
import { type Simulator, type SimulatorOptions, startSimulator } from './simulator.ts';

const DEPLOY = new URL('../deploy/', import.meta.url);
/** The manifests drainbridge needs in a cluster (cluster admin applies them once). */
export const DRAINBRIDGE_MANIFESTS = ['base/crds/evacuations.yaml', 'base/rbac/drainbridge.yaml'] as const;

/**
 * The kubeconfig directories of this process's clusters (they hold tokens): each removed by its cluster's
 * stop(), and whatever is left when the process exits — including through process.exit from a signal
 * handler (the demo's Ctrl-C), which runs no finally block.
 */
const kubeconfigDirs = new Set<string>();
let removesOnExit = false;

function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  kubeconfigDirs.delete(dir);
}

function makeKubeconfigDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-'));
  kubeconfigDirs.add(dir);
  if (!removesOnExit) {
    removesOnExit = true;
    process.on('exit', () => {
      for (const left of kubeconfigDirs) removeDir(left);
    });
  }
  return dir;
}

export interface DrainbridgeCluster {
  readonly sim: Simulator;
  /** A kubeconfig file (mode 0600) for the drainbridge ServiceAccount. */
  readonly kubeconfigPath: string;
  /** A kubeconfig file (mode 0600) for the cluster admin: what a person at the keyboard uses. */
  readonly adminKubeconfigPath: string;
  stop(): Promise<void>;
}

export async function startDrainbridgeCluster(
  options: SimulatorOptions & { settleMs?: number },
): Promise<DrainbridgeCluster> {
  const sim = await startSimulator(options);
  try {
    for (const file of DRAINBRIDGE_MANIFESTS) sim.apply(readFileSync(new URL(file, DEPLOY), 'utf8'), `deploy/${file}`);
    // 30 simulated seconds, but never less than 20 real ones: at speed 100 the simulated half minute is
    // 0.3 s of real time, which a busy machine spends before its controllers have run at all.
    const settleMs = options.settleMs ?? Math.max(30_000, 20_000 * sim.store.clock.speed);
    if (sim.scenario) await whenSettled(sim.store, sim.scenario, settleMs);
    const dir = makeKubeconfigDir();
    const stop = async () => {
      try {
        await sim.stop();
      } finally {
        removeDir(dir);
      }
    };
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, sim.kubeconfig(await sim.tokenFor('drainbridge/drainbridge')), { mode: 0o600 });
    const adminKubeconfigPath = join(dir, 'admin.kubeconfig');
    writeFileSync(adminKubeconfigPath, sim.kubeconfig(sim.adminToken), { mode: 0o600 });
    return { sim, kubeconfigPath, adminKubeconfigPath, stop };
  } catch (error) {
    await sim.stop();
    throw error;
  }
}
