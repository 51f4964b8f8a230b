/**
 * Pod statuses the simulated kubelet and scheduler write, built purely from the pod and the time, in
 * the shape a real kubelet reports them (conditions, container statuses, IPs), because kubectl's
 * READY/STATUS columns and drain's filters read exactly these fields.
 */
import { fnv32a } from './meta.ts';
import type { Condition, ContainerStatus, Pod, PodStatus } from './types.ts';

/** Sets (or replaces) one condition; the transition time moves only when the status changes. */
export function withCondition(conditions: readonly Condition[] | undefined, next: Condition): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === next.type);
  const previous = index >= 0 ? list[index] : undefined;
  const merged: Condition = {
    lastProbeTime: null,
    ...next,
    lastTransitionTime:
      previous && previous.status === next.status ? previous.lastTransitionTime : next.lastTransitionTime,
  };
  if (index >= 0) list[index] = merged;
  else list.push(merged);
  return list;
}

function fakeId(prefix: string, seed: string): string {
  const part = (n: number): string => fnv32a(`${seed}/${n}`).toString(16).padStart(8, '0');
  return `${prefix}${part(1)}${part(2)}${part(3)}${part(4)}${part(5)}${part(6)}${part(7)}${part(8)}`;
}

function imageOf(image: string | undefined): { image: string; imageID: string } {
  const name = image ?? 'registry.k8s.io/pause:3.10';
  const qualified = name.includes('/') ? name : `docker.io/library/${name}`;
  return { image: qualified, imageID: `${qualified.split(':')[0]}@${fakeId('sha256:', name)}` };
}

/** Where the pod runs: the node's address and the pod's own. */
export interface Placement {
  readonly hostIP: string;
  readonly podIP: string;
}

function runningContainers(pod: Pod, now: string): ContainerStatus[] {
  return pod.spec.containers.map((container) => ({
    name: container.name,
    ...imageOf(container.image),
    containerID: fakeId('containerd://', `${pod.metadata.uid}/${container.name}`),
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: now } },
  }));
}

/** The status of a pod whose containers have started and pass readiness. */
export function runningStatus(pod: Pod, placement: Placement, now: string): PodStatus {
  let conditions = pod.status?.conditions;
  for (const type of ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']) {
    conditions = withCondition(conditions, { type, status: 'True', lastTransitionTime: now });
  }
  return {
    ...pod.status,
    phase: 'Running',
    conditions,
    containerStatuses: runningContainers(pod, now),
    hostIP: placement.hostIP,
    hostIPs: [{ ip: placement.hostIP }],
    podIP: placement.podIP,
    podIPs: [{ ip: placement.podIP }],
    startTime: pod.status?.startTime ?? now,
  };
}

/** The status of a pod whose containers all exited 0 (a finished Job pod). */
export function succeededStatus(pod: Pod, now: string): PodStatus {
  let conditions = pod.status?.conditions;
  for (const type of ['PodReadyToStartContainers', 'Ready', 'ContainersReady']) {
    const reason = type === 'PodReadyToStartContainers' ? undefined : 'PodCompleted';
    conditions = withCondition(conditions, {
      type,
      status: 'False',
      lastTransitionTime: now,
      ...(reason ? { reason } : {}),
    });
  }
  const containerStatuses = (pod.status?.containerStatuses ?? runningContainers(pod, now)).map((status) => {
    const running = status.state.running as { startedAt?: string } | undefined;
    return {
      ...status,
      ready: false,
      started: false,
      state: {
        terminated: {
          exitCode: 0,
          reason: 'Completed',
          startedAt: running?.startedAt ?? now,
          finishedAt: now,
          containerID: status.containerID,
        },
      },
    };
  });
  return { ...pod.status, phase: 'Succeeded', conditions, containerStatuses };
}

/** PodScheduled=False with the scheduler's reason, for a pod no node takes. */
export function unschedulableStatus(pod: Pod, message: string, now: string): PodStatus {
  return {
    ...pod.status,
    phase: pod.status?.phase ?? 'Pending',
    conditions: withCondition(pod.status?.conditions, {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message,
      lastTransitionTime: now,
    }),
  };
}

/** PodScheduled=True, written when the pod is bound (replacing an Unschedulable reason and message). */
export function scheduledStatus(pod: Pod, now: string): PodStatus {
  const conditions = withCondition(pod.status?.conditions, {
    type: 'PodScheduled',
    status: 'True',
    lastTransitionTime: now,
  });
  return { ...pod.status, phase: pod.status?.phase ?? 'Pending', conditions };
}
