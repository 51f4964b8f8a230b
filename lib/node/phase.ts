/**
 * The node's maintenance phase annotation, after DrainSafe's phases. Written only when the phase
 * changes: every node write wakes every node watcher in the cluster, so per-pass detail lives in the
 * Evacuation record instead.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { MergePatch } from '../clients/kube/paths.ts';
import { InvalidInput } from '../errors/index.ts';
import { PHASES, type Phase } from '../model/phase.ts';

export const PHASE_ANNOTATION = 'drainbridge.io/phase';

/** The phases, shared with the events and the Evacuation record (lib/model/phase.ts). */
export const NODE_PHASES = PHASES;
export type NodePhase = Phase;

export function isNodePhase(value: unknown): value is NodePhase {
  return typeof value === 'string' && (NODE_PHASES as readonly string[]).includes(value);
}

/** The phase recorded on the node, if any (an unknown value reads as none). */
export function readPhase(node: V1Node): NodePhase | undefined {
  const value = node.metadata?.annotations?.[PHASE_ANNOTATION];
  return isNodePhase(value) ? value : undefined;
}

/** The merge patch that records `phase`, or nothing when the node already shows it. Conditional on resourceVersion. */
export function planPhase(node: V1Node, phase: NodePhase): MergePatch | undefined {
  if (!isNodePhase(phase)) {
    throw new InvalidInput('node phase', [{ path: 'phase', message: `must be one of ${NODE_PHASES.join(', ')}` }]);
  }
  if (readPhase(node) === phase) return undefined;
  return {
    metadata: { resourceVersion: node.metadata?.resourceVersion ?? '', annotations: { [PHASE_ANNOTATION]: phase } },
  };
}
