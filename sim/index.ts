/** The Kubernetes API simulator: start one with `startSimulator`. See sim/README.md. */
export { ADMIN_USER, serviceAccountUsername } from './auth/authenticator.ts';
export { renderKubeconfig } from './kubeconfig.ts';
export { applyManifests } from './manifests.ts';
export type { RequestQuery, RequestRecord } from './server/request-log.ts';
export { RequestLog } from './server/request-log.ts';
export { SIMULATED_VERSION, type Simulator, type SimulatorOptions, startSimulator } from './simulator.ts';
export * from './store/index.ts';
