/**
 * Step Functions' side of waking a request waiting in line (issue 23): the forwarder watches the
 * admission Lease (lib/admission/waker.ts, wired in cli/commands/forwarder.ts) and hands each parked
 * task token here, which sends it back with SendTaskSuccess so that the execution's WaitForSlot or
 * WaitInLine state ends and Admit decides again. The forwarder's credentials need `states:SendTaskSuccess`
 * (docs/aws.md). The SDK's module is loaded at the first wake-up, not at the forwarder's start.
 */
import type { SFNClient, SFNClientConfig } from '@aws-sdk/client-sfn';

/** A wake-up is worth little once late: the wait's fallback is 10 s, so no long SDK retries. */
export const SFN_CLIENT_DEFAULTS = {
  maxAttempts: 2,
  retryMode: 'standard',
  requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
} as const satisfies SFNClientConfig;

/**
 * The answers that mean "nobody waits with this token now": woken already, timed out (the fallback ran),
 * the execution ended, or a token that is not Step Functions' (an embedded executor's, parked by a
 * `drainbridge evacuate` run elsewhere). Not failures: the request is not waiting on this wake-up.
 */
const NOT_WAITING = new Set(['TaskDoesNotExist', 'TaskTimedOut', 'InvalidToken']);

/** Sends task tokens back to Step Functions; resolves false when no task waits with the token. */
export type TokenDelivery = (token: string) => Promise<boolean>;

/** SendTaskSuccess through `client` (default: the SDK's credential chain and region). */
export function stepFunctionsDelivery(client?: SFNClient): TokenDelivery {
  let ready: Promise<{ send: SFNClient['send']; Command: typeof import('@aws-sdk/client-sfn').SendTaskSuccessCommand }>;
  const load = () => {
    ready ??= import('@aws-sdk/client-sfn').then((sdk) => {
      const sfn = client ?? new sdk.SFNClient({ ...SFN_CLIENT_DEFAULTS });
      return { send: sfn.send.bind(sfn) as SFNClient['send'], Command: sdk.SendTaskSuccessCommand };
    });
    return ready;
  };
  return async (token) => {
    const { send, Command } = await load();
    try {
      await send(new Command({ taskToken: token, output: '{}' }));
      return true;
    } catch (error) {
      if (NOT_WAITING.has((error as { name?: unknown }).name as string)) return false;
      throw error;
    }
  };
}
