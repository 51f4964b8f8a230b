/**
 * The one way tests wait for something to happen: poll a condition until it holds, never sleep a fixed time
 * and then assert (that passes by luck when the machine is fast and flakes when it is loaded).
 */

/** A condition: a value (other than undefined, null or false) once it holds. */
export type Condition<T> = () => T | undefined | null | false | Promise<T | undefined | null | false>;

export interface WaitOptions {
  /** How often to look again (default 10 ms; more for a check that calls a real service). */
  readonly everyMs?: number;
  /** What to add to the timeout's message: what was seen meanwhile (a process's last lines, …). */
  readonly context?: () => string;
}

/**
 * Polls `condition` (real time) until it gives a value other than undefined, null or false, and resolves to
 * that value (nothing, for a yes/no condition); fails naming `what` after `limitMs`. The limit only bounds a
 * failing test: a passing one waits as long as the condition takes.
 */
export function waitUntil(
  what: string,
  condition: () => boolean | Promise<boolean>,
  limitMs?: number,
  options?: WaitOptions,
): Promise<void>;
export function waitUntil<T>(
  what: string,
  condition: Condition<T>,
  limitMs?: number,
  options?: WaitOptions,
): Promise<T>;
export async function waitUntil<T>(
  what: string,
  condition: Condition<T>,
  limitMs = 30_000,
  options: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) {
      const seen = options.context?.() ?? '';
      throw new Error(`timed out after ${limitMs} ms waiting until ${what}${seen ? `\n${seen}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
  }
}
