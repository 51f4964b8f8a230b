/** Scenarios: load a bundled or file scenario, apply it to a store, start its loops, wait until it settles. */
export { type AppliedScenario, applyScenario, controllerOptionsFor, startScenario } from './apply.ts';
export { bundledScenarios, loadScenario, nodeObject, parseScenario, SCENARIO_DIR, type Scenario } from './load.ts';
export type { ScenarioFile } from './schema.ts';
export { isSettled, unsettled, whenSettled } from './settled.ts';
