/** Stage-by-stage execution of partitions: the backend interface, the engine, the wasm backend. */
export {
  closeBackends,
  DeviceCallError,
  type BackendName,
  type CallOptions,
  type DeviceBuffer,
  type StageBackend,
  type StageBackends,
} from './backend.js';
export { KernelEngine, Slot, StageFault, type OpRun, type Prepared, type StagePlan, type StageRun } from './engine.js';
export { WasmStageBackend, wasmStageBackendFromDir } from './wasm-backend.js';
