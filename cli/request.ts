/**
 * The request a command puts on the bus, checked against the bus contract before anything runs, with
 * each problem named by the flag (or operand) the person typed rather than the event field.
 */

import type { DetailByType, DetailType } from '../lib/bus/contracts/index.ts';
import { parseDetail } from '../lib/bus/contracts/index.ts';
import { InvalidInput } from '../lib/errors/index.ts';
import { UsageError } from './command.ts';

/** Event field → what the person typed. */
const FIELD_FLAGS: Readonly<Record<string, string>> = {
  requestId: '--request-id',
  reason: '--reason',
  deadline: '--deadline',
  'target.nodeName': 'NODE',
  target: 'NODE',
  'drain.podSelector': '--pod-selector',
  'drain.gracePeriodSeconds': '--grace-period',
  'drain.timeoutSeconds': '--timeout',
  'drain.chunkSize': '--chunk-size',
  'drain.skipWaitForDeleteTimeoutSeconds': '--skip-wait-for-delete-timeout',
};

/** Validates `detail` as the bus will; a refusal is a UsageError naming the flags. */
export function validateRequest<T extends DetailType>(detailType: T, detail: DetailByType[T]): void {
  try {
    parseDetail(detailType, detail);
  } catch (error) {
    if (!(error instanceof InvalidInput)) throw error;
    throw new UsageError(error.problems.map((p) => `${FIELD_FLAGS[p.path] ?? p.path}: ${p.message}`).join('; '));
  }
}

/** Words as a shell would need them typed (single quotes around anything unusual). */
export function shellWords(words: readonly string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}
