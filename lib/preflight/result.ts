/** What one preflight check found, and the install commands its fixes name. */

export { INSTALL_COMMAND } from '../model/install.ts';
/** The same where medik8s node-maintenance-operator already owns the NodeMaintenance CRD (it is left alone). */
export const INSTALL_COMMAND_NMO = 'kubectl apply -k deploy/overlays/nmo-installed';
/** What --disable-eviction needs on top. */
export const DISABLE_EVICTION_COMMAND = 'kubectl apply -f deploy/base/rbac/disable-eviction.yaml';

export interface CheckResult {
  /** `api`, `crd`, `namespace`, `rbac`, `nova`. */
  readonly check: string;
  readonly ok: boolean;
  /** What was found, as a sentence fragment: `CRD evacuations.drainbridge.io is not installed`. */
  readonly what: string;
  /** The command (or setting) that fixes it, when one does. */
  readonly fix?: string;
}
