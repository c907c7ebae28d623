/** Registers the passes and names the default pipeline. */
import { annotateCostPass } from './annotate-cost.js';
import { buildGuardsRegistered } from './build-guards.js';
import { classifyPass } from './classify.js';
import { fuseElementwisePass } from './fuse-elementwise.js';
import { inferTypesPass } from './infer-types.js';
import { lowerKernelsPass } from './lower-kernels.js';
import { registerPass, registeredPasses } from './manager.js';

if (registeredPasses().length === 0) {
  registerPass(inferTypesPass);
  registerPass(classifyPass);
  registerPass(fuseElementwisePass);
  registerPass(annotateCostPass);
  registerPass(lowerKernelsPass);
  registerPass(buildGuardsRegistered);
}

export const DEFAULT_PIPELINE = ['infer-types', 'classify', 'fuse-elementwise', 'annotate-cost'] as const;

export * from './manager.js';
export type { Pass } from './manager.js';
export { classifyOp } from './classify.js';
