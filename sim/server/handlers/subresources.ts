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

/** POST serviceaccounts/<name>/token: a bearer token for the account. */
export async function requestToken(ctx: RequestContext): Promise<Reply> {
  const { namespace, name } = ctx.info;
  const account = ctx.parts.store.mustGet(SERVICE_ACCOUNTS, namespace, name);
  const token = ctx.parts.authenticator.issueForServiceAccount(namespace, name, account.metadata.uid);
  const expiration = new Date(ctx.parts.store.clock.now() + 3600_000).toISOString();
  return {
    code: 201,
    body: {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: null },
      spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 3600 },
      status: { token, expirationTimestamp: `${expiration.slice(0, 19)}Z` },
    },
  };
}
