/**
 * The built-in resources the simulator serves: what drainbridge and kubectl (get, describe, apply,
 * cordon, drain, auth can-i) touch. Names, short names and categories as the apiserver's discovery
 * reports them for v1.32.
 */
import type { ResourceType } from './types.ts';

interface Spec {
  readonly gv: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly subresources?: string[];
  readonly shortNames?: string[];
  readonly categories?: string[];
  readonly hasGeneration?: boolean;
  readonly verbs?: string[];
}

const ALL = ['all'];

function typeOf(spec: Spec): ResourceType {
  const [group, version] = spec.gv.includes('/') ? spec.gv.split('/') : ['', spec.gv];
  const type: ResourceType = {
    group: group ?? '',
    versions: [version ?? 'v1'],
    resource: spec.resource,
    singular: spec.kind.toLowerCase(),
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    namespaced: spec.namespaced,
    subresources: spec.subresources ?? [],
    hasGeneration: spec.hasGeneration ?? false,
  };
  if (spec.shortNames) type.shortNames = spec.shortNames;
  if (spec.categories) type.categories = spec.categories;
  if (spec.verbs) type.verbs = spec.verbs;
  return type;
}

const CREATE_ONLY = ['create'];

const SPECS: readonly Spec[] = [
  {
    gv: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    subresources: ['status', 'finalize'],
    shortNames: ['ns'],
  },
  { gv: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, subresources: ['status'], shortNames: ['no'] },
  {
    gv: 'v1',
    resource: 'pods',
    kind: 'Pod',
    namespaced: true,
    subresources: ['status', 'eviction', 'binding'],
    shortNames: ['po'],
    categories: ALL,
  },
  { gv: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  {
    gv: 'v1',
    resource: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
    subresources: ['token'],
    shortNames: ['sa'],
  },
  { gv: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { gv: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  {
    gv: 'v1',
    resource: 'services',
    kind: 'Service',
    namespaced: true,
    subresources: ['status'],
    shortNames: ['svc'],
    categories: ALL,
  },
  { gv: 'events.k8s.io/v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  {
    gv: 'apps/v1',
    resource: 'deployments',
    kind: 'Deployment',
    namespaced: true,
    subresources: ['status', 'scale'],
    shortNames: ['deploy'],
    categories: ALL,
    hasGeneration: true,
  },
  {
    gv: 'apps/v1',
    resource: 'replicasets',
    kind: 'ReplicaSet',
    namespaced: true,
    subresources: ['status', 'scale'],
    shortNames: ['rs'],
    categories: ALL,
    hasGeneration: true,
  },
  {
    gv: 'apps/v1',
    resource: 'statefulsets',
    kind: 'StatefulSet',
    namespaced: true,
    subresources: ['status', 'scale'],
    shortNames: ['sts'],
    categories: ALL,
    hasGeneration: true,
  },
  {
    gv: 'apps/v1',
    resource: 'daemonsets',
    kind: 'DaemonSet',
    namespaced: true,
    subresources: ['status'],
    shortNames: ['ds'],
    categories: ALL,
    hasGeneration: true,
  },
  { gv: 'apps/v1', resource: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true },
  {
    gv: 'batch/v1',
    resource: 'jobs',
    kind: 'Job',
    namespaced: true,
    subresources: ['status'],
    categories: ALL,
    hasGeneration: true,
  },
  {
    gv: 'policy/v1',
    resource: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    subresources: ['status'],
    shortNames: ['pdb'],
    hasGeneration: true,
  },
  { gv: 'coordination.k8s.io/v1', resource: 'leases', kind: 'Lease', namespaced: true },
  { gv: 'rbac.authorization.k8s.io/v1', resource: 'roles', kind: 'Role', namespaced: true },
  { gv: 'rbac.authorization.k8s.io/v1', resource: 'rolebindings', kind: 'RoleBinding', namespaced: true },
  { gv: 'rbac.authorization.k8s.io/v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  {
    gv: 'rbac.authorization.k8s.io/v1',
    resource: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  {
    gv: 'authorization.k8s.io/v1',
    resource: 'selfsubjectaccessreviews',
    kind: 'SelfSubjectAccessReview',
    namespaced: false,
    verbs: CREATE_ONLY,
  },
  {
    gv: 'authorization.k8s.io/v1',
    resource: 'subjectaccessreviews',
    kind: 'SubjectAccessReview',
    namespaced: false,
    verbs: CREATE_ONLY,
  },
  {
    gv: 'authorization.k8s.io/v1',
    resource: 'selfsubjectrulesreviews',
    kind: 'SelfSubjectRulesReview',
    namespaced: false,
    verbs: CREATE_ONLY,
  },
  {
    gv: 'authentication.k8s.io/v1',
    resource: 'selfsubjectreviews',
    kind: 'SelfSubjectReview',
    namespaced: false,
    verbs: CREATE_ONLY,
  },
  {
    gv: 'admissionregistration.k8s.io/v1',
    resource: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    namespaced: false,
    categories: ['api-extensions'],
    hasGeneration: true,
  },
  {
    gv: 'apiextensions.k8s.io/v1',
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    subresources: ['status'],
    shortNames: ['crd', 'crds'],
    hasGeneration: true,
  },
];

/** Fresh copies of the built-in resource types. */
export function builtinTypes(): ResourceType[] {
  return SPECS.map(typeOf);
}

/** Resources that are answered, never stored (reviews). */
export const VIRTUAL_RESOURCES: ReadonlySet<string> = new Set([
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
  'authentication.k8s.io/selfsubjectreviews',
]);
