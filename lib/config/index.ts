/** Configuration: one validated object from the environment and secret references. */

export { buildKubeConfig } from './kube.ts';
export { loadConfig } from './load.ts';
export type { Config, KubeAccess } from './schema.ts';
export { ENV_VARS } from './schema.ts';
export { isSecretRef, parseSecretRef, resolveMaybeRef, resolveSecretRef, type SecretFetcher } from './secret-refs.ts';
