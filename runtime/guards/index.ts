/** Guards: builder (compile time, or the evaluation), selector and feature names. */
export type { GuardDecision, GuardNode, GuardPartition, GuardPlan } from './types.js';
export { buildGuards, choiceKey, partitionLabel, planOptions, scoreChoices, type BuildOptions } from './build.js';
export { outOfRange, selectPartition } from './select.js';
export { sampleBindings, type SampledBinding, type SampleOptions } from './sample.js';
export {
  featureKeys,
  featureRecord,
  featureValue,
  planFeatures,
  sparseFeaturesOf,
  tierOf,
  type Tier,
} from './features.js';
export { fitTree, treeDepth, treeFeatures, walkTree, fmt } from './tree.js';
export {
  checkGuardPlans,
  isObjective,
  objectiveOrder,
  OBJECTIVES,
  partitionTable,
  treeGuards,
  type GuardPlans,
  type PartitionTable,
  type TablePartition,
} from './objectives.js';
