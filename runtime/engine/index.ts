/** The guarded runtime library that generated `<prog>.runtime.ts` files import. */
export { createGuardedRuntime, type GuardedRuntime } from './runtime.js';
export { bindInputs } from './inputs.js';
export type * from './types.js';
export * from '../backends/index.js';
export type { GuardPlan, GuardNode, GuardPartition } from '../guards/types.js';
export type { PlanSpec } from '../plan/types.js';
export type { SystemSpec } from '../system/types.js';
export type { PolicyOptions } from '../policy/policy.js';
export type { CsrMatrix, DenseTensor, SparseMatrix, Tensor } from '../tensor.js';
export { loadSystemFile } from '../system/load.js';
// What an application needs to read inputs and make deterministic ones.
export { loadMatrix } from '../io/load.js';
export { toCsr } from '../io/convert.js';
export { Rng, seedFor } from '../random.js';
export { InputError } from '../errors.js';
