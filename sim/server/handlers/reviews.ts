/**
 * The review resources, answered and never stored: SelfSubjectAccessReview (`kubectl auth can-i`),
 * SubjectAccessReview, SelfSubjectReview (`kubectl auth whoami`).
 */
import { authorize, rulesFor } from '../../auth/rbac.ts';
import type { AccessAttributes } from '../../auth/rules.ts';
import { badRequest } from '../../store/status.ts';
import type { UserInfo } from '../../store/types.ts';
import type { Reply, RequestContext } from '../context.ts';

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

interface ReviewSpec {
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  uid?: string;
}

function attributesOf(spec: ReviewSpec): AccessAttributes {
  const resource = spec.resourceAttributes;
  if (resource) {
    return {
      verb: resource.verb ?? '',
      isResourceRequest: true,
      path: '',
      group: resource.group ?? '',
      resource: resource.resource ?? '',
      subresource: resource.subresource ?? '',
      namespace: resource.namespace ?? '',
      name: resource.name ?? '',
    };
  }
  const nonResource = spec.nonResourceAttributes;
  if (!nonResource)
    throw badRequest(
      'spec: Invalid value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  return {
    verb: nonResource.verb ?? '',
    isResourceRequest: false,
    path: nonResource.path ?? '',
    group: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
}

function specOf(body: unknown): ReviewSpec {
  const spec = (body as { spec?: unknown } | undefined)?.spec;
  if (!spec || typeof spec !== 'object') throw badRequest('spec: Required value');
  return spec as ReviewSpec;
}

function review(ctx: RequestContext, body: unknown, user: UserInfo): Reply {
  const spec = specOf(body);
  const decision = authorize(ctx.parts.store, user, attributesOf(spec));
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  const kind = ctx.info.resource === 'selfsubjectaccessreviews' ? 'SelfSubjectAccessReview' : 'SubjectAccessReview';
  return {
    code: 201,
    body: { kind, apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec, status },
  };
}

/** POST selfsubjectaccessreviews: may the caller do this? */
export async function selfSubjectAccessReview(ctx: RequestContext): Promise<Reply> {
  return review(ctx, await ctx.body(), ctx.user);
}

/** POST subjectaccessreviews: may the named user do this? */
export async function subjectAccessReview(ctx: RequestContext): Promise<Reply> {
  const body = await ctx.body();
  const spec = specOf(body);
  const user: UserInfo = { username: spec.user ?? '', groups: spec.groups ?? [] };
  return review(ctx, body, user);
}

/** POST selfsubjectreviews: who am I? */
export async function selfSubjectReview(ctx: RequestContext): Promise<Reply> {
  const userInfo: Record<string, unknown> = { username: ctx.user.username, groups: ctx.user.groups };
  if (ctx.user.uid) userInfo.uid = ctx.user.uid;
  return {
    code: 201,
    body: {
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      status: { userInfo },
    },
  };
}

/** POST selfsubjectrulesreviews: what may the caller do in a namespace (`kubectl auth can-i --list`)? */
export async function selfSubjectRulesReview(ctx: RequestContext): Promise<Reply> {
  const body = (await ctx.body()) as { spec?: { namespace?: unknown } } | undefined;
  const namespace = typeof body?.spec?.namespace === 'string' ? body.spec.namespace : '';
  const { rules, errors } = rulesFor(ctx.parts.store, ctx.user, namespace);
  const resourceRules = rules
    .filter((r) => (r.resources ?? []).length > 0)
    .map(({ verbs = [], apiGroups = [], resources = [], resourceNames }) =>
      resourceNames ? { verbs, apiGroups, resources, resourceNames } : { verbs, apiGroups, resources },
    );
  const nonResourceRules = rules
    .filter((r) => (r.nonResourceURLs ?? []).length > 0)
    .map(({ verbs = [], nonResourceURLs = [] }) => ({ verbs, nonResourceURLs }));
  const status: Record<string, unknown> = { resourceRules, nonResourceRules, incomplete: errors.length > 0 };
  if (errors.length > 0) status.evaluationError = errors.join(', ');
  return {
    code: 201,
    body: {
      kind: 'SelfSubjectRulesReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { namespace },
      status,
    },
  };
}
