/** Backends of the generated runtime (see types.ts). */
export type { Backend, BackendSet, KernelInputs } from './types.js';
export { WasmBackend, wasmBackend, wasmBackendFromDir } from './wasm.js';
export { SimBackend, simBackend } from './sim.js';
export { cudaBackend, xrtBackend, type NativeBackendOptions } from './native.js';
export { TraceRecorder } from './trace.js';
