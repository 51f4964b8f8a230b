/**
 * What the agent runs for each source: read the current document, say which of its notices concern
 * this node, and (Azure) act after the requests went out. The agent (lib/sources/node-agent/agent.ts) does the rest the same
 * way for every source: track, publish, count, log, wait.
 */

import type { KubeClient } from '../../clients/kube/client.ts';
import type { NoticeSource } from '../../model/notice.ts';
import type { AgentConfig } from './config.ts';
import type { NoticeMetrics } from './metrics.ts';
import type { Notice, ParsedDocument } from './notice.ts';
import type { NoticeTracker } from './tracker.ts';

/** The agent's logger: Powertools' Logger fits, and so does a recorder in tests. */
export interface AgentLogger {
  debug(message: string, extra?: Record<string, unknown>): void;
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

/**
 * What the agent reads of the cluster: its node (the ledger) and its node's Evacuation records (requests
 * of a previous run), and for Azure approvals all nodes and the records. KubeClient has these calls, and
 * so has the forwarder's lean client.
 */
export type NoticeKube = Pick<KubeClient, 'getNode' | 'listNodes' | 'getEvacuation' | 'listEvacuations'>;

export interface LoopContext {
  readonly config: AgentConfig;
  readonly kube: NoticeKube;
  readonly logger: AgentLogger;
  readonly metrics: NoticeMetrics;
  readonly now: () => Date;
}

export interface SourceLoop {
  readonly source: NoticeSource;
  /** Milliseconds between two reads; 0 for a source whose read waits for a change itself. */
  readonly intervalMs: number;
  /** The current document, parsed. Throws NoticeParseError for a malformed one, other errors for failed reads. */
  read(signal: AbortSignal): Promise<ParsedDocument>;
  /**
   * The notices of the document that concern this node. The tracker (read only) tells which requests are
   * active, for a source whose notices carry no id of their own (GCE's maintenance-event).
   */
  mine(notices: readonly Notice[], signal: AbortSignal, tracker: NoticeTracker): Promise<Notice[]>;
  /** Runs after the document's requests were published (Azure: approvals). */
  after?(notices: readonly Notice[], tracker: NoticeTracker, signal: AbortSignal): Promise<void>;
}

/** Waits `ms`, or less when the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
