/** The guarded runtime library that generated `<prog>.runtime.ts` files import. */
export { createGuardedRuntime, type GuardedRuntime, type StreamItem, type StreamSource } from './runtime.js';
export { bindInputs } from './inputs.js';
export type * from './types.js';
export { TraceRecorder } from './trace.js';
export { HistoryLog } from '../history/log.js';
// Backends: what runs each stage.
export {
  closeBackends,
  DeviceCallError,
  WasmStageBackend,
  wasmStageBackendFromDir,
  type BackendName,
  type StageBackend,
  type StageBackends,
  type StageRun,
} from '../exec/index.js';
export { NativeLibrary } from '../native/library.js';
export { NativeStageBackend } from '../native/backend.js';
export { nativeLibraryPath, openProject, readProject, type OpenOptions, type ProjectInfo } from '../native/project.js';
export type { GuardPlan, GuardNode, GuardPartition } from '../guards/types.js';
export { OBJECTIVES, partitionTable, treeGuards, type GuardPlans } from '../guards/objectives.js';
export type { Objective, PlanSpec } from '../plan/types.js';
export type { SystemSpec } from '../system/types.js';
export type { PolicyOptions } from '../policy/policy.js';
export type { WasmManifest } from '../wasm/manifest.js';
export type { CsrMatrix, DenseTensor, SparseMatrix, Tensor } from '../tensor.js';
export { loadSystemFile } from '../system/load.js';
// What an application needs to read inputs and make deterministic ones.
export { loadMatrix } from '../io/load.js';
export { toCsr } from '../io/convert.js';
export { Rng, seedFor } from '../random.js';
export { InputError } from '../errors.js';
