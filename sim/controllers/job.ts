/**
 * The Job controller (NonIndexed completion mode): runs up to `parallelism` pods at a time until
 * `completions` pods have Succeeded, then marks the Job Complete; more than `backoffLimit` failed pods
 * mark it Failed. The pods themselves run for the kubelet's job run time and then Succeed. Not
 * modelled: Indexed mode, backoff delays, activeDeadlineSeconds, pod failure policy, suspend, TTL.
 */
import { isActive, isDeleting, isPodReady } from './meta.ts';
import { withCondition } from './pod-status.ts';
import type { ReconcileResult } from './queue.ts';
import type { Context, Controller } from './runtime.ts';
import { type Condition, type Pod, REFS, type Workload } from './types.ts';
import { createPod, deletePod, ownedPods, podFromTemplate, startWorkloadLoop, writeStatus } from './workload.ts';

interface JobCounts {
  readonly active: Pod[];
  readonly succeeded: number;
  readonly failed: number;
}

function countPods(pods: readonly Pod[]): JobCounts {
  return {
    active: pods.filter(isActive),
    succeeded: pods.filter((p) => p.status?.phase === 'Succeeded').length,
    failed: pods.filter((p) => p.status?.phase === 'Failed').length,
  };
}

function isFinished(job: Workload): boolean {
  const conditions = (job.status?.conditions ?? []) as Condition[];
  return conditions.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

function jobLabels(job: Workload): Record<string, string> {
  const uid = job.metadata.uid ?? '';
  const name = job.metadata.name ?? '';
  return {
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': name,
    'controller-uid': uid,
    'job-name': name,
  };
}

/** The conditions a finished Job gets: SuccessCriteriaMet then Complete (v1.31+), or FailureTarget then Failed. */
function finishedConditions(job: Workload, outcome: 'Complete' | 'Failed', now: string): Condition[] {
  const previous = (job.status?.conditions ?? []) as Condition[];
  const [first, reason, message] =
    outcome === 'Complete'
      ? ['SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods']
      : ['FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
  const base = { status: 'True', reason, message, lastTransitionTime: now, lastProbeTime: now };
  return withCondition(withCondition(previous, { type: first, ...base }), { type: outcome, ...base });
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

function countsStatus(job: Workload, counts: JobCounts, now: string): Record<string, unknown> {
  return {
    ...job.status,
    startTime: job.status?.startTime ?? now,
    active: counts.active.length,
    ready: counts.active.filter(isPodReady).length,
    succeeded: counts.succeeded,
    failed: counts.failed,
    terminating: 0,
    uncountedTerminatedPods: {},
  };
}

function finishJob(context: Context, job: Workload, counts: JobCounts, outcome: 'Complete' | 'Failed'): void {
  const { store } = context;
  const now = store.clock.nowIso();
  for (const pod of counts.active) if (!isDeleting(pod)) deletePod(store, pod);
  const status = {
    ...countsStatus(job, counts, now),
    active: 0,
    ready: 0,
    conditions: finishedConditions(job, outcome, now),
  };
  writeStatus(store, REFS.jobs, job, outcome === 'Complete' ? { ...status, completionTime: now } : status);
  const recorder = context.recorder({ component: 'job-controller' });
  if (outcome === 'Complete') recorder.record(job, 'Normal', 'Completed', 'Job completed');
  else recorder.record(job, 'Warning', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
}

function syncJob(context: Context, job: Workload): ReconcileResult {
  if (isFinished(job)) return undefined;
  const { store } = context;
  const counts = countPods(
    ownedPods(
      store,
      job,
      job.spec.selector ?? { matchLabels: { 'batch.kubernetes.io/controller-uid': job.metadata.uid ?? '' } },
    ),
  );
  const completions = numberOr(job.spec.completions, 1);
  if (counts.succeeded >= completions) {
    finishJob(context, job, counts, 'Complete');
    return undefined;
  }
  if (counts.failed > numberOr(job.spec.backoffLimit, 6)) {
    finishJob(context, job, counts, 'Failed');
    return undefined;
  }
  const recorder = context.recorder({ component: 'job-controller' });
  const wanted = Math.min(numberOr(job.spec.parallelism, 1), completions - counts.succeeded) - counts.active.length;
  for (let i = 0; i < wanted; i++) {
    const pod = createPod(store, podFromTemplate(job, { labels: jobLabels(job) }));
    if (pod) recorder.record(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
  }
  writeStatus(store, REFS.jobs, job, countsStatus(job, counts, store.clock.nowIso()));
  return undefined;
}

/** Starts the Job controller. */
export function startJobController(context: Context): Controller {
  return startWorkloadLoop(context, {
    name: 'job',
    ref: REFS.jobs,
    podOwnerKind: 'Job',
    sync: (job) => syncJob(context, job),
  });
}
