/**
 * How to reach the cluster, as flags. A module of its own with no imports but the flag type: the
 * forwarder declares `--kubeconfig` too and must not load what cli/common-flags.ts brings (the embedded
 * runtime; its memory budget, bench/README.md).
 */
import type { FlagSpec } from './flags.ts';

export const KUBECONFIG_FLAG: FlagSpec = {
  name: 'kubeconfig',
  kind: 'value',
  value: 'FILE',
  help: 'the kubeconfig to use (default: DRAINBRIDGE_KUBE_ACCESS, else KUBECONFIG, else ~/.kube/config)',
};

export const CONTEXT_FLAG: FlagSpec = {
  name: 'context',
  kind: 'value',
  value: 'NAME',
  help: 'the kubeconfig context to use (default: its current-context; DRAINBRIDGE_KUBE_CONTEXT)',
};

/** How to reach the cluster. */
export const CLUSTER_FLAGS: readonly FlagSpec[] = [KUBECONFIG_FLAG, CONTEXT_FLAG];
