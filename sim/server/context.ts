/** What every handler gets: the parsed request, the caller, the simulator's parts. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TokenAuthenticator } from '../auth/authenticator.ts';
import type { ObjectStore, ResourceType, UserInfo } from '../store/types.ts';
import type { FaultInjector } from './faults.ts';
import type { RequestInfo } from './request-info.ts';

/** The simulator's parts a handler may use. */
export interface ServerParts {
  store: ObjectStore;
  authenticator: TokenAuthenticator;
  /** `/version`'s answer. */
  version: Record<string, string>;
  /** Injected faults (dropped watches, 410s, 5xx), consulted before every resource handler. */
  faults?: FaultInjector;
}

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  info: RequestInfo;
  user: UserInfo;
  parts: ServerParts;
  /** `dryRun=All` in the query. */
  dryRun: boolean;
  /** The served type, for resource requests. */
  type?: ResourceType;
  /** The request body, read and decoded once (JSON, or YAML for apply patches). */
  body(): Promise<unknown>;
}

/** A handler's answer; `undefined` means it wrote the response itself (watch streams). */
export type Reply = { code: number; body: unknown; contentType?: string; headers?: Record<string, string> } | undefined;

export type Handler = (ctx: RequestContext) => Promise<Reply>;
