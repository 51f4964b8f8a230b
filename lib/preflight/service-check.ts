/**
 * The startup preflight of a long-running service (`drainbridge run`, `forwarder`, the node agent), run
 * before it takes part in leader election: one SelfSubjectAccessReview per call of every part it would
 * run (service-access.ts), through the lean client (lib/clients/kube/http: the forwarder must not load
 * @kubernetes/client-node). A required part with a call denied refuses the start; an optional part (the
 * NodeMaintenance source) is left out, and the service's /readyz names why. Each denial names the call
 * (verb, resource, group, namespace), who was denied, and the one command that grants it.
 */
import { apiCodeOf } from '../clients/kube/errors.ts';
import type { KubeHttpClient } from '../clients/kube/http/client.ts';
import { EVACUATION_API } from '../clients/kube/paths.ts';
import { type ApiAccess, accessReviewOf, describeAccess } from './access.ts';
import { type CheckResult, INSTALL_COMMAND } from './result.ts';
import { grantCommand, type Service, type ServicePart, type ServiceSettings, serviceParts } from './service-access.ts';

export interface ServiceReadiness {
  readonly service: Service;
  /** Who the API server says the credentials are; undefined when it cannot say. */
  readonly user?: string;
  /** One line per part (ok, or one per denied call). */
  readonly results: readonly CheckResult[];
  /** A required part is missing a call: the service must not start. */
  readonly refuse: boolean;
  /** Optional parts left out (by their forwarder source name), each with the reasons /readyz gives. */
  readonly withoutSources: ReadonlyMap<string, readonly string[]>;
}

/** The lean client's two questions: who am I, may I. */
interface Asker {
  whoAmI(): Promise<string | undefined>;
  allowed(access: ApiAccess): Promise<boolean>;
}

interface ReviewStatus {
  readonly status?: { readonly allowed?: boolean; readonly userInfo?: { readonly username?: string } };
}

function askerOf(client: KubeHttpClient): Asker {
  return {
    async whoAmI() {
      try {
        const review = await client.request<ReviewStatus>('ask who the credentials are (SelfSubjectReview)', {
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        });
        return review.status?.userInfo?.username;
      } catch (error) {
        const code = apiCodeOf(error);
        if (code === 404 || code === 403) return undefined;
        throw error;
      }
    },
    async allowed(access) {
      const review = await client.request<ReviewStatus>(`review access: ${describeAccess(access)}`, {
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        body: accessReviewOf(access),
      });
      return review.status?.allowed === true;
    },
  };
}

/** `run: system:serviceaccount:drainbridge:drainbridge may not watch nodemaintenances.nodemaintenance.medik8s.io (…)`. */
function denial(part: ServicePart, access: ApiAccess, who: string | undefined): string {
  const without = part.optional ? `; ${part.name} does not run` : '';
  return `${who ?? 'these credentials'} may not ${describeAccess(access)} (${part.name}: to ${access.why})${without}`;
}

/** The fix of a part: the binding, or (optional parts) that or turning the part off. */
function fixOf(part: ServicePart, who: string | undefined): string {
  const grant = grantCommand(part.grant, who);
  return part.optional ? `${grant}   (or set ${part.optional.setting})` : grant;
}

async function reviewPart(asker: Asker, part: ServicePart, who: string | undefined): Promise<CheckResult[]> {
  const answers = await Promise.all(part.accesses.map((access) => asker.allowed(access)));
  const denied = part.accesses.filter((_, i) => !answers[i]);
  if (denied.length === 0)
    return [{ check: 'rbac', ok: true, what: `${part.name}: all ${answers.length} calls allowed` }];
  const fix = fixOf(part, who);
  return denied.map((access) => ({ check: 'rbac', ok: false, what: denial(part, access, who), fix }));
}

/** Whether the API serves Evacuation records (discovery: every authenticated user may ask). */
async function checkRecordsServed(client: KubeHttpClient): Promise<CheckResult> {
  const { group, version, plural } = EVACUATION_API;
  const crd = `CRD ${plural}.${group}`;
  try {
    const found = await client.request<{ resources?: { name?: string }[] }>(`discover ${group}/${version}`, {
      method: 'GET',
      path: `/apis/${group}/${version}`,
    });
    if (found.resources?.some((r) => r.name === plural)) return { check: 'crd', ok: true, what: crd };
  } catch (error) {
    if (apiCodeOf(error) !== 404) throw error;
  }
  return { check: 'crd', ok: false, what: `${crd} is not installed`, fix: INSTALL_COMMAND };
}

/** Reviews every call `service` would make with `settings`; connection errors throw (the caller presents them). */
export async function checkService(
  client: KubeHttpClient,
  service: Service,
  settings: ServiceSettings,
): Promise<ServiceReadiness> {
  const asker = askerOf(client);
  const user = await asker.whoAmI();
  const results: CheckResult[] = [];
  const withoutSources = new Map<string, string[]>();
  // run keeps its requests in Evacuation records and the node agent reads them: both need the CRD.
  let refuse = false;
  if (service !== 'forwarder') {
    const crd = await checkRecordsServed(client);
    results.push(crd);
    refuse = !crd.ok;
  }
  for (const part of serviceParts(service, settings)) {
    const found = await reviewPart(asker, part, user);
    results.push(...found);
    const missing = found.filter((r) => !r.ok);
    if (missing.length === 0) continue;
    // Two parts of one source (the NodeMaintenance source and its node Leases): the reasons of both.
    const source = part.optional?.source;
    if (source) withoutSources.set(source, [...(withoutSources.get(source) ?? []), ...missing.map(readyzReason)]);
    else refuse = true;
  }
  return { service, ...(user ? { user } : {}), results, refuse, withoutSources };
}

/** How /readyz words a missing call: what, and the fix. */
function readyzReason(result: CheckResult): string {
  return `${result.what}. To fix it: ${result.fix}`;
}

/** The lines a refused start prints (stderr, and the log), naming each missing call and its fix. */
export function explainRefusal(readiness: ServiceReadiness): string[] {
  const missing = readiness.results.filter((r) => !r.ok);
  const fixes = [...new Set(missing.flatMap((r) => (r.fix ? [r.fix] : [])))];
  return [
    `not started (checked before leader election)${readiness.user ? `: ${readiness.user}` : ''} lacks calls it makes:`,
    ...missing.map((r) => `  - ${r.what}`),
    'To fix it (as a cluster admin; the roles come with kubectl apply -k deploy/base):',
    ...fixes.map((fix) => `  ${fix}`),
    `Then 'drainbridge check --for ${readiness.service}' shows what is left.`,
  ];
}
