/** `drainbridge restore NODE`: end a maintenance request (Restore state machine, embedded). */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../../lib/clients/kube/client.ts';
import { readLedger } from '../../lib/node/index.ts';
import { type connect, connectForNode } from '../cluster.ts';
import { type Command, type CommandContext, processContext, UsageError } from '../command.ts';
import { CLUSTER_FLAGS } from '../common-flags.ts';
import { requesterName, startEmbedded } from '../embedded.ts';
import { EXIT, type ExitCode, exitForSignal } from '../exit-codes.ts';
import { type FlagSpec, flagValue } from '../flags.ts';
import { describeNode, nodeStateSentence, readNamedNode } from '../node-state.ts';
import { createRenderer, OUTPUT_FLAG, OUTPUT_HELP, type OutputMode, outputModeOf } from '../output/index.ts';
import { jsonMessage } from '../output/json.ts';
import { validateRequest } from '../request.ts';
import { runMachine } from '../run-machine.ts';

const FLAGS: readonly FlagSpec[] = [
  { name: 'request-id', kind: 'value', value: 'ID', help: "the request to end (default: the node's only hold)" },
  OUTPUT_FLAG,
  ...CLUSTER_FLAGS,
];

/** Which request to end, or why there is none (`done`: nothing to restore, which is success). */
export type HoldPick = { readonly requestId: string } | { readonly done: string } | { readonly refused: string };

/** Pure: the request to restore on `node`, from the one given or the node's only hold. */
export function pickHold(node: V1Node, given: string | undefined): HoldPick {
  const name = node.metadata?.name ?? '';
  const ledger = readLedger(node);
  const holds = Object.entries(ledger.holds);
  if (given) {
    if (ledger.holds[given]) return { requestId: given };
    if (ledger.released[given])
      return { done: `request ${given} was already restored on node ${name}; nothing to restore` };
    const list = holds.length > 0 ? ` (its holds: ${holds.map(([id]) => id).join(', ')})` : '';
    return { refused: `request ${given} does not hold node ${name}${list}` };
  }
  if (holds.length === 1) return { requestId: holds[0]?.[0] ?? '' };
  if (holds.length === 0) return { done: `node ${name} has no drainbridge hold; nothing to restore` };
  const list = holds
    .map(([id, hold]) => `  ${id}  (${hold.origin}, ${hold.requester}, since ${hold.since})`)
    .join('\n');
  throw new UsageError(`node ${name} has ${holds.length} holds; name one with --request-id:\n${list}`);
}

/** The request to restore: the one given, else the node's only hold (abort uses it too). */
export async function pickRequest(client: KubeClient, node: string, given: string | undefined): Promise<HoldPick> {
  return pickHold(await readNamedNode(client, node), given);
}

function restoredLines(detail: Readonly<Record<string, unknown>> | undefined, state: string): string[] {
  if (!detail) return [`restore finished: ${state}.`];
  const what = detail.lastHold
    ? detail.uncordoned
      ? 'uncordoned'
      : 'left cordoned (it was cordoned before drainbridge)'
    : 'other holds remain, so it stays cordoned';
  const nova = detail.novaServiceEnabled ? '; nova-compute re-enabled' : '';
  const leftAlone = (detail.leftAlone as string[] | undefined) ?? [];
  return [`restored: ${what}${nova}; ${state}.`, ...leftAlone.map((l) => `  left alone: ${l}`)];
}

async function restore(
  target: { node: string; requestId: string; mode: OutputMode },
  cluster: Awaited<ReturnType<typeof connect>>,
  context: CommandContext,
): Promise<ExitCode> {
  const { node, requestId } = target;
  const detail = {
    version: '1' as const,
    requestId,
    requester: requesterName(),
    origin: 'manual' as const,
    target: { nodeName: node },
    reason: 'drainbridge restore',
  };
  validateRequest('Maintenance Ended', detail);
  const output = createRenderer(context, { mode: target.mode, title: `drainbridge restore ${node}` });
  try {
    const { runtime } = await startEmbedded(cluster.config, output.events);
    output.events.note(`restoring ${node} (request ${requestId})`);
    const outcome = await runMachine(
      {
        runtime,
        client: cluster.client,
        namespace: cluster.config.namespace,
        requestId,
        put: () => runtime.put('Maintenance Ended', detail),
        find: () => runtime.executions.find((e) => e.machine === 'restore' && e.requestId === requestId),
      },
      context,
    );
    const state = (await describeNode(cluster.client, node, requestId)).sentence;
    output.close();
    if (outcome.kind === 'interrupted') {
      context.err(`drainbridge restore: ${outcome.signal}: stopped before the next step; ${state}.`);
      context.err('To finish: run the same command again.');
      return exitForSignal(outcome.signal);
    }
    if (outcome.kind === 'succeeded') {
      for (const line of restoredLines(output.recorded.get('Node Restored'), state)) output.out(line);
      return EXIT.ok;
    }
    const reason = outcome.kind === 'failed' ? outcome.error.message : 'no restore was started (no bus rule matched)';
    context.err(`drainbridge restore: failed: ${reason}`);
    context.err(`${state}.`);
    return EXIT.failed;
  } finally {
    output.close();
  }
}

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'end maintenance on a node: release the hold; when it is the last, undo what drainbridge changed',
  usage: [
    'Usage: drainbridge restore NODE [--request-id ID] [--output auto|live|plain|json] [--kubeconfig FILE] [--context NAME]',
    '',
    "Releases one request's hold (the node's only hold when --request-id is not given). When it was the",
    'last hold, drainbridge uncordons the node — unless it was cordoned before drainbridge came — and',
    "re-enables nova-compute if it is still disabled with drainbridge's reason. A running evacuation of",
    'the same request stops at its next step. A node without holds has nothing to restore: that is',
    'success (exit 0), said plainly.',
    OUTPUT_HELP,
  ].join('\n'),
  flags: FLAGS,
  operands: ['NODE'],
  exits: ['ok', 'failed', 'usage', 'notReady', 'refused', 'interrupted', 'terminated'],
  async run(argv, context: CommandContext = processContext()) {
    const started = await connectForNode(argv, FLAGS, context, 'restore');
    if (!started) return EXIT.notReady;
    const { parsed, node, cluster } = started;
    const nodeObject = await readNamedNode(cluster.client, node);
    const pick = pickHold(nodeObject, flagValue(parsed, 'request-id'));
    const mode = outputModeOf(parsed, context);
    if ('done' in pick) {
      const line = `${pick.done}: ${nodeStateSentence(nodeObject, '')}.`;
      context.out(mode === 'json' ? JSON.stringify(jsonMessage(line, Date.now(), Date.now())) : line);
      return EXIT.ok;
    }
    if ('refused' in pick) {
      context.err(`drainbridge restore: refused: ${pick.refused}; nothing was changed.`);
      return EXIT.refused;
    }
    return restore({ node, requestId: pick.requestId, mode }, cluster, context);
  },
};
