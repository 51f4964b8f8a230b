/**
 * The RBAC objects every cluster starts with that matter here: `cluster-admin` for `system:masters`,
 * and the discovery/basic-user/public-info roles every authenticated user gets, so kubectl discovery
 * and `kubectl auth can-i` work for a least-privileged ServiceAccount.
 */
import type { KubeObject, ObjectStore } from '../store/types.ts';

const RBAC_V1 = 'rbac.authorization.k8s.io/v1';
const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const DISCOVERY_URLS = [
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/healthz',
  '/livez',
  '/openapi',
  '/openapi/*',
  '/readyz',
  '/version',
  '/version/',
];
const PUBLIC_URLS = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

function clusterRole(name: string, rules: object[]): KubeObject {
  return { apiVersion: RBAC_V1, kind: 'ClusterRole', metadata: { name, labels: BOOTSTRAP_LABELS }, rules };
}

function groupBinding(name: string, role: string, groups: string[]): KubeObject {
  return {
    apiVersion: RBAC_V1,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: BOOTSTRAP_LABELS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: groups.map((group) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group })),
  };
}

/** The bootstrap roles and bindings. */
export function bootstrapRbacObjects(): { roles: KubeObject[]; bindings: KubeObject[] } {
  return {
    roles: [
      clusterRole('cluster-admin', [
        { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
        { nonResourceURLs: ['*'], verbs: ['*'] },
      ]),
      clusterRole('system:discovery', [{ nonResourceURLs: DISCOVERY_URLS, verbs: ['get'] }]),
      clusterRole('system:public-info-viewer', [{ nonResourceURLs: PUBLIC_URLS, verbs: ['get'] }]),
      clusterRole('system:basic-user', [
        {
          apiGroups: ['authorization.k8s.io'],
          resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
          verbs: ['create'],
        },
        { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
      ]),
    ],
    bindings: [
      groupBinding('cluster-admin', 'cluster-admin', ['system:masters']),
      groupBinding('system:discovery', 'system:discovery', ['system:authenticated']),
      groupBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
      groupBinding('system:public-info-viewer', 'system:public-info-viewer', [
        'system:authenticated',
        'system:unauthenticated',
      ]),
    ],
  };
}

/** Writes the bootstrap objects into a fresh store. */
export function installBootstrapRbac(store: ObjectStore): void {
  const { roles, bindings } = bootstrapRbacObjects();
  for (const role of roles) store.create({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, role);
  for (const binding of bindings) {
    store.create({ group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' }, binding);
  }
}
