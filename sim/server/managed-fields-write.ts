/** Where the HTTP write handlers record managedFields (sim/server/managed-fields.ts) on the object they store. */
import { dropOmittedEmpty } from '../store/object-rules.ts';
import type { KubeObject } from '../store/types.ts';
import type { RequestContext } from './context.ts';
import { managerFromUserAgent, nextManagedFields } from './managed-fields.ts';
import { apiVersionAt } from './serve.ts';

const APPLY_PATCH = 'application/apply-patch+yaml';

/**
 * Sets `after.metadata.managedFields` for this request's write of `after` over `before` (undefined for a
 * create). Status-subresource writes keep the stored metadata (the store ignores theirs), so they record nothing.
 */
export function recordManagedFields(ctx: RequestContext, before: KubeObject | undefined, after: KubeObject): void {
  if (ctx.info.subresource || !ctx.type) return;
  // What the store will keep: a field the API server omits when empty is nobody's (an uncordon's
  // `unschedulable: false` leaves no owner of f:unschedulable, as the typed field manager sees it).
  dropOmittedEmpty(ctx.type, after);
  const contentType = (ctx.req.headers['content-type'] ?? '').split(';')[0]?.trim();
  after.metadata.managedFields = nextManagedFields(before, after, {
    manager: ctx.url.searchParams.get('fieldManager') || managerFromUserAgent(ctx.req.headers['user-agent']),
    operation: contentType === APPLY_PATCH ? 'Apply' : 'Update',
    apiVersion: apiVersionAt(ctx.type, ctx.info.version),
    now: new Date(ctx.parts.store.clock.now()),
  });
}
