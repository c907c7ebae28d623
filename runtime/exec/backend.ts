/**
 * The per-stage backend interface: what runs one op of a compiled kernel on
 * one device instance, over buffers in that device's memory, and moves bytes
 * in and out of it. The engine (./engine.ts), not the backends, decides
 * where each value lives; backends only allocate, copy and launch.
 *
 * Backends: `wasm` (this CPU, ./wasm-backend.ts) and the generated native
 * libraries through the native ABI (runtime/native): `cuda`, `cuda-emu`,
 * `xrt`, `fpga-csim`. Every result and time a user sees names the backend.
 */
import type { NativeBackendName } from '../native/abi.js';
import type { DeviceKind } from '../system/types.js';

export type BackendName = 'wasm' | NativeBackendName;

/**
 * `offThread`: the call may take long and others (another device's stage)
 * should go on meanwhile: a native backend makes it on a worker thread
 * (about 40 us more per call than a direct call, so only when stages overlap).
 */
export interface CallOptions {
  offThread?: boolean;
  /** launch: the threads the op's parallel loop runs on, at most (a CPU backend's; devices ignore it). */
  threads?: number;
}

/** A buffer in one device's memory. */
export interface DeviceBuffer {
  readonly dev: number;
  readonly bytes: number;
}

/** A failed device call: the backend's code and text (the engine adds op, stage, device and input). */
export class DeviceCallError extends Error {
  constructor(
    readonly backend: BackendName,
    readonly call: string,
    readonly code: number,
    readonly text: string,
    /** An allocation that failed for want of memory: the runtime may fall back to another partition. */
    readonly outOfMemory = false,
  ) {
    super(`${backend} ${call} failed (${code}): ${text}`);
    this.name = 'DeviceCallError';
  }
}

/** The program a backend's code was compiled from, where it knows: a project's wasm kernels and native libraries. */
export interface BuiltFrom {
  program: string;
  /** The program's hash (project.json's, the library's own): a runtime generated from another version refuses it. */
  programHash: string;
  /** The file that says so, for the error. */
  where: string;
  /** The kernels it runs (a wasm module is one kernel's); absent: every kernel of the program (a native library). */
  kernels?: readonly string[];
}

export interface StageBackend {
  readonly name: BackendName;
  /** What the backend's code was compiled from (absent: a module built in this process, which nothing can mismatch). */
  readonly builtFrom?: BuiltFrom | undefined;
  readonly kind: DeviceKind;
  /** Devices it can run on (device instances of its kind map to 0, 1, ... in system order). */
  readonly deviceCount: number;
  /** A launch returns before the work is done (CUDA streams): timing one op needs a sync after it. */
  readonly queues: boolean;
  /** CPU backends: the worker threads an op's rows are split across. */
  readonly threads?: number;
  deviceName(dev: number): string;
  alloc(dev: number, bytes: number): DeviceBuffer;
  free(buf: DeviceBuffer): void;
  /** Host to device: `src` to `dst` at byte `offset`. */
  upload(dst: DeviceBuffer, offset: number, src: ArrayBufferView, o?: CallOptions): Promise<void>;
  /** Device to host: bytes of `src` from byte `offset` into `dst`. */
  download(src: DeviceBuffer, offset: number, dst: ArrayBufferView, o?: CallOptions): Promise<void>;
  /** Device to device within this backend (peer to peer where the devices allow it). */
  copy(
    dst: DeviceBuffer,
    dstOffset: number,
    src: DeviceBuffer,
    srcOffset: number,
    bytes: number,
    o?: CallOptions,
  ): Promise<void>;
  /** The entry point of op `op` of `kernel` in implementation `impl`; throws when the build lacks it. */
  lookup(kernel: string, op: string, impl: string): number;
  /** The implementations this build has of an op (catalogue names). */
  implementations(kernel: string, op: string): string[];
  /** Runs an op: buffers in manifest order, sizes in manifest order plus the pattern's figures (runtime/native/abi.ts PATTERN_FIGURES); [lo, hi) clamps its parallel loop (hi < 0: none). */
  launch(
    dev: number,
    handle: number,
    buffers: readonly DeviceBuffer[],
    sizes: readonly number[],
    lo: number,
    hi: number,
    o?: CallOptions,
  ): Promise<void>;
  /** Waits for the device's queued work. */
  sync(dev: number, o?: CallOptions): Promise<void>;
  close(): void;
}

/** Which backend serves each device kind a partition may use. */
export type StageBackends = Partial<Record<DeviceKind, StageBackend>>;

/** Closes each backend of a set once (a backend may serve several kinds). */
export function closeBackends(b: StageBackends): void {
  for (const be of new Set(Object.values(b))) be?.close();
}
