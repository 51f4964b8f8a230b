/**
 * The node's state, read from the cluster (never assumed): whether it is cordoned, who holds it, its
 * phase — what a person needs to decide the next step after a run ended or was stopped.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../lib/clients/kube/client.ts';
import { isNotFound } from '../lib/clients/kube/errors.ts';
import { nodeNotFound } from '../lib/errors/index.ts';
import { ledgerOf, readPhase } from '../lib/node/index.ts';
import { EXIT } from './exit-codes.ts';
import { CommandFailed } from './failures.ts';

export interface NodeState {
  /** One sentence, without a final full stop: `node node-1 is cordoned, held by request r1 (since …); phase NodeDraining`. */
  readonly sentence: string;
  /** Whether the request the command ran for holds the node. */
  readonly heldByRequest: boolean;
  /** The node could not be read: whether the request holds it is not known. */
  readonly unknown?: true;
}

function holdsClause(ids: readonly string[]): string {
  return `${ids.length === 1 ? 'request' : 'requests'} ${ids.join(', ')}`;
}

/** Pure: the state of a node as read (`requestId`: the request the command ran for, '' for none). */
export function nodeState(node: V1Node, requestId: string): NodeState {
  const name = node.metadata?.name ?? '?';
  const cordoned = node.spec?.unschedulable === true;
  const read = ledgerOf(node);
  if (read.status === 'unreadable') {
    const state = cordoned ? 'cordoned' : 'not cordoned';
    return {
      sentence: `node ${name} is ${state}; drainbridge's records on it cannot be read (${read.reason}): drainbridge repair ${name}`,
      heldByRequest: false,
    };
  }
  const ledger = read.ledger;
  const mine = ledger.holds[requestId];
  const others = Object.keys(ledger.holds).filter((id) => id !== requestId);
  const phase = readPhase(node);
  const held: string[] = [];
  if (mine) held.push(`request ${requestId} (since ${mine.since})`);
  if (others.length > 0) held.push(holdsClause(others));
  let sentence: string;
  if (held.length > 0) {
    sentence = `node ${name} is ${cordoned ? 'cordoned' : 'not cordoned'} and held by ${held.join(' and ')}${phase ? `; phase ${phase}` : ''}`;
  } else {
    sentence = cordoned
      ? `node ${name} is cordoned, but not by drainbridge (no hold)`
      : `node ${name} is not cordoned and not held by drainbridge`;
  }
  return { sentence, heldByRequest: mine !== undefined };
}

/** Kept for the restore command's "nothing to restore" line. */
export function nodeStateSentence(node: V1Node, requestId: string): string {
  return nodeState(node, requestId).sentence;
}

/**
 * Reads the node and describes it; says so when it cannot be read. `read`: how to read it (after Ctrl-C,
 * riding out a transient fault: cli/after-interrupt.ts).
 */
export async function describeNode(
  client: KubeClient,
  nodeName: string,
  requestId: string,
  read: (name: string) => Promise<V1Node> = (name) => client.getNode(name),
): Promise<NodeState> {
  try {
    return nodeState(await read(nodeName), requestId);
  } catch (error) {
    if (isNotFound(error)) return { sentence: nodeNotFound(nodeName), heldByRequest: false };
    const sentence = `node ${nodeName}: its state could not be read (${(error as Error).message})`;
    return { sentence, heldByRequest: false, unknown: true };
  }
}

/** The node, for a command that names it: a name that matches no node is a bad argument (exit 2). */
export async function readNamedNode(client: KubeClient, nodeName: string): Promise<V1Node> {
  try {
    return await client.getNode(nodeName);
  } catch (error) {
    if (isNotFound(error)) throw new CommandFailed(EXIT.usage, `${nodeNotFound(nodeName)}; nothing was changed`);
    throw error;
  }
}
