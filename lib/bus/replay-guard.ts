/**
 * Replay protection for SigV4-signed calls (bus-endpoint.ts). A signature is good for five minutes either
 * side of the receiver's clock (sigv4.ts); within that window a captured call could be sent again as it
 * is. Each accepted signature is remembered until its window closes, and a second call carrying it is
 * refused. The SDK signs every attempt anew (the signed `amz-sdk-request` header counts attempts, and
 * X-Amz-Date moves), so an honest retry never repeats a signature.
 *
 * Only signatures that verified are remembered, so only holders of the key add entries; expired ones
 * are dropped as new ones arrive. Per process: a replay sent to another replica is refused there only
 * if it leads (a follower takes nothing), and the workflow drops a repeated requestId in any case.
 */
import { MAX_CLOCK_SKEW_MS } from './sigv4.ts';

export class SeenSignatures {
  /** signature → when it stops being accepted anyway (ms). */
  readonly #until = new Map<string, number>();
  #nextSweep = 0;

  /** Records `signature`; false when it was recorded before and its window has not closed. */
  admit(signature: string, signedAt: number, now: number): boolean {
    this.#sweep(now);
    const until = this.#until.get(signature);
    if (until !== undefined && until >= now) return false;
    // Past signedAt + skew the signature is refused as expired; `now` guards a clock that stepped back.
    this.#until.set(signature, Math.max(signedAt, now) + MAX_CLOCK_SKEW_MS);
    return true;
  }

  /** How many signatures are remembered (for tests). */
  get size(): number {
    return this.#until.size;
  }

  #sweep(now: number): void {
    if (now < this.#nextSweep) return;
    this.#nextSweep = now + 10_000;
    for (const [signature, until] of this.#until) if (until < now) this.#until.delete(signature);
  }
}
