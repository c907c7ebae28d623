/** Switching policy and switch costs of the generated runtime. */
export { SwitchPolicy, type PolicyDecision, type PolicyInput, type PolicyOptions } from './policy.js';
export { fpgaNeeds, stageInstances, switchCost, type SwitchCost } from './cost.js';
