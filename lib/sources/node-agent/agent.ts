/**
 * The node agent: one loop per enabled source of this node's cloud, each reading its document, turning
 * the notices that concern this node into `Maintenance Requested` / `Maintenance Ended` through the
 * publisher, and (Azure) approving events drainbridge drained for. It keeps no state that matters
 * across restarts: ids are derived from the notices (repeats are duplicates the workflow drops) and
 * the requests a previous run published are found again in the node's ledger, so their end is not lost.
 *
 *   const agent = startNodeAgent({ config: loadAgentConfig(), publisher, kube });
 *   process.on('SIGTERM', () => agent.stop());
 *   await agent.done;
 */
import type { EventPublisher } from '../../bus/types.ts';
import { TransientError } from '../../errors/index.ts';
import { createLogger } from '../../log/logger.ts';
import type { NoticeSource } from '../../model/notice.ts';
import type { AgentConfig } from '../clouds/config.ts';
import { EndConfirmations } from '../clouds/end-confirmation.ts';
import { readNodeHistory } from '../clouds/history.ts';
import type { AgentLogger, LoopContext, NoticeKube, SourceLoop } from '../clouds/loop.ts';
import { pause } from '../clouds/loop.ts';
import { MemoryNoticeMetrics, type NoticeMetrics } from '../clouds/metrics.ts';
import { describeNotice, type Notice, NoticeParseError, type ParsedDocument } from '../clouds/notice.ts';
import { documentRevisionKey, type EventContext, endedEvent, requestedEvent } from '../clouds/notice-details.ts';
import { CLOUD_AGENTS } from '../clouds/registry/agents.ts';
import { SOURCE_DOCUMENT_VERSIONS } from '../clouds/registry/descriptors.ts';
import { NoticeTracker, type TrackerAction } from '../clouds/tracker.ts';
import { overdueRequests, Unreadability } from '../clouds/unreadable.ts';

export interface NodeAgentOptions {
  readonly config: AgentConfig;
  /** Where requests go: the EventBridge publisher on AWS, the in-process bus embedded. */
  readonly publisher: EventPublisher;
  /** Reads only: this node (its ledger), and for Azure approvals all nodes and Evacuation records. */
  readonly kube: NoticeKube;
  readonly logger?: AgentLogger;
  /** Counters; a MemoryNoticeMetrics (renderable for a scrape endpoint) by default. */
  readonly metrics?: NoticeMetrics;
  readonly now?: () => Date;
  /** Stops the agent as `stop()` does. */
  readonly signal?: AbortSignal;
  /** Sources to run instead of those the configuration names (tests). */
  readonly sources?: (context: LoopContext) => SourceLoop[];
}

export interface NodeAgent {
  readonly sources: readonly NoticeSource[];
  readonly metrics: NoticeMetrics;
  /** Settles when every loop has stopped. Loops never fail: errors are logged and counted, and the loop goes on. */
  readonly done: Promise<void>;
  /** Stops every loop (an in-flight metadata request is aborted) and waits for them. */
  stop(): Promise<void>;
}

/** drainbridge's structured, redacting logger (lib/log) behind the agent's logger interface. */
function powertoolsLogger(): AgentLogger {
  const logger = createLogger('drainbridge.node-agent');
  return {
    debug: (message, extra) => logger.debug(message, extra ?? {}),
    info: (message, extra) => logger.info(message, extra ?? {}),
    warn: (message, extra) => logger.warn(message, extra ?? {}),
    error: (message, extra) => logger.error(message, extra ?? {}),
  };
}

/** The sources of the configured provider: its agent part's loops (lib/sources/clouds/registry/agents.ts). */
export function sourcesFor(context: LoopContext): SourceLoop[] {
  return CLOUD_AGENTS[context.config.provider].loops(context);
}

/** Runs the agent until stopped. */
export function startNodeAgent(options: NodeAgentOptions): NodeAgent {
  const controller = new AbortController();
  options.signal?.addEventListener('abort', () => controller.abort(options.signal?.reason), { once: true });
  if (options.signal?.aborted) controller.abort(options.signal.reason);
  const metrics = options.metrics ?? new MemoryNoticeMetrics();
  const context: LoopContext = {
    config: options.config,
    kube: options.kube,
    logger: options.logger ?? powertoolsLogger(),
    metrics,
    now: options.now ?? (() => new Date()),
  };
  const loops = (options.sources ?? sourcesFor)(context);
  const done = Promise.all(
    loops.map((loop) => new LoopRunner(loop, context, options.publisher).run(controller.signal)),
  ).then(() => undefined);
  context.logger.info('node agent started', {
    node: options.config.nodeName,
    provider: options.config.provider,
    sources: loops.map((loop) => loop.source),
  });
  return {
    sources: loops.map((loop) => loop.source),
    metrics,
    done,
    stop: async () => {
      controller.abort(new Error('node agent stopped'));
      await done;
    },
  };
}

/** One source's loop: read, track, publish, wait. */
class LoopRunner {
  readonly #loop: SourceLoop;
  readonly #context: LoopContext;
  readonly #publisher: EventPublisher;
  readonly #tracker: NoticeTracker;
  #adopted = false;
  /**
   * The version (Azure DocumentIncarnation, GCE ETag) of the last document whose every action went out,
   * with its notices: the same version again is the same document, so planning and publishing are
   * skipped — approvals still run, since a drain finishes without the document changing. A document
   * with an unreadable event or a failed publish is not recorded, so it is handled again at the next read.
   * Kept in memory only: a restarted agent handles the current document in full (level-triggered).
   */
  #handled: { readonly version: string; readonly notices: readonly Notice[] } | undefined;
  /** The version of the document being handled (Azure DocumentIncarnation, GCE ETag): the revisions name it. */
  #documentVersion: string | undefined;
  /** Problems of the previous read: a problem that persists is logged once, until it goes away. */
  #lastProblems = new Set<string>();
  #problems = new Set<string>();
  /** Since when the source has been unreadable (no answer, or a document or event that could not be read). */
  readonly #unreadable = new Unreadability();
  /** Ends published and not yet seen carried out in the cluster (end-confirmation.ts). */
  readonly #ends = new EndConfirmations();

  constructor(loop: SourceLoop, context: LoopContext, publisher: EventPublisher) {
    this.#loop = loop;
    this.#context = context;
    this.#publisher = publisher;
    this.#tracker = new NoticeTracker(loop.source, context.config.nodeName, context.config.policy);
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.#problems = new Set();
      const ok = await this.#once(signal);
      if (signal.aborted) break;
      this.#lastProblems = this.#problems;
      // After a failure even a waiting source pauses, so a broken endpoint is not hammered.
      await pause(ok ? this.#loop.intervalMs : this.#context.config.pollSeconds * 1000, signal);
    }
  }

  /** One read and what follows; false when something failed (reported). */
  async #once(signal: AbortSignal): Promise<boolean> {
    let document: ParsedDocument;
    try {
      await this.#adopt();
      await this.#confirmEnds();
      document = await this.#loop.read(signal);
    } catch (error) {
      if (signal.aborted) return false;
      this.#report(error);
      // A failed adoption read nothing of the source: only a failed read makes it unreadable.
      if (this.#adopted) await this.#whileUnreadable(signal);
      return false;
    }
    try {
      await this.#handle(document, signal);
      return true;
    } catch (error) {
      if (!signal.aborted) this.#report(error);
      return false;
    }
  }

  /**
   * The source could not be read (or an event of its document could not): nothing counts as gone, and
   * requests whose notice's end — or the configured limit — has passed meanwhile are ended (unreadable.ts).
   */
  async #whileUnreadable(signal: AbortSignal, listed: ReadonlySet<string> = new Set()): Promise<void> {
    const { config, logger, metrics, now } = this.#context;
    const source = this.#loop.source;
    const at = now();
    if (this.#unreadable.begin(at)) {
      logger.warn('notice source unreadable: nothing counts as gone until it is read again', {
        source,
        since: at.toISOString(),
        open: this.#tracker.active(),
      });
    }
    const since = this.#unreadable.since ?? at;
    // A notice still listed, readable, next to an unreadable event is what the provider says: kept.
    const open = this.#tracker.open().filter((request) => !listed.has(request.requestId));
    for (const overdue of overdueRequests(open, since, at, config.unreadableLimitSeconds)) {
      if (signal.aborted) return;
      logger.warn('notice source unreadable past the notice’s end: ending its request', {
        source,
        requestId: overdue.requestId,
        why: overdue.why,
      });
      const action = { kind: 'end' as const, ...overdue };
      if (await this.#carryOut(action)) metrics.count('unreadableEnds', source);
    }
  }

  /** A whole document was read: the source is readable (again). */
  #readable(): void {
    const since = this.#unreadable.end();
    if (since) {
      this.#context.logger.info('notice source readable again', {
        source: this.#loop.source,
        unreadableSince: since.toISOString(),
      });
    }
  }

  /**
   * Once: take over this source's requests of a previous run — those holding the node (its ledger) and
   * those not yet released (an Evacuation record no Restore finished and no end closed: waiting for their
   * start or in line) — so that the end of a notice that vanished while no agent ran is still published.
   */
  async #adopt(): Promise<void> {
    if (this.#adopted) return;
    const { kube, config, logger } = this.#context;
    const history = await readNodeHistory(kube, config.nodeName);
    const held = history.held.filter((id) => this.#tracker.owns(id));
    // Waiting for their start, and waiting in line too (a record, no phase, nothing released or ended): a
    // GCE maintenance-event request in line when the agent was killed was otherwise given up — its
    // occurrence got the next number and the request waited in line for ever (soak seed 342527).
    const waiting = history.open.filter((id) => this.#tracker.owns(id) && !held.includes(id));
    this.#tracker.adopt([...held, ...waiting]);
    this.#adopted = true;
    if (!history.recordsRead) {
      logger.warn(
        'cannot list Evacuation records (RBAC: evacuations list): requests waiting for their start are not taken over',
        {
          source: this.#loop.source,
        },
      );
    }
    if (held.length + waiting.length > 0) {
      logger.info('found requests of a previous run', { source: this.#loop.source, held, waiting });
    }
  }

  /**
   * Ends that went out a minute ago and still show open in the cluster are ended again at this read (the
   * document is handled in full, even unchanged). A failed read of the cluster is tried at the next check.
   */
  async #confirmEnds(): Promise<void> {
    const { kube, config, logger, now } = this.#context;
    const source = this.#loop.source;
    const ends = await this.#ends.check(kube, config.nodeName, now()).catch(() => ({ again: [], givenUp: [] }));
    for (const requestId of ends.givenUp) {
      logger.error('a request stays open after its end was published again and again; restore it by hand', {
        source,
        requestId,
        repair: `drainbridge restore ${config.nodeName} --request-id ${requestId}`,
      });
    }
    if (ends.again.length === 0) return;
    logger.warn('ended requests are still open in the cluster: publishing their end again', {
      source,
      requestIds: ends.again,
    });
    this.#tracker.reopen(ends.again);
    this.#handled = undefined;
  }

  /**
   * Logs (once while it persists) and counts a failed read, a malformed document, or — `oneEvent` — one
   * malformed event of a document whose other events are handled as usual.
   */
  #report(error: unknown, oneEvent = false): void {
    const { logger, metrics } = this.#context;
    const source = this.#loop.source;
    const reason = error instanceof Error ? error.message : String(error);
    metrics.count(error instanceof NoticeParseError ? 'parseErrors' : 'failures', source);
    this.#problems.add(reason);
    if (this.#lastProblems.has(reason)) return;
    // `reason`, not `message`: Powertools Logger drops a key named message (its own), and the why with it.
    if (oneEvent) logger.error('malformed event skipped: the other events of the document count', { source, reason });
    else if (error instanceof NoticeParseError)
      logger.error('malformed document: nothing published', { source, reason });
    else logger.warn('reading the notices failed; trying again', { source, reason });
  }

  async #handle(document: ParsedDocument, signal: AbortSignal): Promise<void> {
    if (document.version !== undefined && document.version === this.#handled?.version) {
      this.#readable();
      await this.#loop.after?.(this.#handled.notices, this.#tracker, signal);
      return;
    }
    this.#handled = undefined;
    this.#documentVersion = document.version;
    for (const rejected of document.rejected) this.#report(rejected, true);
    const notices = await this.#loop.mine(document.notices, signal, this.#tracker);
    const snapshot = { notices, complete: document.rejected.length === 0 };
    let allOut = snapshot.complete;
    for (const action of this.#tracker.plan(snapshot)) {
      if (signal.aborted) return;
      if (!(await this.#carryOut(action))) allOut = false;
    }
    this.#tracker.forgetUnlisted(snapshot);
    if (snapshot.complete) this.#readable();
    else await this.#whileUnreadable(signal, new Set(notices.map((notice) => this.#tracker.requestIdOf(notice))));
    if (allOut && document.version !== undefined) {
      this.#handled = { version: document.version, notices };
      this.#context.logger.debug('document handled', { source: this.#loop.source, version: document.version });
    }
    await this.#loop.after?.(notices, this.#tracker, signal);
  }

  /** A notice's start moved: the request again, with a later revision (the workflow moves its start). */
  async #revise(action: Extract<TrackerAction, { kind: 'revise' }>, base: EventContext): Promise<void> {
    const { logger, metrics } = this.#context;
    const source = this.#loop.source;
    await this.#publisher.publish('Maintenance Requested', requestedEvent(action.notice, action.rule, base));
    logger.info(action.previousNotBefore ? 'maintenance rescheduled' : 'maintenance revised after a restart', {
      source,
      requestId: action.requestId,
      from: action.previousNotBefore ?? 'not known (taken over from a previous run)',
      to: action.notice.notBefore,
    });
    metrics.count('rescheduled', source);
  }

  /** The revision key of a notice of the document being handled, when its provider versions documents. */
  #revisionKey(action: TrackerAction): { revisionKey?: string } {
    const versionName = SOURCE_DOCUMENT_VERSIONS[this.#loop.source];
    if (action.kind !== 'request' && action.kind !== 'revise') return {};
    if (!versionName || this.#documentVersion === undefined) return {};
    return { revisionKey: documentRevisionKey(versionName, this.#documentVersion, action.notice) };
  }

  /** Publishes (or reports) one action; false when it did not go out (tried again at the next read). */
  async #carryOut(action: TrackerAction): Promise<boolean> {
    const { config, logger, metrics, now } = this.#context;
    const source = this.#loop.source;
    const base = {
      requestId: action.requestId,
      nodeName: config.nodeName,
      requester: `drainbridge-node-agent/${config.nodeName}`.slice(0, 256),
      now: now(),
      ...this.#revisionKey(action),
    };
    try {
      if (action.kind === 'ignore') {
        logger.info('notice ignored by the policy', { source, requestId: action.requestId, why: action.why });
        metrics.count('ignored', source);
      } else if (action.kind === 'request') {
        await this.#publisher.publish('Maintenance Requested', requestedEvent(action.notice, action.rule, base));
        logger.info('maintenance requested', {
          source,
          requestId: action.requestId,
          notice: describeNotice(action.notice),
        });
        metrics.count('requested', source);
      } else if (action.kind === 'revise') {
        await this.#revise(action, base);
      } else {
        const unreadable = action.unreadableSince ? { unreadableSince: action.unreadableSince } : {};
        const detail = endedEvent({ ...base, provider: config.provider, ...unreadable }, action.why, action.last);
        await this.#publisher.publish('Maintenance Ended', detail);
        logger.info('maintenance ended', { source, requestId: action.requestId, why: action.why });
        metrics.count('ended', source);
      }
      this.#tracker.commit(action);
      if (action.kind === 'end') this.#ends.ended(action.requestId, now());
      else if (action.kind !== 'ignore') this.#ends.forget(action.requestId);
      return true;
    } catch (error) {
      metrics.count('failures', source);
      // Not on the bus yet, not refused: the forwarder's queue keeps offering it, so it may get through.
      if (error instanceof TransientError) this.#tracker.unconfirmed(action);
      logger.warn('publishing failed; trying again at the next read', {
        source,
        requestId: action.requestId,
        reason: error instanceof Error ? error.message : String(error),
      });
      return false;
    }
  }
}
