/** pods/binding (the scheduler's write) and serviceaccounts/token (TokenRequest). */
import { badRequest, conflict } from '../../store/status.ts';
import type { Reply, RequestContext } from '../context.ts';

const PODS = { group: '', resource: 'pods' };
const SERVICE_ACCOUNTS = { group: '', resource: 'serviceaccounts' };

/** POST pods/<name>/binding: sets spec.nodeName once; 409 when the pod is already bound. */
export async function bindPod(ctx: RequestContext): Promise<Reply> {
  const body = (await ctx.body()) as { target?: { name?: string } } | undefined;
  const node = body?.target?.name;
  if (!node) throw badRequest('target.name: Required value');
  const { namespace, name } = ctx.info;
  const store = ctx.parts.store;
  const pod = store.mustGet(PODS, namespace, name);
  const bound = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (bound) throw conflict(PODS, name, `pod ${name} is already assigned to node "${bound}"`);
  if (!ctx.dryRun) {
    store.mutate(PODS, { namespace, name }, (copy) => {
      copy.spec = { ...(copy.spec as object), nodeName: node };
      return copy;
    });
  }
  return { code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
}

/** The apiserver's bounds for a requested token lifetime (ExpirationSeconds). */
const MIN_TOKEN_SECONDS = 600;
const MAX_TOKEN_SECONDS = 2 ** 32;
const DEFAULT_TOKEN_SECONDS = 3600;

/** Kinds a token may be bound to (the apiserver's list without the feature-gated Node). */
const BOUND_KINDS: Readonly<Record<string, { group: string; resource: string }>> = {
  Pod: PODS,
  Secret: { group: '', resource: 'secrets' },
};

interface BoundObjectRef {
  kind?: string;
  apiVersion?: string;
  name?: string;
  uid?: string;
}

/** The object the token is bound to, which must exist in the account's namespace; its uid filled in. */
function boundObject(ctx: RequestContext, ref: BoundObjectRef): BoundObjectRef {
  const resource = BOUND_KINDS[ref.kind ?? ''];
  if (!resource) {
    throw badRequest(
      `spec.boundObjectRef.kind: Unsupported value: "${ref.kind ?? ''}": supported values: "Pod", "Secret"`,
    );
  }
  const object = ctx.parts.store.mustGet(resource, ctx.info.namespace, ref.name ?? '');
  return { kind: ref.kind, apiVersion: 'v1', name: ref.name, uid: object.metadata.uid };
}

/** The TokenRequest's spec as sent (`kubectl create token --duration --audience`); defaults as the apiserver's. */
function tokenSpecOf(
  ctx: RequestContext,
  body: unknown,
): { audiences: string[]; expirationSeconds: number; boundObjectRef?: BoundObjectRef } {
  const spec = ((body as { spec?: unknown } | undefined)?.spec ?? {}) as {
    audiences?: unknown;
    expirationSeconds?: unknown;
    boundObjectRef?: BoundObjectRef;
  };
  const seconds = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : DEFAULT_TOKEN_SECONDS;
  if (seconds < MIN_TOKEN_SECONDS) {
    throw badRequest(
      `spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
    );
  }
  if (seconds > MAX_TOKEN_SECONDS) {
    throw badRequest(
      `spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
    );
  }
  const audiences =
    Array.isArray(spec.audiences) && spec.audiences.length > 0
      ? spec.audiences.map(String)
      : ['https://kubernetes.default.svc.cluster.local'];
  const bound = spec.boundObjectRef ? { boundObjectRef: boundObject(ctx, spec.boundObjectRef) } : {};
  return { audiences, expirationSeconds: seconds, ...bound };
}

/**
 * POST serviceaccounts/<name>/token: a bearer token for the account (`kubectl create token`, which sends
 * the TokenRequest as protobuf). The simulator's tokens do not expire; the answer states the lifetime asked for.
 */
export async function requestToken(ctx: RequestContext): Promise<Reply> {
  const { namespace, name } = ctx.info;
  const spec = tokenSpecOf(ctx, await ctx.body());
  const account = ctx.parts.store.mustGet(SERVICE_ACCOUNTS, namespace, name);
  const token = ctx.parts.authenticator.issueForServiceAccount(namespace, name, account.metadata.uid);
  const expiration = new Date(ctx.parts.store.clock.now() + spec.expirationSeconds * 1000).toISOString();
  return {
    code: 201,
    body: {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: null },
      spec,
      status: { token, expirationTimestamp: `${expiration.slice(0, 19)}Z` },
    },
  };
}
