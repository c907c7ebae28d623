/** Registers the passes and names the default pipeline. */
import { classifyPass } from './classify.js';
import { fuseElementwisePass } from './fuse-elementwise.js';
import { inferTypesPass } from './infer-types.js';
import { registerPass, registeredPasses } from './manager.js';

if (registeredPasses().length === 0) {
  registerPass(inferTypesPass);
  registerPass(classifyPass);
  registerPass(fuseElementwisePass);
}

export const DEFAULT_PIPELINE = ['infer-types', 'classify', 'fuse-elementwise'] as const;

export * from './manager.js';
export { classifyOp } from './classify.js';
