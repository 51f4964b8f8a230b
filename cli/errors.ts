/**
 * How a failure reaches a person: one or two plain sentences and an exit status from the table — never
 * a stack trace or an HTTP dump (both go to the log, at debug, when a log is asked for). Pure.
 */

import { type ApiStatus, apiStatusOf, KubeApiError } from '../lib/clients/kube/errors.ts';
import {
  ClusterUnreachable,
  ConfigError,
  DrainbridgeError,
  InvalidInput,
  RecordUnreadable,
} from '../lib/errors/index.ts';
import { connectionWords } from '../lib/util/connection-words.ts';
import { CommandFailed, UsageError } from './command.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';

export interface Presented {
  readonly exit: ExitCode;
  readonly message: string;
}

/** At most one line of at most `max` characters: bodies of proxies and gateways can be whole pages. */
export function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function operationOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof KubeApiError) return current.operation;
    current = current.cause;
  }
  return undefined;
}

/** A network error's code anywhere in the cause chain (`ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`, …). */
function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

/** `https://host:port` out of the HTTP client's message, when it names the URL. */
function serverOf(message: string): string | undefined {
  const url = /request to (\S+) failed/.exec(message)?.[1];
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}

/** What the API server's answer means for the person running the command. */
function presentApiStatus(operation: string, status: ApiStatus, error: unknown): Presented {
  if (status.code === 0) {
    const server = serverOf(status.message);
    return {
      exit: EXIT.notReady,
      message: `cannot reach the Kubernetes API server${server ? ` at ${server}` : ''}: ${connectionWords(networkCode(error), status.message)} (while trying to ${operation})`,
    };
  }
  if (status.code === 401) {
    return {
      exit: EXIT.notReady,
      message: `${operation}: the API server refused the kubeconfig's credentials (401 Unauthorized): renew the token or pick another context`,
    };
  }
  const reason = status.reason ? ` ${status.reason}` : '';
  const exit = status.code === 403 || status.code >= 500 ? EXIT.notReady : EXIT.failed;
  return { exit, message: `${operation}: ${status.code}${reason}: ${oneLine(status.message)}` };
}

/** The exit status and message for an error a command threw. */
export function presentError(error: unknown): Presented {
  if (error instanceof UsageError || error instanceof InvalidInput) {
    return { exit: EXIT.usage, message: error.message };
  }
  if (error instanceof ConfigError) return { exit: EXIT.usage, message: error.message };
  // The first call found no API server (refused, unknown host, a certificate of another cluster): the
  // client's sentence says what to check; nothing was changed.
  if (error instanceof ClusterUnreachable) return { exit: EXIT.notReady, message: oneLine(error.message, 500) };
  // A damaged record drainbridge keeps stops the command before it changes anything (drainbridge repair).
  if (error instanceof RecordUnreadable) return { exit: EXIT.refused, message: oneLine(error.message, 500) };
  if (error instanceof CommandFailed) return { exit: error.exit as ExitCode, message: error.message };
  const status = apiStatusOf(error);
  const operation = operationOf(error);
  if (status && operation) return presentApiStatus(operation, status, error);
  // A node (or other target) that does not exist is a bad argument; nothing was changed.
  if (error instanceof Error && error.name === 'TargetNotFound') return { exit: EXIT.usage, message: error.message };
  if (error instanceof DrainbridgeError) return { exit: EXIT.failed, message: oneLine(error.message, 500) };
  const message = error instanceof Error ? error.message : String(error);
  return { exit: EXIT.failed, message: oneLine(message, 500) };
}
