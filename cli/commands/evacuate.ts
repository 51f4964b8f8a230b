/** `drainbridge evacuate NODE`: run the Evacuate state machine embedded against a cluster (and Nova). */
import type { DetailByType } from '../../lib/bus/contracts/index.ts';
import { isNotFound } from '../../lib/clients/kube/errors.ts';
import { evacuationName } from '../../lib/clients/kube/paths.ts';
import { drivingSentence } from '../../lib/workflow/driver.ts';
import { withdrawWaiting } from '../../lib/workflow/never-held.ts';
import { otherNodeOf, reusedIdMessage } from '../../lib/workflow/request-node.ts';
import { afterInterrupt } from '../after-interrupt.ts';
import { type Cluster, connect, preflight } from '../cluster.ts';
import { type Command, type CommandContext, processContext, UsageError } from '../command.ts';
import {
  CLUSTER_FLAGS,
  DRAIN_FLAGS,
  DRAIN_FLAGS_HELP,
  drainArguments,
  drainOptionsOf,
  KUBEVIRT_RESTART_FLAG,
} from '../common-flags.ts';
import { requesterName, startEmbedded, wakeOwnWaiters } from '../embedded.ts';
import { EXIT, type ExitCode, exitForSignal } from '../exit-codes.ts';
import {
  expectPositionals,
  type FlagSpec,
  flagValue,
  isOn,
  type ParsedCommandLine,
  parseCommandLine,
} from '../flags.ts';
import { describeNode, type NodeState, readNamedNode } from '../node-state.ts';
import { createRenderer, OUTPUT_FLAG, OUTPUT_HELP, outputModeOf, type RunOutput } from '../output/index.ts';
import { shellWords, validateRequest } from '../request.ts';
import { type MachineOutcome, runMachine } from '../run-machine.ts';
import { type ExistingDecision, planExisting } from './evacuate-existing.ts';
import { followRequest } from './evacuate-follow.ts';
import { explainEvacuationEnd } from './evacuate-outcome.ts';
import { planCommand } from './plan.ts';

const OWN_FLAGS: readonly FlagSpec[] = [
  { name: 'reason', kind: 'value', value: 'TEXT', help: 'why, for the record and the node’s Events' },
  {
    name: 'request-id',
    kind: 'value',
    value: 'ID',
    help: 'the idempotency key (default manual-NODE-<time>); the same ID again resumes',
  },
  { name: 'deadline', kind: 'value', value: 'ISO-8601', help: 'give up at this instant, e.g. 2026-12-01T06:00:00Z' },
  { name: 'dry-run', kind: 'switch', help: 'print the plan (as `drainbridge plan`) and change nothing' },
];

const FLAGS: readonly FlagSpec[] = [...OWN_FLAGS, OUTPUT_FLAG, KUBEVIRT_RESTART_FLAG, ...CLUSTER_FLAGS, ...DRAIN_FLAGS];

/** The request's default id: `manual-NODE-20261125T101500`. */
function defaultRequestId(node: string, now: Date): string {
  return `manual-${node}-${now.toISOString().replace(/[-:.]/g, '').slice(0, 15)}`;
}

interface EvacuateArgs {
  readonly parsed: ParsedCommandLine;
  readonly node: string;
  readonly detail: DetailByType['Maintenance Requested'];
}

/** Parses and validates everything before anything is contacted (pure but for the clock). */
export function parseEvacuateArgs(argv: readonly string[], now: Date = new Date()): EvacuateArgs {
  const parsed = parseCommandLine(argv, FLAGS);
  const [node = ''] = expectPositionals(parsed, ['NODE']);
  const deadline = flagValue(parsed, 'deadline');
  const detail: DetailByType['Maintenance Requested'] = {
    version: '1',
    requestId: flagValue(parsed, 'request-id') ?? defaultRequestId(node, now),
    requester: requesterName(),
    origin: 'manual',
    target: { nodeName: node },
    reason: flagValue(parsed, 'reason') ?? 'drainbridge evacuate',
    ...(deadline ? { deadline } : {}),
    drain: drainOptionsOf(parsed),
  };
  validateRequest('Maintenance Requested', detail);
  if (deadline && Date.parse(deadline) <= now.getTime()) {
    throw new UsageError(`--deadline: ${deadline} has already passed (now ${now.toISOString()})`);
  }
  return { parsed, node, detail };
}

/** The command line that resumes this request (the same flags, the request id made explicit). */
function resumeCommand(args: EvacuateArgs): string {
  const cluster = (['kubeconfig', 'context'] as const).flatMap((name) => {
    const value = flagValue(args.parsed, name);
    return value ? [`--${name}`, value] : [];
  });
  return shellWords([
    'drainbridge',
    'evacuate',
    args.node,
    '--request-id',
    args.detail.requestId,
    ...drainArguments(args.parsed),
    ...(isOn(args.parsed, KUBEVIRT_RESTART_FLAG.name) ? [`--${KUBEVIRT_RESTART_FLAG.name}`] : []),
    ...cluster,
  ]);
}

function restoreCommand(args: EvacuateArgs): string {
  const kubeconfig = flagValue(args.parsed, 'kubeconfig');
  return shellWords([
    'drainbridge',
    'restore',
    args.node,
    '--request-id',
    args.detail.requestId,
    ...(kubeconfig ? ['--kubeconfig', kubeconfig] : []),
  ]);
}

/** What Ctrl-C leaves, and the two commands that resume or undo it. */
function interruptedWords(
  outcome: Extract<MachineOutcome, { kind: 'interrupted' }>,
  state: NodeState,
  args: EvacuateArgs,
): string[] {
  return [
    `drainbridge evacuate: ${outcome.signal}: stopped before the next step; ${state.sentence}.`,
    ...(outcome.handedBack ? [] : ['The request could not be handed back: a re-run waits up to 2 minutes for it.']),
    `To resume: ${resumeCommand(args)}`,
    undoWords(state, args),
  ];
}

function undoWords(state: NodeState, args: EvacuateArgs): string {
  if (state.heldByRequest) return `To undo:   ${restoreCommand(args)}`;
  // Unread, it may hold the node: say how to undo rather than that nothing is to be undone.
  if (state.unknown) return `If it holds the node, to undo: ${restoreCommand(args)}`;
  return 'Nothing to undo: this request holds nothing on the node.';
}

/**
 * A request stopped while it still waited for a slot is withdrawn (its record ends; a re-run with the same
 * id waits again), so no record is left waiting for ever with nothing driving it. False when it was not
 * waiting, or when the record could not be written (then it says nothing it did not do).
 */
async function withdrawInterrupted(cluster: Cluster, args: EvacuateArgs, signal: NodeJS.Signals): Promise<boolean> {
  const why = `drainbridge evacuate was stopped (${signal}) while the request waited for a slot; it never held node ${args.node}`;
  try {
    return await afterInterrupt(() =>
      withdrawWaiting(
        { client: cluster.client, namespace: cluster.config.namespace },
        { requestId: args.detail.requestId, nodeName: args.node },
        why,
        new Date(),
      ),
    );
  } catch {
    return false;
  }
}

async function evacuate(args: EvacuateArgs, cluster: Cluster, context: CommandContext): Promise<ExitCode> {
  const output: RunOutput = createRenderer(context, {
    mode: outputModeOf(args.parsed, context),
    title: `drainbridge evacuate ${args.node}`,
  });
  try {
    const { runtime } = await startEmbedded(cluster.config, output.events);
    const waker = wakeOwnWaiters(cluster.config, runtime);
    output.events.note(`evacuating ${args.node} (request ${args.detail.requestId})`);
    const outcome: MachineOutcome = await runMachine(
      {
        runtime,
        client: cluster.client,
        namespace: cluster.config.namespace,
        requestId: args.detail.requestId,
        put: () => runtime.put('Maintenance Requested', args.detail),
        find: () => runtime.executionsFor(args.detail.requestId).find((e) => e.machine === 'evacuate'),
      },
      context,
    ).finally(() => waker.stop());
    const read =
      outcome.kind === 'interrupted' ? (name: string) => afterInterrupt(() => cluster.client.getNode(name)) : undefined;
    const state = await describeNode(cluster.client, args.node, args.detail.requestId, read);
    // The run's display ends before the closing words (a live display's last frame stays above them).
    output.close();
    if (outcome.kind === 'interrupted') {
      const withdrawn = state.heldByRequest ? false : await withdrawInterrupted(cluster, args, outcome.signal);
      for (const line of interruptedWords(outcome, state, args)) context.err(line);
      if (withdrawn) context.err(`Request ${args.detail.requestId} is withdrawn: its record says so.`);
      return exitForSignal(outcome.signal);
    }
    const end = explainEvacuationEnd(outcome, output.recorded, { state, restore: restoreCommand(args) });
    for (const line of end.lines) (end.exit === EXIT.ok ? output.out : context.err)(line);
    return end.exit;
  } finally {
    output.close();
  }
}

/** What drainbridge already does on the node (evacuate-existing.ts), read from the cluster. */
async function existingOn(args: EvacuateArgs, cluster: Cluster): Promise<ExistingDecision> {
  const [node, records] = await Promise.all([
    readNamedNode(cluster.client, args.node),
    cluster.client.listEvacuations(`drainbridge.io/node=${args.node}`),
  ]);
  return planExisting({
    node,
    records,
    requestId: args.detail.requestId,
    explicitId: flagValue(args.parsed, 'request-id') !== undefined,
    drainFlags: drainArguments(args.parsed).length > 0,
    now: new Date(),
  });
}

/** The node `requestId`'s record names when it is not `node` (a request id reused for another node). */
async function nodeOfRequest(cluster: Cluster, requestId: string, node: string): Promise<string | undefined> {
  try {
    return otherNodeOf(await cluster.client.getEvacuation(evacuationName(requestId)), node);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The same command, for another request (one that runs already): its resume and restore hints name it. */
function forRequest(args: EvacuateArgs, detail: EvacuateArgs['detail']): EvacuateArgs {
  return { ...args, detail };
}

/**
 * Evacuates, unless another request evacuates the node already: then follows it (and resumes it here
 * if its driver stops), or resumes it at once when nothing drives it. No second hold is taken.
 */
async function evacuateOrFollow(args: EvacuateArgs, cluster: Cluster, context: CommandContext): Promise<ExitCode> {
  // At once, before waiting for the request to be handed back: its namesake on the other node holds it.
  const elsewhere = await nodeOfRequest(cluster, args.detail.requestId, args.node);
  if (elsewhere) {
    context.err(
      `drainbridge evacuate: refused: ${reusedIdMessage(args.detail.requestId, elsewhere, args.node)}. Nothing was done.`,
    );
    return EXIT.refused;
  }
  const existing = await existingOn(args, cluster);
  if (existing.action === 'run')
    return evacuate(existing.detail ? forRequest(args, existing.detail) : args, cluster, context);
  const other = existing.action === 'follow' ? existing.record.spec.requestId : existing.detail.requestId;
  if (existing.action === 'resume') {
    context.err(
      `drainbridge evacuate: node ${args.node} is being evacuated by request ${other}, but ${drivingSentence(existing.driving)}; resuming it here.`,
    );
    return evacuate(forRequest(args, existing.detail), cluster, context);
  }
  const driving = drivingSentence(existing.driving);
  context.err(
    `drainbridge evacuate: node ${args.node} is already evacuated by request ${other}${driving ? ` (${driving})` : ''}; following it instead of adding a second hold (a new request on purpose: --request-id NEW).`,
  );
  const json = outputModeOf(args.parsed, context) === 'json';
  const end = await followRequest({ client: cluster.client, nodeName: args.node, requestId: other, json }, context);
  if (end.kind === 'exit') return end.code;
  context.err(`drainbridge evacuate: request ${other} is no longer driven by any process; resuming it here.`);
  return evacuate(forRequest(args, end.detail), cluster, context);
}

export const evacuateCommand: Command = {
  name: 'evacuate',
  summary: 'cordon a node and move everything off it (pods, Nova servers), embedded; prints progress',
  usage: [
    'Usage: drainbridge evacuate NODE [--reason TEXT] [--request-id ID] [--deadline ISO-8601]',
    '                            [--kubeconfig FILE] [--context NAME] [--dry-run] [kubectl drain flags]',
    '                            [--kubevirt-restart-unmigratable] [-o, --output auto|live|plain|json]',
    '',
    'Runs the same Evacuate state machine that deploys to AWS, in this process. It first checks that the',
    'cluster is ready (drainbridge check) and changes nothing if not. The node stays cordoned afterwards',
    '(and on failure); `drainbridge restore NODE` ends the maintenance.',
    '  --request-id ID  the idempotency key (default manual-NODE-<time>); run again with the same ID to',
    '                   resume after Ctrl-C or a crash: nothing done already is done twice',
    '  --deadline T     give up at T (ISO 8601); the node is left cordoned and held',
    '  --dry-run        print the plan (as `drainbridge plan`) and change nothing',
    '  --kubevirt-restart-unmigratable  opt-in: KubeVirt VMs that cannot live-migrate (None, or',
    '                   LiveMigrateIfPossible not migratable) are restarted on another node when their',
    '                   VirtualMachine runs them always (DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE); off:',
    '                   they are blockers, never shut down',
    OUTPUT_HELP,
    DRAIN_FLAGS_HELP,
    'Ctrl-C stops before the next step, hands the request back and prints the commands that resume or undo it.',
    'When another request already evacuates NODE, evacuate adds no second hold: it follows that request',
    '(prints its progress, exits with its outcome; Ctrl-C stops only the following), or resumes it here when',
    'no process drives it any more (stopped by Ctrl-C, or killed). --request-id NEW starts a new one on purpose.',
    'Environment: DRAINBRIDGE_* settings (docs/configuration.md); DRAINBRIDGE_NOVA=true with OS_* for Nova.',
  ].join('\n'),
  flags: FLAGS,
  operands: ['NODE'],
  exits: ['ok', 'failed', 'usage', 'notReady', 'refused', 'interrupted', 'terminated'],
  async run(argv, context: CommandContext = processContext()) {
    const args = parseEvacuateArgs(argv);
    if (isOn(args.parsed, 'dry-run')) {
      const cluster = (['kubeconfig', 'context'] as const).flatMap((name) => {
        const value = flagValue(args.parsed, name);
        return value ? [`--${name}=${value}`] : [];
      });
      const restart = isOn(args.parsed, KUBEVIRT_RESTART_FLAG.name) ? [`--${KUBEVIRT_RESTART_FLAG.name}`] : [];
      return planCommand.run([args.node, ...drainArguments(args.parsed), ...restart, ...cluster], context);
    }
    const cluster = await connect(args.parsed, context, { chunkSize: args.detail.drain?.chunkSize });
    const needs = {
      operation: 'evacuate' as const,
      disableEviction: args.detail.drain?.disableEviction === true,
      kubevirtRestart: cluster.config.kubevirt.restartUnmigratable,
    };
    if (!(await preflight(cluster, needs, context, 'drainbridge evacuate'))) return EXIT.notReady;
    return evacuateOrFollow(args, cluster, context);
  },
};
