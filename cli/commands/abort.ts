/** `drainbridge abort NODE`: stop a running evacuation; the node stays cordoned (the safe state). */
import { InvalidInput } from '../../lib/errors/index.ts';
import { EvacuationProgressStore } from '../../lib/progress/index.ts';
import { abortRequest } from '../../lib/workflow/abort.ts';
import { connectForNode } from '../cluster.ts';
import { type Command, type CommandContext, processContext } from '../command.ts';
import { CLUSTER_FLAGS } from '../common-flags.ts';
import { requesterName } from '../embedded.ts';
import { EXIT } from '../exit-codes.ts';
import { type FlagSpec, flagValue } from '../flags.ts';
import { pickRequest } from './restore.ts';

const FLAGS: readonly FlagSpec[] = [
  { name: 'request-id', kind: 'value', value: 'ID', help: "the request to stop (default: the node's only hold)" },
  ...CLUSTER_FLAGS,
];

export const abortCommand: Command = {
  name: 'abort',
  summary: 'stop a running evacuation; the node stays cordoned and held until `drainbridge restore`',
  usage: [
    'Usage: drainbridge abort NODE [--request-id ID] [--kubeconfig FILE] [--context NAME]',
    '',
    "Marks the request's Evacuation record as aborted. The evacuation (in any process, embedded or on",
    'AWS) stops at its next step: it records the failure, aborts its in-flight Nova live migrations (the',
    'servers keep running where they are) and publishes Evacuation Failed. Nothing is uncordoned and',
    'nova-compute stays disabled: run `drainbridge restore NODE` to end the maintenance. A request that',
    'neither runs (waiting for a slot counts) nor holds the node is refused (exit 5) and nothing is',
    'written: a mark left for a request that has not come yet would fail it at once when it came.',
  ].join('\n'),
  flags: FLAGS,
  operands: ['NODE'],
  exits: ['ok', 'failed', 'usage', 'notReady', 'refused'],
  async run(argv, context: CommandContext = processContext()) {
    const started = await connectForNode(argv, FLAGS, context, 'abort');
    if (!started) return EXIT.notReady;
    const { parsed, node, cluster } = started;
    const refuse = (why: string): number => {
      context.err(`drainbridge abort: refused: ${why}; nothing was changed.`);
      return EXIT.refused;
    };
    // Without --request-id, the node's only hold is the one meant; a request given by id may also be one
    // still waiting for a slot (it runs but holds nothing yet). Whether it runs or holds is decided in one
    // place, requestAbort, which writes nothing when it refuses (issue 12 item 2).
    let requestId = flagValue(parsed, 'request-id');
    if (!requestId) {
      const pick = await pickRequest(cluster.client, node, undefined);
      if (!('requestId' in pick))
        return refuse('done' in pick ? pick.done.replace('nothing to restore', 'nothing to abort') : pick.refused);
      requestId = pick.requestId;
    }
    try {
      const clients = {
        kube: cluster.client,
        progress: new EvacuationProgressStore(cluster.client),
        namespace: cluster.config.namespace,
      };
      await abortRequest(clients, { requestId, nodeName: node, by: requesterName(), at: new Date() });
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      return refuse(error.problems.map((problem) => problem.message).join('; '));
    }
    context.out(`abort requested for request ${requestId} on node ${node}; the evacuation stops at its next step`);
    return EXIT.ok;
  },
};
