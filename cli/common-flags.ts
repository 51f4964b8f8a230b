/**
 * Flags shared by several commands: how to reach the cluster, and kubectl drain's flags (cli/drain-flags.ts).
 */
import type { Config } from '../lib/config/index.ts';
import { configFor, OPT_IN_FLAGS } from './embedded.ts';
import { type FlagSpec, flagValue, type ParsedCommandLine } from './flags.ts';

export { CLUSTER_FLAGS, CONTEXT_FLAG, KUBECONFIG_FLAG } from './cluster-flags.ts';
export {
  DRAIN_FLAGS,
  DRAIN_FLAGS_HELP,
  drainArguments,
  drainOptionsOf,
  drainOptionsSetBy,
  SERVICE_DRAIN_FLAGS_HELP,
} from './drain-flags.ts';
export { LOG_FLAGS } from './log-flags.ts';

/** `--kubevirt-restart-unmigratable`: an opt-in flag (cli/embedded.ts OPT_IN_FLAGS) over its variable. */
export const KUBEVIRT_RESTART_FLAG: FlagSpec = {
  name: 'kubevirt-restart-unmigratable',
  kind: 'switch',
  help: 'opt-in: restart (on another node) KubeVirt VMs that cannot live-migrate, where their VirtualMachine runs them always',
};

/**
 * The configuration: the environment, with --kubeconfig/--context over KUBECONFIG/DRAINBRIDGE_KUBE_CONTEXT
 * and the opt-in flags over their variables.
 */
export function configOf(parsed: ParsedCommandLine, env: Readonly<Record<string, string | undefined>>): Config {
  const context = flagValue(parsed, 'context');
  const optIns = new Map(parsed.flags.filter(([name]) => name in OPT_IN_FLAGS));
  return configFor(
    flagValue(parsed, 'kubeconfig'),
    { ...env, ...(context ? { DRAINBRIDGE_KUBE_CONTEXT: context } : {}) },
    optIns,
  );
}
