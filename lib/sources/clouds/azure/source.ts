/**
 * The node agent's Azure source: reads Scheduled Events, keeps the events that list this node, and
 * approves an event once drainbridge drained every node it lists (approval.ts). The cluster reads for
 * approvals (nodes, Evacuation records) are rate-limited by `approvalCheckSeconds`.
 */
import type { V1Node } from '@kubernetes/client-node';
import { isNotFound } from '../../../clients/kube/errors.ts';
import { type EvacuationObject, evacuationName } from '../../../clients/kube/paths.ts';
import { noticeRequestId } from '../ids.ts';
import type { LoopContext, SourceLoop } from '../loop.ts';
import { type Notice, type ParsedDocument, parseJsonText } from '../notice.ts';
import { ruleFor } from '../policy.ts';
import type { NoticeTracker } from '../tracker.ts';
import { type DrainEvidence, decideApproval } from './approval.ts';
import { AZURE_FIRST_READ_TIMEOUT_MS, AzureScheduledEventsClient } from './client.ts';
import { parseAzureScheduledEvents } from './parse.ts';
import { mapResources, resourceNameOfNode } from './resources.ts';

const SOURCE = 'azure-scheduled-events';

export class AzureSource implements SourceLoop {
  readonly source = SOURCE;
  readonly intervalMs: number;
  readonly #context: LoopContext;
  readonly #client: AzureScheduledEventsClient;
  /** This node's names as Scheduled Events may list it (from its providerID, and IMDS `compute/name`). */
  #names: Set<string> | undefined;
  readonly #approved = new Set<string>();
  readonly #lastCheck = new Map<string, number>();
  readonly #lastWhy = new Map<string, string>();

  constructor(context: LoopContext, client?: AzureScheduledEventsClient) {
    this.#context = context;
    const { azure, timeoutMs } = context.config;
    this.#client =
      client ??
      new AzureScheduledEventsClient({
        baseUrl: azure.baseUrl,
        apiVersion: azure.apiVersion,
        timeoutMs,
        firstReadTimeoutMs: AZURE_FIRST_READ_TIMEOUT_MS,
      });
    this.intervalMs = context.config.pollSeconds * 1000;
  }

  async read(signal: AbortSignal): Promise<ParsedDocument> {
    return parseAzureScheduledEvents(parseJsonText(SOURCE, await this.#client.fetchDocument(signal)));
  }

  async #myNames(signal: AbortSignal): Promise<Set<string>> {
    if (this.#names) return this.#names;
    const { nodeName } = this.#context.config;
    const names = new Set<string>([nodeName.toLowerCase()]);
    const fromNode = resourceNameOfNode(await this.#context.kube.getNode(nodeName));
    if (fromNode) names.add(fromNode.toLowerCase());
    try {
      names.add((await this.#client.vmName(signal)).toLowerCase());
    } catch (error) {
      this.#context.logger.warn('cannot read the VM name from IMDS; matching by providerID and node name only', {
        error: (error as Error).message,
      });
    }
    this.#names = names;
    return names;
  }

  async mine(notices: readonly Notice[], signal: AbortSignal): Promise<Notice[]> {
    if (notices.length === 0) return [];
    const names = await this.#myNames(signal);
    return notices.filter((notice) => notice.resources?.some((resource) => names.has(resource.toLowerCase())));
  }

  async after(notices: readonly Notice[], tracker: NoticeTracker, signal: AbortSignal): Promise<void> {
    for (const notice of notices) {
      if (signal.aborted) return;
      if (this.#approvable(notice, tracker)) await this.#tryApprove(notice, signal);
    }
    // Forget events no longer listed.
    const listed = new Set(notices.map((n) => n.eventId));
    for (const seen of [this.#approved, this.#lastCheck, this.#lastWhy]) {
      for (const id of [...seen.keys()]) if (!listed.has(id)) seen.delete(id);
    }
  }

  #approvable(notice: Notice, tracker: NoticeTracker): boolean {
    const rule = ruleFor(this.#context.config.policy, 'azure', notice.policyKey);
    if (!rule?.approveWhenDrained || rule.action !== 'evacuate' || notice.status !== 'scheduled') return false;
    if (this.#approved.has(notice.eventId) || !tracker.active().includes(tracker.requestIdOf(notice))) return false;
    const last = this.#lastCheck.get(notice.eventId) ?? 0;
    return this.#context.now().getTime() - last >= this.#context.config.azure.approvalCheckSeconds * 1000;
  }

  async #evidence(notice: Notice, nodes: readonly V1Node[], nodeName: string): Promise<DrainEvidence> {
    const requestId = noticeRequestId(SOURCE, nodeName, notice.eventId);
    const node = nodes.find((n) => n.metadata?.name === nodeName);
    let evacuation: EvacuationObject | undefined;
    try {
      evacuation = await this.#context.kube.getEvacuation(evacuationName(requestId));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return { nodeName, requestId, node, evacuation };
  }

  async #tryApprove(notice: Notice, signal: AbortSignal): Promise<void> {
    const { logger, metrics, kube } = this.#context;
    this.#lastCheck.set(notice.eventId, this.#context.now().getTime());
    const nodes = await kube.listNodes();
    const mapping = mapResources(notice.resources ?? [], nodes);
    const evidence = await Promise.all([...mapping.nodes.values()].map((name) => this.#evidence(notice, nodes, name)));
    const decision = decideApproval(mapping, evidence);
    if (!decision.approve) {
      if (this.#lastWhy.get(notice.eventId) !== decision.why) {
        logger.info('not approving the event yet', { eventId: notice.eventId, why: decision.why });
        this.#lastWhy.set(notice.eventId, decision.why);
      }
      return;
    }
    await this.#client.approve([notice.eventId], signal);
    this.#approved.add(notice.eventId);
    metrics.count('approved', SOURCE);
    logger.info('approved the event: every node it lists is drained', {
      eventId: notice.eventId,
      nodes: [...mapping.nodes.values()],
    });
  }
}
