/**
 * The HTTP front: authenticate → authorize (RBAC) → admission hooks → handler → JSON answer, with
 * every request recorded in the request log.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { impersonatedUser } from '../auth/impersonation.ts';
import { authorize, forbiddenMessage } from '../auth/rbac.ts';
import type { AccessAttributes } from '../auth/rules.ts';
import { internalError, isStatusError, StatusError } from '../store/status.ts';
import type { AdmissionRequest } from '../store/types.ts';
import { decodeBody, readBytes } from './body.ts';
import type { Reply, RequestContext, ServerParts } from './context.ts';
import { serveNonResource } from './non-resource.ts';
import { isDryRun } from './query.ts';
import { parseRequestInfo, type RequestInfo } from './request-info.ts';
import { isStateChange, isWriteVerb, type RequestLog } from './request-log.ts';
import { notServed, routeResource } from './router.ts';

function accessOf(info: RequestInfo): AccessAttributes {
  const { verb, isResourceRequest, path, group, resource, subresource, namespace, name } = info;
  return { verb, isResourceRequest, path, group, resource, subresource, namespace, name };
}

function refusal(ctx: RequestContext, reason: string): StatusError {
  const text = forbiddenMessage(ctx.user, accessOf(ctx.info)) + (reason ? `: ${reason}` : '');
  const { group, resource, name } = ctx.info;
  if (!ctx.info.isResourceRequest) return new StatusError(403, 'Forbidden', `forbidden: ${text}`, {});
  const qualified = group ? `${resource}.${group}` : resource;
  const subject = name ? `${qualified} "${name}"` : qualified;
  const details: Record<string, string> = { kind: resource };
  if (name) details.name = name;
  if (group) details.group = group;
  return new StatusError(403, 'Forbidden', `${subject} is forbidden: ${text}`, details);
}

function write(res: ServerResponse, reply: NonNullable<Reply>): void {
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  res.writeHead(reply.code, { 'content-type': reply.contentType ?? 'application/json', ...reply.headers });
  res.end(text);
}

function errorReply(error: unknown): NonNullable<Reply> {
  const status = isStatusError(error) ? error : internalError(error instanceof Error ? error.message : String(error));
  const headers: Record<string, string> = {};
  const retryAfter = status.details?.retryAfterSeconds;
  if (retryAfter) headers['retry-after'] = String(retryAfter);
  return { code: status.code, body: status.toStatus(), headers };
}

async function admit(ctx: RequestContext): Promise<void> {
  const { info } = ctx;
  if (!info.isResourceRequest || !isWriteVerb(info.verb)) return;
  const request: AdmissionRequest = {
    verb: info.verb as AdmissionRequest['verb'],
    group: info.group,
    version: info.version,
    resource: info.resource,
    user: ctx.user,
    dryRun: ctx.dryRun,
    body: await ctx.body(),
  };
  if (info.subresource) request.subresource = info.subresource;
  if (info.namespace) request.namespace = info.namespace;
  if (info.name) request.name = info.name;
  const verdict = await ctx.parts.store.admission.run(request);
  if (verdict) throw verdict.status;
}

const includesAll = (value: unknown): boolean => Array.isArray(value) && value.includes('All');

/** Dry run asked for in the body: an Eviction's `deleteOptions.dryRun` or a DeleteOptions' `dryRun`. */
async function bodyAsksDryRun(ctx: RequestContext): Promise<boolean> {
  const { verb, subresource } = ctx.info;
  const isEviction = subresource === 'eviction' && verb === 'create';
  if (!isEviction && verb !== 'delete' && verb !== 'deletecollection') return false;
  const body = (await ctx.body()) as { dryRun?: unknown; deleteOptions?: { dryRun?: unknown } } | undefined;
  return includesAll(isEviction ? body?.deleteOptions?.dryRun : body?.dryRun);
}

async function handle(ctx: RequestContext): Promise<Reply> {
  if (ctx.info.isResourceRequest && ctx.parts.faults && !(await ctx.parts.faults.hold(ctx))) return undefined;
  if (ctx.info.isResourceRequest && ctx.parts.faults?.intercept(ctx)) return undefined;
  const decision = authorize(ctx.parts.store, ctx.user, accessOf(ctx.info));
  if (!decision.allowed) throw refusal(ctx, decision.reason);
  if (!ctx.info.isResourceRequest) return serveNonResource(ctx);
  const type = ctx.parts.store.registry.lookup(ctx.info.group, ctx.info.version, ctx.info.resource);
  if (!type) throw notServed();
  ctx.type = type;
  const handler = routeResource(ctx.info, type);
  if (await bodyAsksDryRun(ctx)) ctx.dryRun = true;
  await admit(ctx);
  return handler(ctx);
}

function contextOf(req: IncomingMessage, res: ServerResponse, parts: ServerParts): RequestContext | undefined {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const user = parts.authenticator.authenticate(req.headers.authorization);
  let body: Promise<unknown> | undefined;
  const info = parseRequestInfo(req.method ?? 'GET', url);
  if (!user) return undefined;
  return {
    req,
    res,
    url,
    info,
    user,
    parts,
    dryRun: false,
    body: () => {
      body ??= readBytes(req).then((bytes) => decodeBody(bytes, req.headers['content-type']));
      return body;
    },
  };
}

const UNAUTHORIZED = new StatusError(401, 'Unauthorized', 'Unauthorized');

/** Serves one request and records it. */
async function serve(req: IncomingMessage, res: ServerResponse, parts: ServerParts, log: RequestLog): Promise<void> {
  const ctx = contextOf(req, res, parts);
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const info = ctx?.info ?? parseRequestInfo(req.method ?? 'GET', url);
  let code: number;
  try {
    if (!ctx) throw UNAUTHORIZED;
    ctx.user = impersonatedUser(parts.store, ctx.user, req.headers);
    ctx.dryRun = isDryRun(ctx.url.searchParams);
    const reply = await handle(ctx);
    if (reply) write(res, reply);
    code = reply?.code ?? res.statusCode;
  } catch (error) {
    const reply = errorReply(error);
    if (!res.headersSent) write(res, reply);
    else res.end();
    code = reply.code;
  }
  log.add({
    at: Date.now(),
    method: req.method ?? 'GET',
    path: info.path,
    query: url.search,
    verb: info.verb,
    group: info.group,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
    user: ctx?.user.username ?? '',
    userAgent: req.headers['user-agent'] ?? '',
    status: code,
    write: info.isResourceRequest && isStateChange(info) && !ctx?.dryRun,
    dryRun: ctx?.dryRun ?? false,
  });
}

/** An HTTP(S) server for the simulator (not yet listening); HTTPS when `tls` is given. */
export function createApiServer(parts: ServerParts, log: RequestLog, tls?: { key: string; cert: string }): Server {
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    serve(req, res, parts, log).catch((error: unknown) => {
      // serve() answers every error itself; reaching here means the socket broke mid-answer.
      if (!res.headersSent) write(res, errorReply(error));
    });
  };
  const server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, listener) : createHttpServer(listener);
  server.keepAliveTimeout = 5_000;
  return server;
}
