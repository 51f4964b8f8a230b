/**
 * kubectl drain's flags, declared once for every command that takes them (validated by lib/branches/pods/flags.ts,
 * which names the flag in every refusal). Light on purpose: `drainbridge forwarder` imports it and must
 * not load the embedded runtime (its memory budget, bench/README.md).
 */

import { drainOptionsFromFlags, drainOptionsSetByFlags } from '../lib/branches/pods/flags.ts';
import { InvalidInput } from '../lib/errors/index.ts';
import type { DrainOptions } from '../lib/model/request.ts';
import { UsageError } from './failures.ts';
import type { FlagSpec, ParsedCommandLine } from './flags.ts';

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
  return asUsageError(() => drainOptionsFromFlags(parsed.flags.filter(([name]) => DRAIN_NAMES.has(name))));
}

function asUsageError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidInput)
      throw new UsageError(error.problems.map((p) => `${p.path}: ${p.message}`).join('; '));
    throw error;
  }
}

/**
 * Only the drain options the command line sets: for the long-running commands (run, forwarder, node
 * agent), whose evacuations take these over their origin's defaults (docs/drain-defaults.md).
 */
export function drainOptionsSetBy(parsed: ParsedCommandLine): Partial<DrainOptions> {
  return asUsageError(() => drainOptionsSetByFlags(parsed.flags.filter(([name]) => DRAIN_NAMES.has(name))));
}

/** The drain flags given, written back as arguments (to hand to another command). */
export function drainArguments(parsed: ParsedCommandLine): string[] {
  return parsed.flags
    .filter(([name]) => DRAIN_NAMES.has(name))
    .map(([name, value]) => (value === 'true' && isSwitch(name) ? `--${name}` : `--${name}=${value}`));
}

/** The drain flags' paragraph of a long-running command's --help (run, forwarder, node agent). */
export const SERVICE_DRAIN_FLAGS_HELP = [
  'kubectl drain flags (--force, --ignore-daemonsets, --delete-emptydir-data or its old name --delete-local-data,',
  '  --grace-period, --timeout, --pod-selector, --disable-eviction, --skip-wait-for-delete-timeout, --chunk-size):',
  '  defaults for every evacuation this process starts. Each option comes from the first that sets it: the request itself',
  "  (an event's or window's `drain`), these flags, DRAINBRIDGE_DRAIN_*, the request's origin (cordon and",
  '  hand-sent requests: --ignore-daemonsets; NodeMaintenance, cloud notices, windows: also',
  "  --delete-emptydir-data --force, as node-maintenance-operator and AWS NTH), kubectl's default.",
  '  docs/drain-defaults.md has the table and the reasons.',
].join('\n');

/** The drain flags' paragraph of a command's --help. */
export const DRAIN_FLAGS_HELP = [
  'kubectl drain flags (kubectl defaults): --force, --ignore-daemonsets, --delete-emptydir-data',
  "  (--delete-local-data, kubectl's old name), --grace-period=-1, --timeout=0s, --pod-selector=SELECTOR,",
  '  --disable-eviction, --skip-wait-for-delete-timeout=0, --chunk-size=500',
].join('\n');
