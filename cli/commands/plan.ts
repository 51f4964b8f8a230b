/** `drainbridge plan NODE [kubectl drain flags] [--json] [--kubeconfig F]`: what an evacuation would do. */
import { buildKubeConfig } from '../../lib/config/index.ts';
import { isBlocked } from '../../lib/domain/plan.ts';
import { drainOptionsFromFlags } from '../../lib/drain/flags.ts';
import { InvalidInput } from '../../lib/errors/index.ts';
import { KubeClient } from '../../lib/kube/client.ts';
import { planEvacuation } from '../../lib/workflow/branches/plan.ts';
import { renderPlanJson, renderPlanText } from '../../lib/workflow/branches/render.ts';
import { parseArgs } from '../args.ts';
import { type Command, UsageError } from '../command.ts';
import { configFor } from '../embedded.ts';

/** Exit code when the plan has blockers (1 is an error, 2 a usage error). */
export const EXIT_BLOCKED = 3;

/** plan's own flags (true: takes a value); every other flag is a kubectl drain flag. */
const OWN = {
  json: false,
  kubeconfig: true,
  'infra-pod-selector': true,
  'server-dry-run': false,
  'kubevirt-restart-unmigratable': false,
};

export interface PlanArgs {
  readonly nodeName: string;
  readonly drainFlags: readonly (readonly [string, string | undefined])[];
  readonly json: boolean;
  readonly kubeconfig?: string;
  readonly infraPodSelector: string;
  readonly serverDryRun: boolean;
  /** drainbridge's own flags as given (the opt-ins among them). */
  readonly own: ReadonlyMap<string, string>;
}

/** Parses the command line (pure). */
export function parsePlanArgs(argv: readonly string[]): PlanArgs {
  const { positional, own, drainFlags } = parseArgs(argv, OWN);
  if (positional.length !== 1) throw new UsageError(`expected exactly one NODE, got ${positional.length}`);
  return {
    nodeName: positional[0] ?? '',
    drainFlags,
    json: own.has('json') && own.get('json') !== 'false',
    kubeconfig: own.get('kubeconfig'),
    infraPodSelector: own.get('infra-pod-selector') ?? '',
    serverDryRun: own.get('server-dry-run') !== 'false',
    own,
  };
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'show what evacuating a node would do (pods to evict, skipped, blockers); changes nothing',
  usage: [
    'Usage: drainbridge plan NODE [kubectl drain flags] [--json] [--kubeconfig FILE]',
    '',
    'kubectl drain flags (kubectl defaults): --force, --ignore-daemonsets, --delete-emptydir-data,',
    '  --grace-period=-1, --timeout=0s, --pod-selector=SELECTOR, --disable-eviction,',
    '  --skip-wait-for-delete-timeout=0, --chunk-size=500',
    'drainbridge flags: --infra-pod-selector=SELECTOR (pods held back until the VM branches finish;',
    '  default DRAINBRIDGE_INFRA_POD_SELECTOR), --kubeconfig FILE (default: DRAINBRIDGE_KUBE_ACCESS / KUBECONFIG),',
    '  --server-dry-run=false (skip the API server dry-run evictions), --json',
    '',
    '  --kubevirt-restart-unmigratable (plan as with the opt-in: VMs that cannot live-migrate are restarted',
    '  through their VirtualMachine where KubeVirt allows it)',
    '',
    'With DRAINBRIDGE_NOVA=true and OS_* credentials, the plan has a nova branch: the servers to live-migrate,',
    'those that would block, and whether the other enabled hosts have room (Placement). Where KubeVirt runs,',
    'the kubevirt branch lists the VMs by eviction strategy: live-migrate, wait for an external controller,',
    'or blocker (None, not live-migratable) — never shut down unless opted in.',
    `Exit status: 0 not blocked, ${EXIT_BLOCKED} blocked, 1 error, 2 usage error.`,
  ].join('\n'),
  async run(argv) {
    const args = parsePlanArgs(argv);
    let options: ReturnType<typeof drainOptionsFromFlags>;
    try {
      options = drainOptionsFromFlags(args.drainFlags);
    } catch (error) {
      if (error instanceof InvalidInput) throw new UsageError(error.message);
      throw error;
    }
    const config = configFor(args.kubeconfig, process.env, args.own);
    const client = new KubeClient(await buildKubeConfig(config), { chunkSize: options.chunkSize });
    const nodePlan = await planEvacuation(config, client, args.nodeName, {
      options,
      infraPodSelector: args.infraPodSelector || config.infraPodSelector,
      serverDryRun: args.serverDryRun,
    });
    console.log(args.json ? renderPlanJson(nodePlan) : renderPlanText(nodePlan));
    return isBlocked(nodePlan.plan) ? EXIT_BLOCKED : 0;
  },
};
