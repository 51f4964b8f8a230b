/**
 * What an Evacuation record's `status.waiting` says for a request waiting in line (the Admit step writes it,
 * a NodeMaintenance's lastError shows it). Pure.
 */

/** A wait for the cluster-wide slots: its place in line and the slots' holders, which move on. */
const LINE_REASON = /^(waiting behind \d+ older request|all \d+ maintenance slot\(s\) are in use)/;
const AS_OF = /^as of (\S+): /;

/**
 * A wait for the slots says when it was decided (`as of 2026-11-28T09:02:00.000Z: all 2 maintenance slot(s)
 * are in use (…); 7 request(s) ahead`): further back in line the request is told it waits from the admission
 * Lease alone (waitFromLease), which does not read this record, so the count and the holders stay as they
 * were until it nears the front (`drainbridge status` shows its place now). Limits, gates and a paused
 * admission are decided again at each retry and written when they change. First, so that the 1,024
 * characters a record keeps never cut it off.
 */
export function saidAsOf(why: string, now: Date): string {
  return LINE_REASON.test(why) ? `as of ${now.toISOString()}: ${why}` : why;
}

/** The reason as said, without when: what a new reason is compared with (written only when it changed). */
export function withoutAsOf(shown: string | undefined): string | undefined {
  return shown?.replace(AS_OF, '');
}
