/**
 * AWS without an agent: AWS Health scheduled changes for EC2 and (opt-in) Spot interruption warnings
 * arrive on the account's default EventBridge bus; this task maps the instances they name to nodes (by
 * `spec.providerID`, read-only) and puts `Maintenance Requested` (or, for a closed Health event,
 * `Maintenance Ended`) on drainbridge's bus — one request per node. The Lambda shell is
 * functions/normalize-aws-notice.ts.
 *
 * A malformed event is logged and counted (NoticeParseErrors) and publishes nothing; it is not thrown,
 * since EventBridge's retries of a malformed event could never succeed.
 */

import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { V1Node } from '@kubernetes/client-node';
import { z } from 'zod';
import { createEventBridgeClient, EventBridgePublisher } from '../../../bus/eventbridge-publisher.ts';
import type { EventPublisher } from '../../../bus/types.ts';
import { KubeClient } from '../../../clients/kube/client.ts';
import { buildKubeConfig, loadConfig } from '../../../config/index.ts';
import { ConfigError } from '../../../errors/index.ts';
import type { TaskSpec, TaskTools } from '../../../lambda/task.ts';
import type { NoticeSource } from '../../../model/notice.ts';
import { matchTarget } from '../../../node/resolve.ts';
import { parseNoticePolicy } from '../config.ts';
import { noticeRequestId } from '../ids.ts';
import { NOTICE_COUNTERS, type NoticeCounter, type NoticeMetrics } from '../metrics.ts';
import { type Notice, NoticeParseError } from '../notice.ts';
import { endedEvent, requestedEvent } from '../notice-details.ts';
import { type NoticePolicy, type NoticeRule, ruleFor } from '../policy.ts';
import { parseAwsBusEvent } from './eventbridge.ts';

export interface AwsNoticeDeps {
  /** Reads nodes only. */
  readonly kube: Pick<KubeClient, 'listNodes'>;
  /** drainbridge's bus. */
  readonly publisher: EventPublisher;
  readonly policy: NoticePolicy;
  readonly metrics: NoticeMetrics;
}

export interface AwsNoticeResult {
  /** Request ids published as Maintenance Requested / Maintenance Ended. */
  readonly requested: readonly string[];
  readonly ended: readonly string[];
  /** Instances the event names that are no node of this cluster. */
  readonly notNodes: readonly string[];
  /** Why nothing was published, when nothing was. */
  readonly skipped?: string;
}

/** The envelope every EventBridge event has; what is inside is the parser's to judge. */
export const AwsNoticeInput = z.looseObject({
  source: z.string({ error: 'must be the event source (an EventBridge event)' }),
  'detail-type': z.string({ error: 'must be the detail-type (an EventBridge event)' }),
  detail: z.looseObject({}, { error: 'must be an object (an EventBridge event)' }),
});

/** The node each instance is (by providerID), or none when no single node has it. */
function nodesOf(instanceIds: readonly string[], nodes: readonly V1Node[]): { nodes: string[]; notNodes: string[] } {
  const found: string[] = [];
  const notNodes: string[] = [];
  for (const id of instanceIds) {
    const matches = matchTarget(nodes, { instance: { provider: 'aws', id } });
    const name = matches.length === 1 ? matches[0]?.metadata?.name : undefined;
    if (name) found.push(name);
    else notNodes.push(id);
  }
  return { nodes: found, notNodes };
}

interface Publication {
  readonly notice: Notice;
  readonly rule: NoticeRule;
  readonly nodeName: string;
  readonly now: Date;
  /** The event's `time`: a Health resend (same ARN) is a later revision of the same request, not a second one. */
  readonly sentAt: Date;
}

async function publishFor({ notice, rule, nodeName, now, sentAt }: Publication, deps: AwsNoticeDeps) {
  const requestId = noticeRequestId(notice.source, nodeName, notice.eventId);
  const requester = notice.source === 'aws-health' ? 'aws.health' : 'aws.ec2';
  const context = { requestId, nodeName, requester, now, revisionAt: sentAt };
  if (notice.status === 'ended') {
    const why = `${notice.eventType} ${notice.providerStatus}`;
    await deps.publisher.publish(
      'Maintenance Ended',
      endedEvent({ ...context, provider: 'aws' }, why, { notice, rule }),
    );
    deps.metrics.count('ended', notice.source);
    return { requestId, ended: true };
  }
  await deps.publisher.publish('Maintenance Requested', requestedEvent(notice, rule, context));
  deps.metrics.count('requested', notice.source);
  return { requestId, ended: false };
}

function sourceOf(event: unknown): NoticeSource {
  return (event as { source?: unknown }).source === 'aws.ec2' ? 'aws-spot-interruption-warning' : 'aws-health';
}

/** The EventBridge event's `time` (validated by the parser), when it reads as an instant. */
function sentAtOf(event: unknown): Date | undefined {
  const time = (event as { time?: unknown }).time;
  const ms = typeof time === 'string' ? Date.parse(time) : Number.NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** Normalises one event from the default bus. */
export async function normalizeAwsNotice(
  event: unknown,
  deps: AwsNoticeDeps,
  tools: TaskTools,
): Promise<AwsNoticeResult> {
  let notice: Notice;
  try {
    notice = parseAwsBusEvent(event);
  } catch (error) {
    if (!(error instanceof NoticeParseError)) throw error;
    deps.metrics.count('parseErrors', sourceOf(event));
    tools.logger.error('malformed event: nothing published', { source: error.source, problems: error.message });
    return { requested: [], ended: [], notNodes: [], skipped: error.message };
  }
  const rule = ruleFor(deps.policy, 'aws', notice.policyKey);
  if (rule?.action !== 'evacuate') {
    deps.metrics.count('ignored', notice.source);
    tools.logger.info('notice ignored by the policy', { eventId: notice.eventId, type: notice.policyKey });
    return { requested: [], ended: [], notNodes: [], skipped: `the policy ignores aws ${notice.policyKey}` };
  }
  const mapped = nodesOf(notice.instanceIds ?? [], await deps.kube.listNodes());
  if (mapped.notNodes.length > 0) {
    tools.logger.info('instances that are no node of this cluster', {
      instances: mapped.notNodes,
      eventId: notice.eventId,
    });
  }
  const done = [];
  const sentAt = sentAtOf(event) ?? tools.now();
  for (const nodeName of mapped.nodes) {
    done.push(await publishFor({ notice, rule, nodeName, now: tools.now(), sentAt }, deps));
  }
  tools.logger.info('notice normalised', { eventId: notice.eventId, nodes: mapped.nodes, status: notice.status });
  return {
    requested: done.filter((d) => !d.ended).map((d) => d.requestId),
    ended: done.filter((d) => d.ended).map((d) => d.requestId),
    notNodes: mapped.notNodes,
  };
}

/** CloudWatch metrics from the Lambda: EMF log lines (no API call, no extra IAM), namespace drainbridge. */
export class EmfNoticeMetrics implements NoticeMetrics {
  readonly #metrics = new Metrics({ namespace: 'drainbridge', serviceName: 'drainbridge' });

  count(counter: NoticeCounter, source: NoticeSource, by = 1): void {
    this.#metrics.addDimension('source', source);
    this.#metrics.addMetric(NOTICE_COUNTERS[counter], MetricUnit.Count, by);
    this.#metrics.publishStoredMetrics();
  }
}

/** Lambda: configuration from the environment (kube access, bus name, DRAINBRIDGE_NOTICE_POLICY). */
export async function awsNoticeDepsFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<AwsNoticeDeps> {
  const config = loadConfig(env);
  const policy = parseNoticePolicy(env.DRAINBRIDGE_NOTICE_POLICY ?? '');
  if (Array.isArray(policy)) throw new ConfigError(policy);
  const kube = new KubeClient(await buildKubeConfig(config));
  const publisher = new EventBridgePublisher(await createEventBridgeClient(), config.eventBusName);
  return { kube, publisher, policy, metrics: new EmfNoticeMetrics() };
}

export const normalizeAwsNoticeTask: TaskSpec<unknown, AwsNoticeResult, AwsNoticeDeps> = {
  name: 'normalizeAwsNotice',
  input: AwsNoticeInput,
  deps: awsNoticeDepsFromEnvironment,
  run: (event, deps, tools) => normalizeAwsNotice(event, deps, tools),
};
