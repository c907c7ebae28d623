/**
 * GPU schedules of one op's loop nest, gathered in order of preference
 * (variantsOf): row-per-thread, block-reduce and serial here, the others in
 * warp.ts, adaptive.ts, merge.ts and dense.ts over what variant.ts shares.
 * Each takes the LoopFunc (with its C names) and returns device code plus
 * the host lines that launch it, or undefined when the nest does not have
 * the shape the schedule needs, in which case that variant is not emitted
 * for the op:
 *
 * - row-per-thread: one thread per iteration of the parallel top loop, the
 *   body as the loop IR states it (every op with a parallel top loop);
 * - warp-per-row: a warp per iteration of the top loop; inside it, a
 *   reduction loop is split across lanes and combined with shuffles, a loop of
 *   independent iterations puts its iterations on lanes (the dense dimension
 *   of an SpMM), and the entries such lanes all walk are staged through
 *   shared memory 32 at a time (GE-SpMM's row caching); stores of warp-uniform
 *   values are made by lane 0 (sparse ops and dense row reductions);
 * - merge-path: nnz-balanced; threads (warps, with lanes over the dense
 *   dimension, for an SpMM-shaped nest) take equal shares of rows + entries,
 *   fold their segments, and a second kernel combines the segments of rows
 *   split between threads and runs the rest of the row body (the epilogue);
 * - tiled: 16 x 16 output tiles, operands of the dense reduction staged in
 *   shared memory tiles (dense contraction nests);
 * - elementwise: one thread per element of a perfect dense nest;
 * - block-reduce / serial: ops without a parallel loop (scalar results).
 *
 * Every variant of an op with a parallel top loop runs only the rows
 * [dy_row_begin, dy_row_end) of it that its stub is given (clampLines), so
 * that a stage can be split across devices by rows: merge-path walks the
 * merge path of those rows and their entries alone.
 */
import { cType, StmtPrinter } from './cprint.js';
import { isSparseOp, onlySizes, reductionAt, topLoop } from './nest.js';
import {
  type Variant,
  OpCode,
  FOLD_FN,
  kernelHead,
  launchLine,
  RANGE_PARAMS,
  RANGE_ARGS,
  rowLoop,
  rangeLines,
  grid,
} from './variant.js';
import { adaptiveRows } from './adaptive.js';
import { elementwise, tiled } from './dense.js';
import { mergePath } from './merge.js';
import { warpPerRow } from './warp.js';

export { figureSize, longestParam, NNZ_PARAM, OpCode, type ExtraParam, type Variant } from './variant.js';
export { MERGE_DENSE_TILE, MERGE_TILE } from './merge.js';

// ---------------------------------------------------------------- row-per-thread

export function rowPerThread(o: OpCode): Variant | undefined {
  const top = topLoop(o.f);
  if (!top || !onlySizes(top.lo, o.f) || !onlySizes(top.hi, o.f)) return undefined;
  const name = `${o.base}_row_per_thread`;
  const sp = new StmtPrinter(o.p);
  const i = o.p.var(top.var);
  const device = [
    `${kernelHead(o, name, 256, RANGE_PARAMS)} {`,
    ...rowLoop(i, 'dy_lo + ((long long)blockIdx.x * blockDim.x + threadIdx.x)', '(long long)gridDim.x * blockDim.x'),
    ...sp.block(top.body, '    '),
    '  }',
    '}',
  ];
  const launch = [
    ...rangeLines(o, top),
    ...grid('(dy_n + 255) / 256'),
    launchLine(name, '(unsigned)dy_blocks', '256', [...o.args(), ...RANGE_ARGS]),
  ];
  return {
    name: 'row-per-thread',
    cname: 'row_per_thread',
    note: 'one thread per iteration of the parallel loop',
    device,
    launch,
    extra: [],
  };
}

// ---------------------------------------------------------------- scalar ops

export function serial(o: OpCode): Variant | undefined {
  if (topLoop(o.f)) return undefined;
  const name = `${o.base}_serial`;
  const device = [`${kernelHead(o, name, 1)} {`, ...new StmtPrinter(o.p).block(o.f.body, '  '), '}'];
  return {
    name: 'serial',
    cname: 'serial',
    note: 'one thread runs the whole nest (an op without a parallel loop)',
    device,
    launch: [launchLine(name, '1', '1', o.args())],
    extra: [],
  };
}

export function blockReduce(o: OpCode): Variant | undefined {
  const f = o.f;
  if (topLoop(f) || f.body.length < 2) return undefined;
  const red = reductionAt(f.body, 1);
  if (!red || f.body[0] !== red.init || !onlySizes(red.loop.lo, f) || !onlySizes(red.loop.hi, f)) return undefined;
  const p = o.p;
  const name = `${o.base}_block_reduce`;
  const acc = p.var(red.init.var);
  const T = cType(red.init.type);
  const v = p.var(red.loop.var);
  const sp = new StmtPrinter(p);
  const fold = FOLD_FN[red.op];
  const device = [
    `${kernelHead(o, name, 1024)} {`,
    `  __shared__ ${T} dy_red[32];`,
    `  ${T} ${acc} = ${p.as(red.init.value, red.init.type)};`,
    `  for (int ${v} = (${o.host(red.loop.lo)}) + (int)threadIdx.x, dy_end = ${o.host(red.loop.hi)}; ${v} < dy_end; ${v} += (int)blockDim.x) {`,
    ...sp.block(red.loop.body, '    '),
    '  }',
    `  ${acc} = dy_warp_reduce<${fold}>(${acc});`,
    `  if ((threadIdx.x & 31u) == 0) dy_red[threadIdx.x >> 5] = ${acc};`,
    '  __syncthreads();',
    '  if (threadIdx.x < 32) {',
    `    ${acc} = threadIdx.x < (blockDim.x >> 5) ? dy_red[threadIdx.x] : ${p.as(red.init.value, red.init.type)};`,
    `    ${acc} = dy_warp_reduce<${fold}>(${acc});`,
    '  }',
    '  if (threadIdx.x == 0) {',
    ...sp.block(f.body.slice(2), '    '),
    '  }',
    '}',
  ];
  return {
    name: 'block-reduce',
    cname: 'block_reduce',
    note: 'one block of 1024 threads folds the reduction loop (warp shuffles, then shared memory); thread 0 runs the rest',
    device,
    launch: [launchLine(name, '1', '1024', o.args())],
    extra: [],
  };
}

/** The variants of an op, in order of preference (the first is the program's default). */
export function variantsOf(o: OpCode): Variant[] {
  const sparse = isSparseOp(o.f);
  const list = sparse
    ? // A sparse op without a parallel loop (a reduction of a sparse input to a scalar) takes the scalar forms.
      [adaptiveRows(o), warpPerRow(o), mergePath(o), rowPerThread(o), blockReduce(o), serial(o)]
    : [tiled(o), elementwise(o), warpPerRow(o), blockReduce(o), serial(o)];
  const out = list.filter((v): v is Variant => v !== undefined);
  // A dense op that is neither a tiled contraction nor elementwise keeps the plain nest.
  if (!sparse && !out.some((v) => v.name === 'elementwise')) {
    const r = rowPerThread(o);
    if (r) out.push(r);
  }
  if (out.length === 0) return [];
  return out;
}
