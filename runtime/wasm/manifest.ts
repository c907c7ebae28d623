/**
 * What the wasm executor needs to run a compiled kernel, as plain JSON-able
 * data (written by codegen/wasm/emit.ts, read by runtime/wasm/executor.ts).
 * The runtime imports only this file of the compiler's world: no ir/, no
 * binaryen.
 *
 * Calling convention of every exported function (one per tensor op):
 *   f(off_0, ..., off_{B-1}, size_0, ..., size_{S-1}, lo, hi)
 * with the i32 byte offset of each buffer in `buffers` order, each size in
 * `sizes` order (dims, and nnz(X) as the stored-entry count of X's pattern),
 * and [lo, hi) clamping the top-level parallel loop (0 and 2^31-1 for the
 * whole range; threads pass a slice). All parameters are i32.
 */
import type { ValueDtype } from '../dtype.js';

/** Element types of buffers; `index` is i32. Storage: f32, f64, i32, i64 natively; bool as one i32 (0 or 1) per element. */
export type WasmElem = 'f32' | 'f64' | 'i32' | 'i64' | 'bool' | 'index';
export type WasmRole = 'dense' | 'values' | 'rowPtr' | 'colIdx' | 'colPtr' | 'rowIdx' | 'scalar';

export interface WasmBuffer {
  name: string;
  elem: WasmElem;
  role: WasmRole;
  /** The value the buffer holds (part of). */
  of: string;
  layout?: 'csr' | 'csc';
}

/** A value's type: format, dtype and shape (a dim name or a literal). */
export interface WasmValueType {
  format: 'dense' | 'csr' | 'csc' | 'coo';
  dtype: ValueDtype;
  shape: (string | number)[];
}

export interface WasmOp {
  /** Name of the exported wasm function. */
  export: string;
  /** Tensor op id in the graph IR. */
  op: string;
  /** The value computed, and the buffer it is written to (`X.next` when the op reads X itself). */
  result: string;
  out: string;
  buffers: WasmBuffer[];
  sizes: string[];
  schedules: string[];
  /** The body is one top-level parallel loop whose range [lo, hi) may be split across threads. */
  splittable: boolean;
  /** Trip count of that loop: a size name or a literal (absent: not known, the op runs on one thread). */
  splitRange?: string | number;
  /** The value (sparse, or the row count of a dense loop) whose row pointers best balance a split, if any. */
  balanceBy?: { root: string; layout: 'csr' | 'csc' };
  /**
   * What the op writes of its out buffer when the loop is clamped to [lo, hi)
   * (proved from the loop IR, codegen/wasm/split.ts): 'rows' = elements
   * [lo * W, hi * W) with W = elements per row of the result; 'entries' =
   * [ptr[lo], ptr[hi]) of the balancing pointers. Absent: unknown, so the op
   * is never split across device instances (threads of one memory still are).
   */
  splitWrites?: 'rows' | 'entries';
  /**
   * Buffers (names) the op reads only at its own rows: the balancing
   * pointers at i and i + 1, and indices or values of that pattern and
   * layout at the entries of row i (codegen/wasm/split.ts). An instance of a
   * split stage needs only its slice of them.
   */
  rowLocal?: string[];
  /**
   * The same op in spread walks (wasm modules only): `export` reads every cache line of the rows it
   * gathers in its first walk of a row's entries, which pays where those rows come from beyond the
   * core's L2 and costs where they sit in it (codegen/wasm/simd.ts `SPREAD`). `gathered`: the buffers
   * read by rows through loaded indices, whose bytes the executor weighs (runtime/wasm/spread.ts).
   */
  spread?: { export: string; gathered: string[] };
}

/** A repeat region: `count` trips at most; with `until`, it stops once that value stops changing (runtime/converge.ts). */
export type WasmStep =
  | { kind: 'op'; op: string }
  | {
      kind: 'repeat';
      id: string;
      count: number | { param: string };
      until?: { value: string; within?: number };
      body: WasmStep[];
    };

export interface WasmManifest {
  format: 'dype-wasm-manifest';
  version: 1;
  kernel: string;
  params: { name: string; type: WasmValueType }[];
  results: { name: string; type: WasmValueType }[];
  /** Type of every value of the kernel (params, temporaries, results). */
  values: Record<string, WasmValueType>;
  /** Sparse values: the input whose stored-entry list each shares (entry for entry). */
  roots: Record<string, string>;
  ops: WasmOp[];
  /** Program order, repeat regions included. */
  program: WasmStep[];
  /** Host functions the module imports (module "math"): f64 -> f64, pow f64 x f64 -> f64. */
  imports: string[];
  /** Whether the module imports a shared memory (env.memory). */
  sharedMemory: boolean;
  maxPages: number;
}
