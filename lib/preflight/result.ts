/** What one preflight check found, and the install commands its fixes name. */

/** The manifests drainbridge needs in a cluster, relative to the repository. */
export const INSTALL_MANIFESTS = ['deploy/crds/evacuations.yaml', 'deploy/rbac/drainbridge.yaml'] as const;
/** The one command (as a cluster admin, from a checkout) that installs them. */
export const INSTALL_COMMAND = `kubectl apply ${INSTALL_MANIFESTS.map((m) => `-f ${m}`).join(' ')}`;
/** What --disable-eviction needs on top. */
export const DISABLE_EVICTION_COMMAND = 'kubectl apply -f deploy/rbac/disable-eviction.yaml';

export interface CheckResult {
  /** `api`, `crd`, `namespace`, `rbac`, `nova`. */
  readonly check: string;
  readonly ok: boolean;
  /** What was found, as a sentence fragment: `CRD evacuations.drainbridge.io is not installed`. */
  readonly what: string;
  /** The command (or setting) that fixes it, when one does. */
  readonly fix?: string;
}
