/** `drainbridge restore NODE`: end a maintenance request (Restore state machine, embedded). */
import { buildKubeConfig } from '../../lib/config/index.ts';
import { KubeClient } from '../../lib/kube/client.ts';
import { readNodeOrFail } from '../../lib/node/hold.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { parseArgs } from '../args.ts';
import { type Command, UsageError } from '../command.ts';
import { configFor, exitCodeOf, requesterName, startEmbedded } from '../embedded.ts';

const OWN = { 'request-id': true, kubeconfig: true };

/** The request to restore: the one given, else the node's only hold. */
export async function pickRequest(client: KubeClient, node: string, given: string | undefined): Promise<string> {
  if (given) return given;
  const holds = Object.entries(readLedger(await readNodeOrFail(client, node)).holds);
  if (holds.length === 1) return holds[0]?.[0] ?? '';
  if (holds.length === 0) throw new UsageError(`node ${node} has no drainbridge hold; nothing to restore`);
  const list = holds
    .map(([id, hold]) => `  ${id}  (${hold.origin}, ${hold.requester}, since ${hold.since})`)
    .join('\n');
  throw new UsageError(`node ${node} has ${holds.length} holds; name one with --request-id:\n${list}`);
}

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'end maintenance on a node: release the hold; when it is the last, undo what drainbridge changed',
  usage: [
    'Usage: drainbridge restore NODE [--request-id ID] [--kubeconfig FILE]',
    '',
    "Releases one request's hold (the node's only hold when --request-id is not given). When it was the",
    'last hold, drainbridge uncordons the node — unless it was cordoned before drainbridge came — and',
    "re-enables nova-compute if it is still disabled with drainbridge's reason. A running evacuation of",
    'the same request stops at its next step.',
    'Exit status: 0 restored, 1 failed, 2 usage error.',
  ].join('\n'),
  async run(argv) {
    const args = parseArgs(argv, OWN);
    if (args.positional.length !== 1) throw new UsageError(`expected exactly one NODE, got ${args.positional.length}`);
    const node = args.positional[0] ?? '';
    const config = configFor(args.own.get('kubeconfig'));
    const requestId = await pickRequest(
      new KubeClient(await buildKubeConfig(config)),
      node,
      args.own.get('request-id'),
    );
    const { runtime } = await startEmbedded(config);
    try {
      await runtime.put('Maintenance Ended', {
        version: '1',
        requestId,
        requester: requesterName(),
        origin: 'manual',
        target: { nodeName: node },
        reason: 'drainbridge restore',
      });
      const execution = runtime.executions.find((e) => e.machine === 'restore' && e.requestId === requestId);
      return await exitCodeOf(execution, 'restore');
    } finally {
      runtime.stop();
    }
  },
};
