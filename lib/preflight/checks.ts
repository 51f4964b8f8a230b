/**
 * The preflight: before an operation changes anything, is the cluster ready for it? The API answers
 * (and as whom), the Evacuation CRD is served, the namespace of the admission Lease exists, RBAC allows
 * exactly the calls the operation makes (SelfSubjectAccessReview, which every authenticated user may
 * ask), and each branch's own outside world answers (Nova's when it is enabled; the branch registry's
 * `preflight`). Reads only: the namespace probe is a server-side dry run.
 * Each result says what is missing and the one command that installs it.
 */
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CustomObjectsApi,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { BranchPreflightSetup } from '../branches/contract/branch.ts';
import { BRANCH_REGISTRY } from '../branches/registry.ts';
import type { KubeClient } from '../clients/kube/client.ts';
import { apiCodeOf } from '../clients/kube/errors.ts';
import { EVACUATION_API } from '../clients/kube/paths.ts';
import type { Config } from '../config/index.ts';
import {
  type AccessSettings,
  type ApiAccess,
  accessReviewOf,
  describeAccess,
  type Operation,
  requiredAccess,
} from './access.ts';
import { type CheckResult, DISABLE_EVICTION_COMMAND, INSTALL_COMMAND } from './result.ts';

export { type CheckResult, DISABLE_EVICTION_COMMAND, INSTALL_COMMAND, INSTALL_COMMAND_NMO } from './result.ts';

export interface PreflightReport {
  /** The API server's URL. */
  readonly server: string;
  /** Who the API server says the credentials are (SelfSubjectReview); undefined when it cannot say. */
  readonly user?: string;
  readonly results: readonly CheckResult[];
  readonly ready: boolean;
}

export interface PreflightNeeds extends Omit<AccessSettings, 'namespace'> {
  readonly operation: Operation;
}

interface Apis {
  readonly authn: AuthenticationV1Api;
  readonly authz: AuthorizationV1Api;
  readonly coordination: CoordinationV1Api;
  readonly custom: CustomObjectsApi;
}

function apisOf(kc: KubeConfig): Apis {
  return {
    authn: kc.makeApiClient(AuthenticationV1Api),
    authz: kc.makeApiClient(AuthorizationV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

/** Who the credentials are; undefined on servers without SelfSubjectReview (before 1.28). Connection errors throw. */
async function whoAmI(client: KubeClient, apis: Apis): Promise<string | undefined> {
  try {
    const review = await client.call('ask who the credentials are (SelfSubjectReview)', (o) =>
      apis.authn.createSelfSubjectReview(
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
        o,
      ),
    );
    return review.status?.userInfo?.username;
  } catch (error) {
    const code = apiCodeOf(error);
    if (code === 404 || code === 403) return undefined;
    throw error;
  }
}

const CRD = `${EVACUATION_API.plural}.${EVACUATION_API.group}`;

async function checkCrd(client: KubeClient, apis: Apis): Promise<CheckResult> {
  const { group, version, plural } = EVACUATION_API;
  try {
    const resources = await client.call(`discover ${group}/${version}`, (o) =>
      apis.custom.getAPIResources({ group, version }, o),
    );
    if (resources.resources.some((r) => r.name === plural)) {
      return { check: 'crd', ok: true, what: `CRD ${CRD} (${group}/${version})` };
    }
  } catch (error) {
    if (apiCodeOf(error) !== 404) throw error;
  }
  return { check: 'crd', ok: false, what: `CRD ${CRD} is not installed`, fix: INSTALL_COMMAND };
}

/** Whether the Lease's namespace exists: a dry-run create answers 404 only for a missing namespace. */
async function checkNamespace(client: KubeClient, apis: Apis, namespace: string): Promise<CheckResult> {
  const body = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'drainbridge-preflight', namespace },
  };
  try {
    await client.call(
      `dry-run create lease in ${namespace}`,
      (o) => apis.coordination.createNamespacedLease({ namespace, body, dryRun: 'All' }, o),
      { retry: false },
    );
  } catch (error) {
    const code = apiCodeOf(error);
    if (code === 404) {
      return {
        check: 'namespace',
        ok: false,
        what: `namespace ${namespace} does not exist (the admission Lease lives there; DRAINBRIDGE_NAMESPACE)`,
        fix: INSTALL_COMMAND,
      };
    }
    // 403: the access review below names the missing rule; 409: a Lease of that name exists, so the namespace does.
    if (code !== 403 && code !== 409) throw error;
  }
  return { check: 'namespace', ok: true, what: `namespace ${namespace}` };
}

async function allowed(client: KubeClient, apis: Apis, access: ApiAccess): Promise<boolean> {
  const review = await client.call(`review access: ${describeAccess(access)}`, (o) =>
    apis.authz.createSelfSubjectAccessReview({ body: accessReviewOf(access) }, o),
  );
  return review.status?.allowed === true;
}

/** The answer when the server will not even answer access reviews: the credentials did not authenticate. */
const ANONYMOUS: CheckResult = {
  check: 'credentials',
  ok: false,
  what: 'the API server takes these credentials as anonymous (it refuses them even a question about access): the kubeconfig sends no token or certificate it accepts',
  fix: 'use a kubeconfig with credentials the cluster accepts (README "Credentials": a token for the drainbridge ServiceAccount)',
};

async function checkAccess(
  client: KubeClient,
  apis: Apis,
  needed: readonly ApiAccess[],
  who: string,
): Promise<CheckResult[]> {
  let answers: boolean[];
  try {
    answers = await Promise.all(needed.map((access) => allowed(client, apis, access)));
  } catch (error) {
    if (apiCodeOf(error) === 403) return [ANONYMOUS];
    throw error;
  }
  const denied = needed.filter((_, i) => !answers[i]);
  if (denied.length === 0) return [{ check: 'rbac', ok: true, what: `RBAC: all ${needed.length} calls allowed` }];
  return denied.map((access) => ({
    check: 'rbac',
    ok: false,
    what: `${who} may not ${describeAccess(access)} (to ${access.why})`,
    fix: access.verb === 'delete' && access.resource === 'pods' ? DISABLE_EVICTION_COMMAND : INSTALL_COMMAND,
  }));
}

/** The checks the branches declare (their definition's `preflight`), in registry order; a branch that is off adds none. */
async function branchChecks(setup: BranchPreflightSetup): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const branch of BRANCH_REGISTRY) {
    const result = await branch.preflight?.(setup);
    if (result) results.push(result);
  }
  return results;
}

/** Where the preflight looks: the cluster (and, for Nova, the OS_* variables in `env`). */
export interface PreflightTarget {
  readonly kubeConfig: KubeConfig;
  readonly client: KubeClient;
  readonly config: Pick<Config, 'namespace' | 'nova'>;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Runs every check `needs` calls for; connection-level failures of the first call throw (the caller presents them). */
export async function runPreflight(target: PreflightTarget, needs: PreflightNeeds): Promise<PreflightReport> {
  const { kubeConfig, client, config } = target;
  const apis = apisOf(kubeConfig);
  const user = await whoAmI(client, apis);
  const results: CheckResult[] = [{ check: 'api', ok: true, what: 'the API server answers' }];
  const crd = await checkCrd(client, apis);
  // plan works before drainbridge is installed: without the CRD it shows no scheduled starts (and says so),
  // so neither the CRD nor access to the records it would serve is required.
  const withoutRecords = needs.operation === 'plan' && !crd.ok;
  results.push(withoutRecords ? { ...crd, ok: true, what: `${crd.what} (plan shows no scheduled starts)` } : crd);
  if (needs.operation === 'evacuate' || needs.operation === 'check') {
    results.push(await checkNamespace(client, apis, config.namespace));
  }
  const needed = requiredAccess(needs.operation, { ...needs, namespace: config.namespace }).filter(
    (access) => !(withoutRecords && access.group === EVACUATION_API.group),
  );
  results.push(...(await checkAccess(client, apis, needed, user ?? 'these credentials')));
  // Each branch's own check of its outside world (Nova's, when on), from the registry; abort, status,
  // report and resume reach no branch's outside world.
  const reachesBranches = !(['abort', 'status', 'report', 'resume'] as const).some((op) => op === needs.operation);
  if (reachesBranches) results.push(...(await branchChecks({ config, env: target.env ?? process.env })));
  return {
    server: kubeConfig.getCurrentCluster()?.server ?? '',
    ...(user ? { user } : {}),
    results,
    ready: results.every((r) => r.ok),
  };
}
