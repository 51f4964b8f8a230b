/** `drainbridge plan NODE [kubectl drain flags] [--json] [--kubeconfig F]`: what an evacuation would do. */
import { buildKubeConfig } from '../../lib/config/index.ts';
import { isBlocked } from '../../lib/domain/plan.ts';
import type { DrainOptions } from '../../lib/domain/request.ts';
import { drainOptionsFromFlags } from '../../lib/drain/flags.ts';
import type { NodePlan } from '../../lib/drain/plan-node.ts';
import { InvalidInput } from '../../lib/errors/index.ts';
import { Instant } from '../../lib/events/fields.ts';
import { KubeClient } from '../../lib/kube/client.ts';
import { parseNoticePolicy } from '../../lib/sources/config.ts';
import { describePolicy, type PolicyRow } from '../../lib/sources/policy.ts';
import { renderPolicyText } from '../../lib/sources/policy-render.ts';
import { planEvacuation } from '../../lib/workflow/branches/plan.ts';
import { renderPlanJson, renderPlanText } from '../../lib/workflow/branches/render.ts';
import { type PlanTiming, planTiming, renderTimingText } from '../../lib/workflow/plan-timing.ts';
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
  'not-before': true,
  'notice-policy': false,
  'kubevirt-restart-unmigratable': false,
};

export interface PlanArgs {
  readonly nodeName: string;
  readonly drainFlags: readonly (readonly [string, string | undefined])[];
  readonly json: boolean;
  readonly kubeconfig?: string;
  readonly infraPodSelector: string;
  readonly serverDryRun: boolean;
  /** When the maintenance begins: plan shows when its evacuation would start. */
  readonly notBefore?: Date;
  /** Print the cloud notice policy (alone when no NODE is given). */
  readonly noticePolicy: boolean;
  /** drainbridge's own flags as given (the opt-ins among them). */
  readonly own: ReadonlyMap<string, string>;
}

function flagOn(own: ReadonlyMap<string, string | undefined>, name: string): boolean {
  return own.has(name) && own.get(name) !== 'false';
}

function notBeforeOf(text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const parsed = Instant.safeParse(text);
  if (!parsed.success) throw new UsageError(`--not-before: ${parsed.error.issues[0]?.message ?? 'not a time'}`);
  return new Date(parsed.data);
}

/** Parses the command line (pure). */
export function parsePlanArgs(argv: readonly string[]): PlanArgs {
  const { positional, own, drainFlags } = parseArgs(argv, OWN);
  const noticePolicy = flagOn(own, 'notice-policy');
  if (positional.length > 1 || (positional.length === 0 && !noticePolicy))
    throw new UsageError(`expected exactly one NODE, got ${positional.length}`);
  const notBefore = notBeforeOf(own.get('not-before'));
  return {
    nodeName: positional[0] ?? '',
    drainFlags,
    json: flagOn(own, 'json'),
    kubeconfig: own.get('kubeconfig'),
    infraPodSelector: own.get('infra-pod-selector') ?? '',
    serverDryRun: own.get('server-dry-run') !== 'false',
    noticePolicy,
    own,
    ...(notBefore ? { notBefore } : {}),
  };
}

function drainOptionsOf(args: PlanArgs): DrainOptions {
  try {
    return drainOptionsFromFlags(args.drainFlags);
  } catch (error) {
    if (error instanceof InvalidInput) throw new UsageError(error.message);
    throw error;
  }
}

/** The plan, its timing and (when asked) the notice policy, as text or JSON. */
function render(
  json: boolean,
  parts: { nodePlan: NodePlan; timing: PlanTiming; policy: PolicyRow[] | undefined },
): string {
  const { nodePlan, timing, policy } = parts;
  if (json) {
    const plan = JSON.parse(renderPlanJson(nodePlan)) as Record<string, unknown>;
    return JSON.stringify({ ...plan, timing, ...(policy ? { noticePolicy: policy } : {}) }, null, 2);
  }
  const text = `${renderPlanText(nodePlan)}\n${renderTimingText(timing)}`;
  return policy ? `${text}\n\n${renderPolicyText(policy)}` : text;
}

/** The notice policy in force: the defaults with DRAINBRIDGE_NOTICE_POLICY applied; a bad override is a usage error. */
function noticePolicyRows(env: NodeJS.ProcessEnv = process.env): PolicyRow[] {
  const policy = parseNoticePolicy(env.DRAINBRIDGE_NOTICE_POLICY ?? '');
  if (Array.isArray(policy)) throw new UsageError(policy.map((p) => `${p.path}: ${p.message}`).join('\n'));
  return describePolicy(policy);
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'show what evacuating a node would do (pods to evict, skipped, blockers); changes nothing',
  usage: [
    'Usage: drainbridge plan NODE [kubectl drain flags] [--not-before TIME] [--notice-policy] [--json] [--kubeconfig FILE]',
    '       drainbridge plan --notice-policy [--json]',
    '',
    'kubectl drain flags (kubectl defaults): --force, --ignore-daemonsets, --delete-emptydir-data,',
    '  --grace-period=-1, --timeout=0s, --pod-selector=SELECTOR, --disable-eviction,',
    '  --skip-wait-for-delete-timeout=0, --chunk-size=500',
    'drainbridge flags: --infra-pod-selector=SELECTOR (pods held back until the VM branches finish;',
    '  default DRAINBRIDGE_INFRA_POD_SELECTOR), --kubeconfig FILE (default: DRAINBRIDGE_KUBE_ACCESS / KUBECONFIG),',
    '  --server-dry-run=false (skip the API server dry-run evictions), --json',
    '',
    'The plan ends with the estimated evacuation time and the starts scheduled for the node; --not-before TIME',
    '(ISO 8601) shows when an evacuation for a maintenance at TIME would start (TIME − estimate − margin).',
    '--notice-policy prints what each cloud notice type does (with DRAINBRIDGE_NOTICE_POLICY applied).',
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
    const policy = args.noticePolicy ? noticePolicyRows() : undefined;
    if (!args.nodeName) {
      console.log(args.json ? JSON.stringify({ noticePolicy: policy }, null, 2) : renderPolicyText(policy ?? []));
      return 0;
    }
    const options = drainOptionsOf(args);
    const config = configFor(args.kubeconfig, process.env, args.own);
    const client = new KubeClient(await buildKubeConfig(config), { chunkSize: options.chunkSize });
    const nodePlan = await planEvacuation(config, client, args.nodeName, {
      options,
      infraPodSelector: args.infraPodSelector || config.infraPodSelector,
      serverDryRun: args.serverDryRun,
    });
    const timing = await planTiming(config, client, args.nodeName, {
      options,
      now: new Date(),
      planned: nodePlan,
      ...(args.notBefore ? { notBefore: args.notBefore } : {}),
    });
    console.log(render(args.json, { nodePlan, timing, policy }));
    return isBlocked(nodePlan.plan) ? EXIT_BLOCKED : 0;
  },
};
