/**
 * The writes a command makes after Ctrl-C (handing its request back, withdrawing a request that only
 * waited in line) and the read that says what was left: each rides out a transient API fault for a while.
 * Without this, one 429 burst at the moment of Ctrl-C left a waiting request's record without an end for
 * ever — no process drives it any more (issue 24, soak seeds 979070 and 916278). A second Ctrl-C still
 * leaves at once (cli/command.ts).
 */
import { withRetryFor } from '../lib/util/retry.ts';

/** How long the cleanup after Ctrl-C keeps retrying: past a soak's 429 burst (healed within 20 s) and an API restart. */
export const AFTER_INTERRUPT_BUDGET_MS = 30_000;

/** What may pass by itself: a 5xx, 429, a cut or refused connection after the server answered, a conflict. */
function mayPass(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  return name === 'TransientError' || name === 'ConflictError';
}

export function afterInterrupt<T>(
  call: () => Promise<T>,
  options: { readonly budgetMs?: number; readonly sleep?: (ms: number) => Promise<void> } = {},
): Promise<T> {
  return withRetryFor(call, {
    budgetMs: options.budgetMs ?? AFTER_INTERRUPT_BUDGET_MS,
    baseDelayMs: 500,
    maxDelayMs: 4_000,
    isRetryable: mayPass,
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
}
