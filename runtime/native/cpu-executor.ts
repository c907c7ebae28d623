/**
 * Runs a kernel on the native CPU library (codegen/cpu, family `cpu`,
 * backend `native`) with the wasm executor's layout, binding and result
 * code (runtime/wasm/executor.ts `executorOver`): the library's host memory
 * (ABI alloc, seen from JavaScript through koffi.view) stands in for the
 * wasm memory, and each op is a `launch` of the library with the buffers at
 * base + offset. The library splits an op's rows over its own threads
 * itself (`set_threads`).
 */
import koffi from 'koffi';
import { InputError } from '../errors.js';
import { executorOver, type KernelMemory, type WasmExecutor, type WorkerPlacement } from '../wasm/executor.js';
import type { WasmManifest } from '../wasm/manifest.js';
import { noteCpuWork } from '../wasm/threads.js';
import { cpuImplOf } from '../catalogue/cpu.js';
import { ABI_HOST, PATTERN_FIGURES } from './abi.js';
import { NativeLibrary } from './library.js';

const PAGE = 65536;
const FULL_HI = 0x7fffffff;

/** Host memory of the library, grown by reallocating (contents kept) as WebAssembly.Memory grows. */
class NativeMemory implements KernelMemory {
  buffer: ArrayBuffer;
  base: bigint;
  private ptr: unknown;
  private pages: number;

  constructor(
    private readonly lib: NativeLibrary,
    pages: number,
  ) {
    this.pages = pages;
    this.ptr = this.alloc(pages * PAGE);
    this.buffer = koffi.view(this.ptr, pages * PAGE);
    this.base = koffi.address(this.ptr);
  }

  private alloc(bytes: number): unknown {
    const out: unknown[] = [null];
    const rc = this.lib.call('alloc', 0, bytes, out) as number;
    if (rc !== 0 || out[0] === null)
      throw new InputError(
        'DY3045',
        this.lib.path,
        undefined,
        `native cpu: alloc of ${bytes} bytes failed: ${this.lib.errorText(rc)}`,
      );
    return out[0];
  }

  grow(pages: number): number {
    const old = this.pages;
    const next = this.alloc((old + pages) * PAGE);
    const view = koffi.view(next, (old + pages) * PAGE);
    new Uint8Array(view).set(new Uint8Array(this.buffer));
    this.lib.call('free', 0, this.ptr);
    this.ptr = next;
    this.buffer = view;
    this.base = koffi.address(next);
    this.pages = old + pages;
    return old;
  }

  free(): void {
    if (this.ptr !== null) this.lib.call('free', 0, this.ptr);
    this.ptr = null;
    this.buffer = new ArrayBuffer(0);
  }
}

export interface NativeCpuOptions {
  /** Threads launch() splits splittable ops over (default 1). */
  threads?: number;
  /** The program name the library was built for, and the hash it must carry. */
  program: string;
  programHash: string;
}

/** Per library file: the thread count its launches from this thread split over now (set_threads is per calling thread in the library, as this map is per JS thread). */
const threadState = new Map<string, { current: number }>();

/** Opens the library at `path` and returns an executor of `manifest`'s kernel on it. */
export function createNativeCpuExecutor(path: string, manifest: WasmManifest, o: NativeCpuOptions): WasmExecutor {
  const lib = NativeLibrary.open(path, {
    program: o.program,
    programHash: o.programHash,
    family: 'cpu',
    emulated: false,
    buildCommand: 'dype run --backend native (it compiles the library with the system C compiler)',
  });
  // The count is the library's for this thread, shared by every executor over the same file on it (one dlopen):
  // each op sets its own before its launch, and the shared record makes that one comparison unless it changes.
  const setThreadsFn = lib.bind('int set_threads(int n)');
  let state = threadState.get(path);
  if (!state) threadState.set(path, (state = { current: 0 }));
  const shared = state;
  const setThreads = (n: number): void => {
    if (shared.current !== n) shared.current = setThreadsFn(n) as number;
  };
  const threads = o.threads ?? 1;
  setThreads(threads);
  // launch() with the pointer arrays as raw 64-bit words: one typed array per op, refilled per call.
  const launch = lib.bind(
    'int launch(int dev, int handle, const void *buffers, const void *sizes, int64_t row_begin, int64_t row_end, void *stream)',
  );
  const memory = new NativeMemory(lib, 1);
  const fns: Record<string, unknown> = {};
  for (const op of manifest.ops) {
    const h = lib.call('op_lookup', manifest.kernel, op.op, cpuImplOf(op)) as number;
    if (h < 0)
      throw new InputError(
        'DY3044',
        path,
        undefined,
        `has no op ${op.op} of kernel ${manifest.kernel} as ${cpuImplOf(op)}: ${lib.errorText(h)}`,
      );
    const nb = op.buffers.length;
    const ns = op.sizes.length;
    const bufs = new BigUint64Array(nb);
    // The ABI's pattern figures follow the sizes; the CPU library reads only the sizes.
    const sizes = new BigInt64Array(ns + PATTERN_FIGURES.length);
    fns[op.export] = (...args: number[]): void => {
      const base = memory.base;
      for (let i = 0; i < nb; i++) bufs[i] = base + BigInt(args[i]!);
      for (let i = 0; i < ns; i++) sizes[i] = BigInt(args[nb + i]!);
      const lo = args[nb + ns]!;
      const hi = args[nb + ns + 1]!;
      // A wasm worker of this process that watches for its own pool's next op would hold a core this op needs.
      if (shared.current > 1) noteCpuWork();
      const rc = launch(ABI_HOST, h, bufs, sizes, lo, hi === FULL_HI ? -1 : hi, null) as number;
      if (rc !== 0)
        throw new InputError(
          'DY3045',
          path,
          undefined,
          `native cpu: op ${op.op} of kernel ${manifest.kernel} failed: ${lib.errorText(rc)}`,
        );
    };
  }
  // Bound on first use: only what times the library (dype calibrate) asks.
  let placementFn: ((what: number) => unknown) | undefined;
  const placement = (): WorkerPlacement => {
    placementFn ??= lib.bind('int64_t placement(int what)');
    const count = (what: number): number => Number(placementFn!(what));
    const onCaller = count(2);
    return {
      splitOps: count(0),
      joins: count(1),
      joinsOnCaller: onCaller < 0 ? null : onCaller,
      chunks: count(3),
      workerChunks: count(4),
    };
  };
  return executorOver(manifest, { fns, threads, setThreads, placement, close: () => memory.free() }, memory);
}
