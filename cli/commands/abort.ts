/** `drainbridge abort NODE`: stop a running evacuation; the node stays cordoned (the safe state). */
import { buildKubeConfig } from '../../lib/config/index.ts';
import { KubeClient } from '../../lib/kube/client.ts';
import { EvacuationProgressStore } from '../../lib/progress/evacuation-store.ts';
import { parseArgs } from '../args.ts';
import { type Command, UsageError } from '../command.ts';
import { configFor, requesterName } from '../embedded.ts';
import { pickRequest } from './restore.ts';

const OWN = { 'request-id': true, kubeconfig: true };

export const abortCommand: Command = {
  name: 'abort',
  summary: 'stop a running evacuation; the node stays cordoned and held until `drainbridge restore`',
  usage: [
    'Usage: drainbridge abort NODE [--request-id ID] [--kubeconfig FILE]',
    '',
    "Marks the request's Evacuation record as aborted. The evacuation (in any process, embedded or on",
    'AWS) stops at its next step: it records the failure, aborts its in-flight Nova live migrations (the',
    'servers keep running where they are) and publishes Evacuation Failed. Nothing is uncordoned and',
    'nova-compute stays disabled: run `drainbridge restore NODE` to end the maintenance.',
  ].join('\n'),
  async run(argv) {
    const args = parseArgs(argv, OWN);
    if (args.positional.length !== 1) throw new UsageError(`expected exactly one NODE, got ${args.positional.length}`);
    const node = args.positional[0] ?? '';
    const client = new KubeClient(await buildKubeConfig(configFor(args.own.get('kubeconfig'))));
    const requestId = await pickRequest(client, node, args.own.get('request-id'));
    await new EvacuationProgressStore(client).requestAbort(requestId, requesterName(), new Date());
    console.log(`abort requested for request ${requestId} on node ${node}; the evacuation stops at its next step`);
    return 0;
  },
};
