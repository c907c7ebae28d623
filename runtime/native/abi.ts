/**
 * The native ABI every generated library exports (codegen/native/dype_abi.h,
 * shipped into each project): its version, symbol prefix and the C
 * prototypes the loader binds. One place for the names: the emitters import
 * `abiPrefix` and `ABI_VERSION` from here, and test/native/abi-header.test.ts
 * checks that these prototypes are the header's.
 */
import type { DeviceKind } from '../system/types.js';

export const ABI_VERSION = 2;

/**
 * The figures of an op's sparse operand that launch() takes after the op's
 * sizes, in this order (0 for each where the op has no sparse operand):
 * rows, columns, stored entries, the most entries of one row and of one
 * column. A longest figure of 0 means "not known" (a stub then assumes any
 * row may be long); a figure above 0 must be at least the real one, since a
 * stub that sends long rows to a pass of their own skips that pass when the
 * figure shows none. Version 2 added the two longest figures.
 */
export const PATTERN_FIGURES = ['rows', 'cols', 'entries', 'longestRow', 'longestCol'] as const;
export type PatternFigure = (typeof PATTERN_FIGURES)[number];

/** The most entries between consecutive pointers (a CSR's longest row, a CSC's longest column). */
export function longestRun(ptr: ArrayLike<number>): number {
  let most = 0;
  for (let i = 1; i < ptr.length; i++) {
    const n = ptr[i]! - ptr[i - 1]!;
    if (n > most) most = n;
  }
  return most;
}

/** Host memory in the ABI's device numbering. */
export const ABI_HOST = -1;

/** The families of native libraries a program compiles to (the FPGA's over XRT or C simulation; cpu: the native CPU target). */
export type NativeFamily = 'cuda' | 'fpga' | 'cpu';

/** What a native library says it runs on (`backend()`); the emulated builds are never chosen silently. */
export type NativeBackendName = 'cuda' | 'cuda-emu' | 'xrt' | 'fpga-csim' | 'native';

/** The backend each family's real and emulated builds report; the CPU library has no emulated build (null). */
export const NATIVE_BACKENDS = {
  cuda: { real: 'cuda', emulated: 'cuda-emu' },
  fpga: { real: 'xrt', emulated: 'fpga-csim' },
  cpu: { real: 'native', emulated: null },
} as const satisfies Record<NativeFamily, { real: NativeBackendName; emulated: NativeBackendName | null }>;

/** The device kind each family's libraries run. */
export const FAMILY_KIND: Record<NativeFamily, DeviceKind> = { cuda: 'gpu', fpga: 'fpga', cpu: 'cpu' };

/** The backends that run each device kind: its family's real and emulated builds, and wasm for the CPU. */
export const BACKENDS_OF_KIND: Record<DeviceKind, readonly string[]> = (() => {
  const out: Record<DeviceKind, string[]> = { cpu: ['wasm'], gpu: [], fpga: [] };
  for (const [family, b] of Object.entries(NATIVE_BACKENDS) as [
    NativeFamily,
    { real: string; emulated: string | null },
  ][])
    out[FAMILY_KIND[family]].push(...(b.emulated === null ? [b.real] : [b.real, b.emulated]));
  return out;
})();

/**
 * Prefix of the ABI symbols of a program's library: `dype_<program>_abi_<family>_`.
 * The program name is already a C identifier (codegen/project.ts programName).
 */
export function abiPrefix(program: string, family: NativeFamily): string {
  return `dype_${program}_abi_${family}_`;
}

/** The ABI's negative error codes (positive ones come from the device runtime). */
export const ABI_ERRORS = {
  BAD_SIZE: -1,
  TOO_LARGE: -2,
  BAD_VARIANT: -3,
  BAD_DEVICE: -4,
  ALLOC: -5,
  RANGE: -6,
  UNSUPPORTED: -7,
  BACKEND: -8,
} as const;

/**
 * The functions, as C prototypes without the prefix (koffi parses these).
 * Sizes and offsets are size_t; element counts of launch() are long long.
 */
export const ABI_FUNCTIONS = {
  abi_version: 'int abi_version(void)',
  program: 'const char* program(void)',
  program_hash: 'const char* program_hash(void)',
  backend: 'const char* backend(void)',
  device_count: 'int device_count(void)',
  device_name: 'const char* device_name(int dev)',
  alloc: 'int alloc(int dev, size_t bytes, _Out_ void** out)',
  free: 'int free(int dev, void* p)',
  stream_create: 'int stream_create(int dev, _Out_ void** out)',
  stream_destroy: 'int stream_destroy(int dev, void* stream)',
  upload: 'int upload(int dev, void* dst, size_t dst_off, const void* src, size_t bytes, void* stream)',
  download: 'int download(int dev, void* dst, const void* src, size_t src_off, size_t bytes, void* stream)',
  copy: 'int copy(int dst_dev, void* dst, size_t dst_off, int src_dev, const void* src, size_t src_off, size_t bytes, void* stream)',
  sync: 'int sync(int dev, void* stream)',
  op_lookup: 'int op_lookup(const char* kernel, const char* op, const char* impl)',
  op_impls: 'const char* op_impls(const char* kernel, const char* op)',
  op_buffer_count: 'int op_buffer_count(int handle)',
  op_size_count: 'int op_size_count(int handle)',
  launch:
    'int launch(int dev, int handle, void** buffers, const long long* sizes, long long row_begin, long long row_end, void* stream)',
  error_text: 'const char* error_text(int code)',
} as const;

export type AbiFunction = keyof typeof ABI_FUNCTIONS;
