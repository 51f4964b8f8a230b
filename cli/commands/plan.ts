/** `drainbridge plan NODE [kubectl drain flags] [--json] [--kubeconfig F]`: what an evacuation would do. */
import { isBlocked } from '../../lib/domain/plan.ts';
import type { DrainOptions } from '../../lib/domain/request.ts';
import { parseSelector } from '../../lib/kube/selectors.ts';
import { planEvacuation } from '../../lib/workflow/branches/plan.ts';
import { renderPlanJson, renderPlanText } from '../../lib/workflow/branches/render.ts';
import { connect, preflight } from '../cluster.ts';
import { type Command, type CommandContext, processContext, UsageError } from '../command.ts';
import {
  CLUSTER_FLAGS,
  DRAIN_FLAGS,
  DRAIN_FLAGS_HELP,
  drainOptionsOf,
  KUBEVIRT_RESTART_FLAG,
} from '../common-flags.ts';
import { EXIT } from '../exit-codes.ts';
import { expectPositionals, type FlagSpec, flagValue, isOn, parseCommandLine } from '../flags.ts';

/** Exit code when the plan has blockers. */
export const EXIT_BLOCKED = EXIT.blocked;

const OWN_FLAGS: readonly FlagSpec[] = [
  { name: 'json', kind: 'switch', help: 'the plan as JSON' },
  {
    name: 'infra-pod-selector',
    kind: 'value',
    value: 'SELECTOR',
    help: 'pods held back until the VM branches finish (default DRAINBRIDGE_INFRA_POD_SELECTOR)',
  },
  { name: 'server-dry-run', kind: 'switch', help: 'ask the API server to dry-run each eviction (default true)' },
];

const FLAGS: readonly FlagSpec[] = [...OWN_FLAGS, KUBEVIRT_RESTART_FLAG, ...CLUSTER_FLAGS, ...DRAIN_FLAGS];

export interface PlanArgs {
  readonly nodeName: string;
  readonly options: DrainOptions;
  readonly json: boolean;
  readonly kubeconfig?: string;
  readonly infraPodSelector: string;
  readonly serverDryRun: boolean;
}

/** A label selector flag, checked as the API server would parse it. */
function selectorFlag(name: string, value: string): string {
  try {
    parseSelector(value);
  } catch (error) {
    throw new UsageError(`--${name}: ${(error as Error).message}`);
  }
  return value;
}

/** Parses the command line (pure). */
export function parsePlanArgs(argv: readonly string[]): PlanArgs & { parsed: ReturnType<typeof parseCommandLine> } {
  const parsed = parseCommandLine(argv, FLAGS);
  const [nodeName = ''] = expectPositionals(parsed, ['NODE']);
  const kubeconfig = flagValue(parsed, 'kubeconfig');
  return {
    parsed,
    nodeName,
    options: drainOptionsOf(parsed),
    json: isOn(parsed, 'json'),
    ...(kubeconfig ? { kubeconfig } : {}),
    infraPodSelector: selectorFlag('infra-pod-selector', flagValue(parsed, 'infra-pod-selector') ?? ''),
    serverDryRun: flagValue(parsed, 'server-dry-run') !== 'false',
  };
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'show what evacuating a node would do (pods to evict, skipped, blockers); changes nothing',
  usage: [
    'Usage: drainbridge plan NODE [kubectl drain flags] [--json] [--kubeconfig FILE] [--context NAME]',
    '',
    'What an evacuation would do: pods to evict, those skipped and why, blockers (bare pods, DaemonSet pods,',
    'emptyDir, PDBs at 0, pods under two PDBs, launcher pods, replacements that fit nowhere, etcd quorum),',
    'with server dry-run evictions. Changes nothing.',
    '',
    DRAIN_FLAGS_HELP,
    'drainbridge flags: --infra-pod-selector=SELECTOR (pods held back until the VM branches finish;',
    '  default DRAINBRIDGE_INFRA_POD_SELECTOR), --kubeconfig FILE, --context NAME,',
    '  --server-dry-run=false (skip the API server dry-run evictions), --json',
    '',
    '  --kubevirt-restart-unmigratable (plan as with the opt-in: VMs that cannot live-migrate are restarted',
    '  through their VirtualMachine where KubeVirt allows it)',
    '',
    'With DRAINBRIDGE_NOVA=true and OS_* credentials, the plan has a nova branch: the servers to live-migrate,',
    'those that would block, and whether the other enabled hosts have room (Placement). Where KubeVirt runs,',
    'the kubevirt branch lists the VMs by eviction strategy: live-migrate, wait for an external controller,',
    'or blocker (None, not live-migratable) — never shut down unless opted in.',
  ].join('\n'),
  flags: FLAGS,
  operands: ['NODE'],
  exits: ['ok', 'failed', 'usage', 'blocked', 'notReady'],
  async run(argv, context: CommandContext = processContext()) {
    const args = parsePlanArgs(argv);
    const cluster = await connect(args.parsed, context, { chunkSize: args.options.chunkSize });
    const { config, client } = cluster;
    const needs = {
      operation: 'plan' as const,
      serverDryRun: args.serverDryRun,
      kubevirtRestart: config.kubevirt.restartUnmigratable,
    };
    if (!(await preflight(cluster, needs, context, 'drainbridge plan'))) return EXIT.notReady;
    const nodePlan = await planEvacuation(config, client, args.nodeName, {
      options: args.options,
      infraPodSelector: args.infraPodSelector || config.infraPodSelector,
      serverDryRun: args.serverDryRun,
    });
    context.out(args.json ? renderPlanJson(nodePlan) : renderPlanText(nodePlan));
    return isBlocked(nodePlan.plan) ? EXIT.blocked : EXIT.ok;
  },
};
