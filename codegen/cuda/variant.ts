/**
 * What the CUDA schedules (variants.ts and the files it gathers: warp.ts,
 * adaptive.ts, merge.ts, dense.ts) share: a variant's shape, an op's C names
 * and signatures (OpCode), and the host lines every launch stub is built from
 * (the clamped row range, the grid, the launch on the stub's stream).
 */
import type { LExpr, LoopFunc } from '../../ir/loops.js';
import type { PatternFigure } from '../../runtime/native/abi.js';
import { cType, ExprPrinter, FuncNames } from './cprint.js';
import { writtenBuffers, type FoldOp, type For } from './nest.js';

export interface ExtraParam {
  type: string;
  name: string;
  doc: string;
  /**
   * The pattern figure of the op's sparse operand it is (runtime/native/abi.ts PATTERN_FIGURES): the ABI
   * passes that figure, the program stub its size field (`figureSize`).
   */
  figure: Exclude<PatternFigure, 'rows' | 'cols'>;
}

export interface Variant {
  /** The cost model's name of the schedule. */
  name: string;
  /** Its C spelling (in symbols). */
  cname: string;
  /** One line for the header comment. */
  note: string;
  /** Device code (one or more __global__ functions). */
  device: string[];
  /** Host lines of the launch stub; may `return` an error code; end by launching. */
  launch: string[];
  /** Parameters beyond buffers, sizes, the row range and stream (merge-path needs the entry count). */
  extra: ExtraParam[];
}

/** The C names and signatures shared by the variants of one op. */
export class OpCode {
  readonly names: FuncNames;
  readonly p: ExprPrinter;
  readonly written: Set<string>;
  /** Kernel name prefix: dy_<func>. */
  readonly base: string;

  constructor(
    readonly f: LoopFunc,
    names: FuncNames,
    cfunc: string,
  ) {
    this.names = names;
    this.p = new ExprPrinter(names);
    this.written = writtenBuffers(f);
    this.base = `dy_${cfunc}`;
  }

  /** Parameter list: buffers (const unless written), then sizes. */
  params(withRestrict: boolean): string[] {
    const r = withRestrict ? ' __restrict__' : '';
    const out = this.f.buffers.map((b) => {
      const t = b.elem === 'bool' ? 'int' : cType(b.elem);
      return `${this.written.has(b.name) ? '' : 'const '}${t}*${r} ${this.names.buf(b.name).c}`;
    });
    for (const s of this.f.sizes) out.push(`int ${this.names.sizes.get(s)!}`);
    return out;
  }

  args(): string[] {
    return [
      ...this.f.buffers.map((b) => this.names.buf(b.name).c),
      ...this.f.sizes.map((s) => this.names.sizes.get(s)!),
    ];
  }

  /** Host text of a size expression (sizes are stub parameters of the same names). */
  host(e: LExpr): string {
    return this.p.as(e, 'index');
  }
}

export const FOLD_FN: Record<FoldOp, string> = {
  sum: 'dy_op_sum',
  min: 'dy_op_min',
  max: 'dy_op_max',
  or: 'dy_op_or',
  and: 'dy_op_and',
};
export const indent = (lines: string[], by: string): string[] => lines.map((l) => (l === '' ? l : by + l));

export function kernelHead(o: OpCode, name: string, threads: number, extra: string[] = []): string {
  return `static __global__ void __launch_bounds__(${threads}) ${name}(${[...o.params(true), ...extra].join(', ')})`;
}

/** A launch on the stub's stream: DY_LAUNCH (program.cu's helpers) is `<<< >>>` for nvcc and a call in the CPU emulation, which C++ needs. */
export function launchLine(kernel: string, grid: string, block: string, args: readonly string[]): string {
  return `DY_LAUNCH(${kernel}, ${grid}, ${block}, stream, ${args.join(', ')});`;
}

/** Kernel parameters of the clamped range of the parallel loop (after the op's own). */
export const RANGE_PARAMS = ['int dy_lo', 'int dy_hi'];
export const RANGE_ARGS = ['dy_lo', 'dy_hi'];

export const paren = (c: string): string => (/^[A-Za-z0-9_]+$/.test(c) ? c : `(${c})`);

/**
 * Host lines clamping the parallel loop to the stub's rows [dy_row_begin,
 * dy_row_end) as the wasm functions clamp to [lo, hi): dy_lo, dy_hi (int).
 */
export function clampLines(o: OpCode, top: For): string[] {
  const [lo, hi] = [paren(o.host(top.lo)), paren(o.host(top.hi))];
  return [
    `const int dy_lo = dy_row_begin > ${lo} ? dy_row_begin : ${lo};`,
    `const int dy_hi = dy_row_end >= 0 && dy_row_end < ${hi} ? dy_row_end : ${hi};`,
  ];
}

/**
 * The grid-stride loop over rows [dy_lo, dy_hi) as the row variable `i`:
 * counted in 64 bits, because the thread index of a warp-per-row grid passes
 * 2^32 at 2^27 rows and a stride added to a row near INT_MAX would wrap.
 */
export function rowLoop(i: string, first: string, stride: string): string[] {
  return [
    `  for (long long dy_row = ${first}; dy_row < dy_hi; dy_row += ${stride}) {`,
    `    const int ${i} = (int)dy_row;`,
  ];
}

/** The clamped range and its row count dy_n (long long); an empty range launches nothing. */
export function rangeLines(o: OpCode, top: For): string[] {
  return [...clampLines(o, top), 'const long long dy_n = (long long)dy_hi - dy_lo;', 'if (dy_n <= 0) return 0;'];
}

/** Lines that compute a 1-D grid of `blocks` (a long long expression) and reject one too large. */
export function grid(blocks: string): string[] {
  return [`const long long dy_blocks = ${blocks};`, 'if (dy_blocks > 2147483647LL) return DYPE_ERR_TOO_LARGE;'];
}

/** The entry count a variant's stub takes beside the op's sizes (merge-path, adaptive-rows). */
export const NNZ_PARAM: ExtraParam = {
  type: 'int',
  name: 'dy_nnz',
  doc: "stored entries of the matrix whose row pointers the op walks (its rowPtr[rows]); the launch is sized by them, the range's own entries are read on the device",
  figure: 'entries',
};

/**
 * The longest run of the pointers a stub walks (adaptive-rows: rows longer than its groups keep go to a pass
 * of their own, which the stub queues only if this figure can hold one). 0 means not known.
 */
export function longestParam(role: 'rowPtr' | 'colPtr'): ExtraParam {
  const what = role === 'rowPtr' ? 'row' : 'column';
  return {
    type: 'int',
    name: 'dy_longest',
    doc: `the most stored entries in one ${what} of the matrix whose pointers the op walks, or any larger figure; 0 if not known. The long-${what} pass is queued only where this can exceed what a group keeps; without it every ${what} runs on its group, so a figure below the true one costs time, not correctness`,
    figure: role === 'rowPtr' ? 'longestRow' : 'longestCol',
  };
}

/** The program stub's size symbol of a figure of root `r` (names.ts mangles it into a field). */
export function figureSize(figure: ExtraParam['figure'], r: string): string {
  switch (figure) {
    case 'entries':
      return `nnz(${r})`;
    case 'longestRow':
      return `maxrow(${r})`;
    case 'longestCol':
      return `maxcol(${r})`;
  }
}
