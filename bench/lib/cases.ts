/**
 * The benchmark cases: which scenario, which node, which drain options. Both tools get exactly the same
 * options; `kubectlFlags` and `drainOptions` are two spellings of one setting.
 */
import { fileURLToPath } from 'node:url';
import { type DrainOptions, KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';

/** One benchmark case. */
export interface BenchCase {
  /** Short name for tables and result files. */
  readonly name: string;
  /** A bundled simulator scenario name or a scenario file path. */
  readonly scenario: string;
  readonly node: string;
  /** The simulator's clock speed (simulated seconds per real second). */
  readonly speed: number;
  readonly drainOptions: DrainOptions;
  readonly kubectlFlags: readonly string[];
  /** What the case exercises, for the report. */
  readonly description: string;
}

/** `--ignore-daemonsets --delete-emptydir-data --force` plus an optional `--pod-selector`. */
function drainSetting(podSelector: string): Pick<BenchCase, 'drainOptions' | 'kubectlFlags'> {
  const drainOptions: DrainOptions = {
    ...KUBECTL_DRAIN_DEFAULTS,
    force: true,
    ignoreDaemonSets: true,
    deleteEmptyDirData: true,
    podSelector,
  };
  const kubectlFlags = ['--ignore-daemonsets', '--delete-emptydir-data', '--force'];
  if (podSelector) kubectlFlags.push(`--pod-selector=${podSelector}`);
  return { drainOptions, kubectlFlags };
}

/** KubeVirt launcher pods are drained by neither tool (drainbridge live-migrates their VMs instead). */
export const NOT_LAUNCHERS = 'kubevirt.io!=virt-launcher';

/** The default cases, at `speed` (the same for both tools). */
export function defaultCases(speed: number): BenchCase[] {
  return [
    {
      name: 'busy-node',
      scenario: 'busy-node',
      node: 'busy-node',
      speed,
      description:
        '110 pods: bare, emptyDir, finished Job, DaemonSet, static, 3 PDBs (web 80%, api/queue maxUnavailable 1)',
      ...drainSetting(NOT_LAUNCHERS),
    },
    {
      name: 'pdb-heavy',
      scenario: fileURLToPath(new URL('../scenarios/pdb-heavy.yaml', import.meta.url)),
      node: 'node-1',
      speed,
      description: '15 pods, each behind a PDB allowing one disruption at a time (6 + 6 + StatefulSet 3)',
      ...drainSetting(''),
    },
  ];
}
