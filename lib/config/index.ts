/** Configuration: one validated object from the environment and secret references. */

export {
  isSecretRef,
  parseSecretRef,
  resolveMaybeRef,
  resolveSecretRef,
  type SecretFetcher,
} from '../secrets/secret-refs.ts';
export { buildKubeConfig } from './kube.ts';
export { checkKubeconfigFile } from './kubeconfig-check.ts';
export { loadConfig } from './load.ts';
export type { Config, KubeAccess } from './schema.ts';
export { WORKFLOW_ENV_VARS, WORKFLOW_SETTINGS } from './schema.ts';
