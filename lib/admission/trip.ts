/**
 * The circuit breaker's record on the admission Lease, written: a failed evacuation noted (and the
 * breaker tripped at the K-th within its window), and `drainbridge resume` closing it again. Both are
 * edits without the mutex (mutex.ts, editWithoutMutex): they change no hold and no place in line. The
 * mutex is held for seconds only, so an edit that finds it held tries again for a little longer than it
 * can last, rather than lose a failure.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { readLease } from '../clients/kube/lease.ts';
import {
  type BreakerFailure,
  type BreakerRecord,
  type BreakerSetting,
  noteFailure,
  resumeBreaker,
  resumeToAnnounce,
} from './breaker.ts';
import { editWithoutMutex, MUTEX_SECONDS } from './mutex.ts';
import { ADMISSION_LEASE, readBreaker } from './records.ts';

const EDIT_PAUSE_MS = 500;

/**
 * `edit` applied until it writes or has nothing to write, for up to twice the mutex's life in real time
 * (`clock` is the workflow's, which a simulator runs faster: it only tells whether the mutex is free).
 */
async function editPatiently(
  client: KubeClient,
  namespace: string,
  clock: () => Date,
  edit: Parameters<typeof editWithoutMutex>[2],
): Promise<boolean> {
  const until = Date.now() + 2 * MUTEX_SECONDS * 1000;
  for (;;) {
    let unchanged = false;
    const first = await readLease(client, namespace, ADMISSION_LEASE);
    if (!first) return false; // no Lease: nothing was ever admitted, nothing is paused
    const wrote = await editWithoutMutex(client, { namespace, now: clock(), first }, (lease) => {
      const changed = edit(lease);
      unchanged = changed === undefined;
      return changed;
    });
    if (wrote || unchanged || Date.now() >= until) return wrote;
    await new Promise((resolve) => setTimeout(resolve, EDIT_PAUSE_MS));
  }
}

/**
 * Notes a failed evacuation on the breaker; `paused`: this failure tripped it, and the record it wrote
 * (the caller tells people: a Warning Event, the bus, the log). `recorded` false: the Lease is gone, or
 * stayed locked.
 */
export async function noteEvacuationFailed(
  client: KubeClient,
  namespace: string,
  failure: BreakerFailure,
  at: { readonly setting: BreakerSetting; readonly clock: () => Date },
): Promise<{ readonly recorded: boolean; readonly paused?: BreakerRecord }> {
  let noted: { record: BreakerRecord; tripped: boolean } | undefined;
  const recorded = await editPatiently(client, namespace, at.clock, (lease) => {
    noted = noteFailure(readBreaker(lease), failure, at.setting);
    return { breaker: noted.record };
  });
  return { recorded, ...(recorded && noted?.tripped ? { paused: noted.record } : {}) };
}

/**
 * Closes the breaker (`drainbridge resume`): admission admits again, and the failures before it are
 * forgotten. `wasPaused`: why it was paused (undefined: it was not — nothing is written then).
 */
export async function resumeAdmission(
  client: KubeClient,
  namespace: string,
  by: string,
  clock: () => Date,
): Promise<{ readonly wasPaused: string | undefined; readonly written: boolean }> {
  let wasPaused: string | undefined;
  const written = await editPatiently(client, namespace, clock, (lease) => {
    const record = readBreaker(lease);
    wasPaused = record.pausedAt === undefined ? undefined : (record.reason ?? `paused since ${record.pausedAt}`);
    if (wasPaused === undefined) return undefined;
    return { breaker: resumeBreaker(by, clock(), record) };
  });
  return { wasPaused, written };
}

/**
 * Claims the announcement of the last resume (`Admission Resumed`), when one is due on `lease` as read:
 * one conditional write, so among the Admit steps that find it due only the one whose write lands
 * publishes. Returns the resumed record it claimed; undefined when none was due or another claimed it.
 */
export async function claimResumeAnnouncement(
  client: KubeClient,
  namespace: string,
  at: { readonly lease: V1Lease | undefined; readonly now: Date },
): Promise<BreakerRecord | undefined> {
  if (!at.lease || resumeToAnnounce(readBreaker(at.lease)) === undefined) return undefined;
  let claimed: BreakerRecord | undefined;
  const wrote = await editWithoutMutex(client, { namespace, now: at.now, first: at.lease }, (lease) => {
    claimed = resumeToAnnounce(readBreaker(lease));
    return claimed ? { breaker: claimed } : undefined;
  });
  return wrote ? claimed : undefined;
}
