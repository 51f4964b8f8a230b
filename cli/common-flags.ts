/**
 * Flags shared by several commands: how to reach the cluster, and kubectl drain's flags (validated by
 * lib/drain/flags.ts, which names the flag in every refusal).
 */
import type { Config } from '../lib/config/index.ts';
import type { DrainOptions } from '../lib/domain/request.ts';
import { drainOptionsFromFlags } from '../lib/drain/flags.ts';
import { InvalidInput } from '../lib/errors/index.ts';
import { UsageError } from './command.ts';
import { configFor, OPT_IN_FLAGS } from './embedded.ts';
import { type FlagSpec, flagValue, type ParsedCommandLine } from './flags.ts';

export { CLUSTER_FLAGS, CONTEXT_FLAG, KUBECONFIG_FLAG } from './cluster-flags.ts';
export { LOG_FLAGS } from './log-flags.ts';

/** kubectl drain's flags (kubectl 1.32 names and defaults). */
export const DRAIN_FLAGS: readonly FlagSpec[] = [
  { name: 'force', kind: 'switch', help: 'also evict pods no controller manages (they are evicted, never deleted)' },
  { name: 'ignore-daemonsets', kind: 'switch', help: 'skip DaemonSet-managed pods instead of refusing' },
  { name: 'delete-emptydir-data', kind: 'switch', help: 'evict pods with emptyDir volumes (their data is lost)' },
  { name: 'delete-local-data', kind: 'switch', help: 'kubectl’s deprecated name of --delete-emptydir-data' },
  { name: 'grace-period', kind: 'value', value: 'SECONDS', help: "seconds each pod gets (default -1: the pod's own)" },
  {
    name: 'timeout',
    kind: 'value',
    value: 'DURATION',
    help: 'give up after this long, e.g. 90s, 5m (default 0s: no limit)',
  },
  { name: 'pod-selector', kind: 'value', value: 'SELECTOR', help: 'only pods matching this label selector' },
  {
    name: 'disable-eviction',
    kind: 'switch',
    help: 'delete instead of evict, bypassing PDBs (needs deploy/base/rbac/disable-eviction.yaml)',
  },
  {
    name: 'skip-wait-for-delete-timeout',
    kind: 'value',
    value: 'SECONDS',
    help: 'stop waiting for pods deleted longer ago than this (default 0: wait)',
  },
  { name: 'chunk-size', kind: 'value', value: 'N', help: 'page size when listing pods (default 500)' },
];

const DRAIN_NAMES = new Set(DRAIN_FLAGS.map((f) => f.name));

function isSwitch(name: string): boolean {
  return DRAIN_FLAGS.some((f) => f.name === name && f.kind === 'switch');
}

/** The drain options the command line asks for; a bad value is a usage error naming the flag. */
export function drainOptionsOf(parsed: ParsedCommandLine): DrainOptions {
  try {
    return drainOptionsFromFlags(parsed.flags.filter(([name]) => DRAIN_NAMES.has(name)));
  } catch (error) {
    if (error instanceof InvalidInput)
      throw new UsageError(error.problems.map((p) => `${p.path}: ${p.message}`).join('; '));
    throw error;
  }
}

/** The drain flags given, written back as arguments (to hand to another command). */
export function drainArguments(parsed: ParsedCommandLine): string[] {
  return parsed.flags
    .filter(([name]) => DRAIN_NAMES.has(name))
    .map(([name, value]) => (value === 'true' && isSwitch(name) ? `--${name}` : `--${name}=${value}`));
}

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

/** The drain flags' paragraph of a command's --help. */
export const DRAIN_FLAGS_HELP = [
  'kubectl drain flags (kubectl defaults): --force, --ignore-daemonsets, --delete-emptydir-data',
  "  (--delete-local-data, kubectl's old name), --grace-period=-1, --timeout=0s, --pod-selector=SELECTOR,",
  '  --disable-eviction, --skip-wait-for-delete-timeout=0, --chunk-size=500',
].join('\n');
