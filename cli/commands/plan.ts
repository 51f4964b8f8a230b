/** `drainbridge plan NODE [kubectl drain flags] [--json] [--kubeconfig F]`: what an evacuation would do. */
import { type AdmissionOutlook, admissionLimitsOf, admissionOutlook } from '../../lib/admission/index.ts';
import { planEvacuation } from '../../lib/branches/plan.ts';
import { renderPlanJson, renderPlanText } from '../../lib/branches/render.ts';
import { Instant } from '../../lib/bus/contracts/index.ts';
import { parseSelector } from '../../lib/clients/kube/selectors.ts';
import { isBlocked, type NodePlan } from '../../lib/model/plan.ts';
import type { DrainOptions } from '../../lib/model/request.ts';
import { parseNoticePolicy } from '../../lib/sources/clouds/config.ts';
import { describePolicy, type PolicyRow } from '../../lib/sources/clouds/policy.ts';
import { renderPolicyText } from '../../lib/sources/clouds/policy-render.ts';
import { type PlanTiming, planTiming, renderTimingText } from '../../lib/workflow/plan-timing.ts';
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
import { type DataFormat, dataFormatOf, dataOutputFlag, JSON_ALIAS_FLAG, renderData } from '../output/data-format.ts';

/** Exit code when the plan has blockers. */
export const EXIT_BLOCKED = EXIT.blocked;

const OWN_FLAGS: readonly FlagSpec[] = [
  dataOutputFlag('the plan'),
  JSON_ALIAS_FLAG,
  {
    name: 'infra-pod-selector',
    kind: 'value',
    value: 'SELECTOR',
    help: 'pods held back until the VM branches finish (default DRAINBRIDGE_INFRA_POD_SELECTOR)',
  },
  { name: 'server-dry-run', kind: 'switch', help: 'ask the API server to dry-run each eviction (default true)' },
  {
    name: 'not-before',
    kind: 'value',
    value: 'TIME',
    help: 'when a maintenance at TIME (ISO 8601) would start its evacuation (TIME − estimate − margin)',
  },
  {
    name: 'notice-policy',
    kind: 'switch',
    help: 'what each cloud notice type does (DRAINBRIDGE_NOTICE_POLICY applied); alone without NODE',
  },
];

const FLAGS: readonly FlagSpec[] = [...OWN_FLAGS, KUBEVIRT_RESTART_FLAG, ...CLUSTER_FLAGS, ...DRAIN_FLAGS];

export interface PlanArgs {
  readonly nodeName: string;
  readonly options: DrainOptions;
  /** `-o json|yaml` (or `--json`): the plan as data; `text` otherwise. */
  readonly format: DataFormat;
  readonly kubeconfig?: string;
  readonly infraPodSelector: string;
  readonly serverDryRun: boolean;
  /** When the maintenance begins: plan shows when its evacuation would start. */
  readonly notBefore?: Date;
  /** Print the cloud notice policy (alone when no NODE is given). */
  readonly noticePolicy: boolean;
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

function notBeforeOf(text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const parsed = Instant.safeParse(text);
  if (!parsed.success) throw new UsageError(`--not-before: ${parsed.error.issues[0]?.message ?? 'not a time'}`);
  return new Date(parsed.data);
}

/** Parses the command line (pure). */
export function parsePlanArgs(argv: readonly string[]): PlanArgs & { parsed: ReturnType<typeof parseCommandLine> } {
  const parsed = parseCommandLine(argv, FLAGS);
  const noticePolicy = isOn(parsed, 'notice-policy');
  // `plan --notice-policy` alone needs no node.
  const [nodeName = ''] = noticePolicy && parsed.positional.length === 0 ? [] : expectPositionals(parsed, ['NODE']);
  const kubeconfig = flagValue(parsed, 'kubeconfig');
  const notBefore = notBeforeOf(flagValue(parsed, 'not-before'));
  return {
    noticePolicy,
    ...(notBefore ? { notBefore } : {}),
    parsed,
    nodeName,
    options: drainOptionsOf(parsed),
    format: dataFormatOf(parsed),
    ...(kubeconfig ? { kubeconfig } : {}),
    infraPodSelector: selectorFlag('infra-pod-selector', flagValue(parsed, 'infra-pod-selector') ?? ''),
    serverDryRun: flagValue(parsed, 'server-dry-run') !== 'false',
  };
}

/** Each health gate's verdict under the admission line (nothing when none is configured). */
function renderGates(admission: AdmissionOutlook): string {
  const lines = admission.gates.map((gate) => `  gate ${gate.gate}: ${gate.open ? 'open' : 'CLOSED'} (${gate.why})`);
  return lines.length > 0 ? `\nHealth gates:\n${lines.join('\n')}` : '';
}

/** The plan, its timing and (when asked) the notice policy, as text, JSON or YAML. */
function render(
  format: DataFormat,
  parts: { nodePlan: NodePlan; timing: PlanTiming; admission: AdmissionOutlook; policy: PolicyRow[] | undefined },
): string {
  const { nodePlan, timing, admission, policy } = parts;
  if (format !== 'text') {
    const plan = JSON.parse(renderPlanJson(nodePlan)) as Record<string, unknown>;
    return renderData({ ...plan, timing, admission, ...(policy ? { noticePolicy: policy } : {}) }, format);
  }
  const admissionLine = `Admission now: ${admission.admit ? 'would start at once' : 'would wait'} (${admission.why})`;
  const text = `${renderPlanText(nodePlan)}\n${renderTimingText(timing)}\n${admissionLine}${renderGates(admission)}`;
  return policy ? `${text}\n\n${renderPolicyText(policy)}` : text;
}

/** The notice policy in force: the defaults with DRAINBRIDGE_NOTICE_POLICY applied; a bad override is a usage error. */
function noticePolicyRows(env: Readonly<Record<string, string | undefined>>): PolicyRow[] {
  const policy = parseNoticePolicy(env.DRAINBRIDGE_NOTICE_POLICY ?? '');
  if (Array.isArray(policy)) throw new UsageError(policy.map((p) => `${p.path}: ${p.message}`).join('\n'));
  return describePolicy(policy);
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'show what evacuating a node would do (pods to evict, skipped, blockers); changes nothing',
  usage: [
    'Usage: drainbridge plan NODE [kubectl drain flags] [--not-before TIME] [--notice-policy] [-o json|yaml]',
    '                        [--kubeconfig FILE] [--context NAME]',
    '       drainbridge plan --notice-policy [-o json|yaml]',
    '',
    'What an evacuation would do: pods to evict, those skipped and why, blockers (bare pods, DaemonSet pods,',
    'emptyDir, PDBs at 0, pods under two PDBs, launcher pods, replacements that fit nowhere, etcd quorum),',
    'with server dry-run evictions. Changes nothing.',
    '',
    DRAIN_FLAGS_HELP,
    'drainbridge flags: --infra-pod-selector=SELECTOR (pods held back until the VM branches finish;',
    '  default DRAINBRIDGE_INFRA_POD_SELECTOR), --kubeconfig FILE, --context NAME,',
    '  --server-dry-run=false (skip the API server dry-run evictions),',
    '  -o, --output json|yaml (the plan as data; --json is the same as -o json)',
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
  ].join('\n'),
  flags: FLAGS,
  operands: ['NODE'],
  exits: ['ok', 'failed', 'usage', 'blocked', 'notReady'],
  async run(argv, context: CommandContext = processContext()) {
    const args = parsePlanArgs(argv);
    const policy = args.noticePolicy ? noticePolicyRows(context.env) : undefined;
    if (!args.nodeName) {
      const data = { noticePolicy: policy };
      context.out(args.format === 'text' ? renderPolicyText(policy ?? []) : renderData(data, args.format));
      return EXIT.ok;
    }
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
    const timing = await planTiming(config, client, args.nodeName, {
      options: args.options,
      now: new Date(),
      planned: nodePlan,
      ...(args.notBefore ? { notBefore: args.notBefore } : {}),
    });
    const node = await client.getNode(args.nodeName);
    const admission = await admissionOutlook(client, node, admissionLimitsOf(config), new Date());
    context.out(render(args.format, { nodePlan, timing, admission, policy }));
    return isBlocked(nodePlan.plan) ? EXIT.blocked : EXIT.ok;
  },
};
