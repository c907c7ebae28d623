/**
 * merge-path: Merrill and Garland's merge-based row reduction, without a
 * dense loop (SpMV's shape) and inside one (SpMM's), with vector columns.
 * See variants.ts for the schedules together.
 */
import type { LStmt, LoopFunc } from '../../ir/loops.js';
import { GPU_SCHEDULE, MERGE_TILES } from '../../runtime/catalogue/gpu.js';
import { cConst, cType, ExprPrinter, StmtPrinter } from './cprint.js';
import { ColumnJam, JamPrinter, vectorType, aligned16, VECTOR_WIDTHS } from './vec-columns.js';
import { entryLoopOf, freeVars, isConst0, onlySizes, reductionAt, topLoop, type For, type Reduction } from './nest.js';
import {
  type Variant,
  OpCode,
  FOLD_FN,
  kernelHead,
  launchLine,
  RANGE_PARAMS,
  RANGE_ARGS,
  clampLines,
  rowLoop,
  NNZ_PARAM,
} from './variant.js';

// ---------------------------------------------------------------- merge-path

export interface MergeShape {
  top: For;
  /** The dense loop whose iterations go to lanes (SpMM), if any. */
  dense?: For;
  red: Reduction;
  ptr: string;
}

export function mergeShape(f: LoopFunc): MergeShape | undefined {
  const top = topLoop(f);
  if (!top || !isConst0(top.lo) || !onlySizes(top.hi, f)) return undefined;
  let block = top.body;
  let dense: For | undefined;
  if (block.length === 1 && block[0]!.k === 'for' && isConst0(block[0]!.lo) && onlySizes(block[0]!.hi, f)) {
    dense = block[0] as For;
    block = dense.body;
  }
  if (block.length < 2) return undefined;
  const red = reductionAt(block, 1);
  if (!red || block[0] !== red.init) return undefined;
  const ptr = entryLoopOf(red.loop, top.var, f);
  if (!ptr) return undefined;
  // The segment fold may read the row, the entry, the dense index and sizes, nothing else of the row body.
  const allowed = new Set([top.var, red.init.var, red.loop.var, ...f.sizes, ...(dense ? [dense.var] : [])]);
  if (![...freeVars(red.loop.body)].every((v) => allowed.has(v))) return undefined;
  // Nothing after the reduction may read another entry loop of the same rows before the epilogue.
  return { top, ...(dense ? { dense } : {}), red, ptr };
}

/** Prints the row body with the reduction replaced by the combination of its segments. */
class EpiloguePrinter extends StmtPrinter {
  constructor(
    p: ExprPrinter,
    private readonly red: Reduction,
    private readonly combine: string[],
  ) {
    super(p);
  }

  override block(ss: readonly LStmt[], ind: string): string[] {
    const out: string[] = [];
    for (const s of ss) {
      if (s === this.red.loop) continue;
      if (s === this.red.init) {
        out.push(...this.combine.map((l) => ind + l));
        continue;
      }
      out.push(...this.stmt(s, ind));
    }
    return out;
  }
}

export function mergePath(o: OpCode): Variant | undefined {
  const m = mergeShape(o.f);
  if (!m) return undefined;
  return m.dense ? mergeTilesDense(o, m, m.dense) : mergeTiles(o, m);
}

/**
 * The start of a merge-path tile kernel (mergeTiles, mergeTilesDense): the
 * block's tile of `tile` diagonals, one thread's global search for both
 * ends, and the row ends inside the tile staged in dy_s_end by the block's
 * `threads` threads (`threadLine` declares dy_t).
 */
function mergeTileHead(ptrC: string, tile: number, threads: number, threadLine: string): string[] {
  return [
    `  const int dy_e0 = ${ptrC}[dy_lo], dy_ne = ${ptrC}[dy_hi] - dy_e0;`,
    '  const long long dy_total = (long long)(dy_hi - dy_lo) + dy_ne;',
    `  const long long dy_d0 = (long long)blockIdx.x * ${tile};`,
    '  if (dy_d0 >= dy_total) return;',
    `  const int dy_len = (int)min((long long)${tile}, dy_total - dy_d0);`,
    threadLine,
    '  // The one global search of the block: both ends of its tile.',
    '  if (dy_t == 0) {',
    '    int dy_r, dy_k;',
    `    dy_merge_search(${ptrC}, dy_lo, dy_hi - dy_lo, dy_e0, dy_ne, dy_d0, &dy_r, &dy_k);`,
    '    dy_s_rk[0] = dy_r;',
    '    dy_s_rk[1] = dy_k;',
    `    dy_merge_search(${ptrC}, dy_lo, dy_hi - dy_lo, dy_e0, dy_ne, dy_d0 + dy_len, &dy_r, &dy_k);`,
    '    dy_s_rk[2] = dy_r;',
    '    dy_s_rk[3] = dy_k;',
    '  }',
    '  __syncthreads();',
    '  // Rows r0 .. r0 + nr - 1 end inside the tile; their ends go to shared memory.',
    '  const int dy_r0 = dy_s_rk[0], dy_k0 = dy_s_rk[1], dy_nr = dy_s_rk[2] - dy_r0, dy_nk = dy_s_rk[3] - dy_k0;',
    `  for (int dy_u = dy_t; dy_u < dy_nr; dy_u += ${threads}) dy_s_end[dy_u] = ${ptrC}[dy_r0 + 1 + dy_u];`,
    '  __syncthreads();',
  ];
}

/** The diagonals [dy_t0, dy_t1) of unit `unit` (a thread or a warp) taking `items` each, and where they start among the staged row ends (dy_a rows in). */
function mergeLocalSearch(unit: string, items: number): string[] {
  return [
    `  const int dy_t0 = min(${unit} * ${items}, dy_len), dy_t1 = min(dy_t0 + ${items}, dy_len);`,
    '  int dy_a = dy_t0 - dy_nk > 0 ? dy_t0 - dy_nk : 0, dy_b = dy_t0 < dy_nr ? dy_t0 : dy_nr;',
    '  while (dy_a < dy_b) {',
    '    const int dy_mid = (dy_a + dy_b) >> 1;',
    '    if (dy_s_end[dy_mid] - dy_k0 <= dy_t0 - 1 - dy_mid) dy_a = dy_mid + 1;',
    '    else dy_b = dy_mid;',
    '  }',
  ];
}

/**
 * The walk of a unit's diagonals (mergeTiles, mergeTilesDense): a row end
 * closes the row (`store` writes a row held whole; the first row, when the
 * unit starts inside it, is kept as dy_head for the rows crossing units),
 * an entry runs the fold body (printed at `ind` + 4 spaces).
 */
function mergeWalk(
  i: string,
  pv: string,
  accs: readonly string[],
  heads: readonly string[],
  ident: string,
  store: string,
  foldBody: readonly string[],
  ind: string,
): string[] {
  return [
    `${ind}int dy_head_row = -1;`,
    `${ind}bool dy_first = true;`,
    `${ind}for (int dy_d = dy_t0; dy_d < dy_t1; ++dy_d) {`,
    `${ind}  if (${i} - dy_r0 < dy_nr && dy_s_end[${i} - dy_r0] <= ${pv}) {`,
    `${ind}    if (dy_first && dy_inside) {`,
    ...accs.map((a, u) => `${ind}      ${heads[u]!} = ${a};`),
    `${ind}      dy_head_row = ${i};`,
    `${ind}    } else ${store}`,
    ...accs.map((a) => `${ind}    ${a} = ${ident};`),
    `${ind}    ++${i};`,
    `${ind}    dy_first = false;`,
    `${ind}  } else {`,
    ...foldBody,
    `${ind}    ++${pv};`,
    `${ind}  }`,
    `${ind}}`,
  ];
}

/** The reduction's C type, row pointers, accumulator, identity and fold, as the merge-path kernels print them. */
function mergeNames(o: OpCode, m: MergeShape) {
  const { red, ptr, top } = m;
  const T = cType(red.init.type);
  return {
    T,
    ptrC: o.names.buf(ptr).c,
    acc: o.p.var(red.init.var),
    ident: cConst((red.init.value as { value: number }).value, red.init.type),
    fold: FOLD_FN[red.op],
    i: o.p.var(top.var),
    pv: o.p.var(red.loop.var),
    /** Both kernels' parameters beyond the op's: the row range, a partial per row (and column), a carry per tile. */
    scratch: [...RANGE_PARAMS, `${T}* __restrict__ dy_part`, `${T}* __restrict__ dy_carry`],
    scratchArgs: [...o.args(), ...RANGE_ARGS, 'dy_part', 'dy_carry'],
    seg: `${o.base}_merge_path_tiles`,
    fix: `${o.base}_merge_path_rows`,
  };
}

/**
 * The row kernel's value of row i's fold: its own partial where its entries lie in one tile, else the carries
 * of the tiles it crossed, then its partial. With `k` (a dense column) every partial and carry is per column
 * (dy_K of them per row or tile).
 */
function mergeCombine(m: ReturnType<typeof mergeNames>, tile: number, k?: string): string[] {
  const { T, acc, fold, ptrC, i } = m;
  const part = k === undefined ? `${i} - dy_lo` : 'dy_at';
  const carry = (b: string): string => (k === undefined ? b : `${b} * dy_K + ${k}`);
  return [
    `${T} ${acc};`,
    '{',
    `  const long long dy_bs = ((long long)(${i} - dy_lo) + (${ptrC}[${i}] - dy_e0)) / ${tile}, dy_be = ((long long)(${i} - dy_lo) + (${ptrC}[${i} + 1] - dy_e0)) / ${tile};`,
    ...(k === undefined ? [] : [`  const long long dy_at = (long long)(${i} - dy_lo) * dy_K + ${k};`]),
    `  if (dy_bs == dy_be) ${acc} = dy_part[${part}];`,
    '  else {',
    `    ${acc} = dy_carry[${carry('dy_bs')}];`,
    `    for (long long dy_u = dy_bs + 1; dy_u < dy_be; ++dy_u) ${acc} = ${fold}::f(${acc}, dy_carry[${carry('dy_u')}]);`,
    `    ${acc} = ${fold}::f(${acc}, dy_part[${part}]);`,
    '  }',
    '}',
  ];
}

/**
 * The host side of the merge-path tile variants: the range, the tile count, the scratch from the stream's
 * workspace (its slot held in dy_ws until the stub returns), then the tile kernel (`segBlock` threads) and
 * the row kernel. With `K` (the dense width) the scratch holds K values per row and tile, and a width of 0
 * launches the row kernel alone.
 */
function mergeLaunch(
  o: OpCode,
  top: For,
  m: ReturnType<typeof mergeNames>,
  tile: number,
  segBlock: number,
  K?: string,
  vec?: { kernel: string; cond: string; v: number },
): string[] {
  const { T, seg, fix, scratchArgs } = m;
  const per = K === undefined ? undefined : '(dy_K > 0 ? dy_K : 1)';
  const plain = launchLine(seg, '(unsigned)dy_tiles', `${segBlock}`, scratchArgs);
  const segLaunch = vec
    ? [
        '{',
        `  // ${vec.v} columns a lane as one vector where ${vec.v} divides the width and the rows are aligned.`,
        `  if (${vec.cond}) {`,
        `    ${launchLine(vec.kernel, '(unsigned)dy_tiles', `${segBlock}`, scratchArgs)}`,
        '  } else {',
        `    ${plain}`,
        '  }',
        '}',
      ]
    : [plain];
  return [
    ...clampLines(o, top),
    `const long long dy_rows = (long long)dy_hi - dy_lo${K === undefined ? '' : `, dy_K = ${K}`};`,
    'if (dy_rows <= 0) return 0;',
    'if (dy_nnz < 0) return DYPE_ERR_BAD_SIZE;',
    '// The range holds at most dy_nnz entries (exactly, for all rows); tiles past its end return at once.',
    `const long long dy_tiles = (dy_rows + dy_nnz + ${tile - 1}) / ${tile};`,
    'if (dy_tiles > 2147483647LL || (dy_rows + 255) / 256 > 2147483647LL) return DYPE_ERR_TOO_LARGE;',
    '// Held to the return: another host thread on this stream could otherwise free the scratch under these launches.',
    'dy_workspace_hold dy_ws;',
    `${T}* dy_part = nullptr;`,
    `const cudaError_t dy_err = dy_workspace(stream, (size_t)${per === undefined ? '(dy_rows + dy_tiles)' : `((dy_rows + dy_tiles) * ${per})`} * sizeof(${T}), (void**)&dy_part, &dy_ws);`,
    'if (dy_err != cudaSuccess) return (int)dy_err;',
    `${T}* dy_carry = dy_part + dy_rows${per === undefined ? '' : ` * ${per}`};`,
    ...(K === undefined
      ? [...segLaunch, launchLine(fix, '(unsigned)((dy_rows + 255) / 256)', '256', scratchArgs)]
      : [
          `if (dy_K > 0) ${segLaunch[0]!}`,
          ...segLaunch.slice(1),
          '// The row kernel takes an output element a thread (a grid-stride loop past the largest grid).',
          'const long long dy_fix_blocks = (dy_rows * dy_K + 255) / 256;',
          `if (dy_K > 0) ${launchLine(fix, '(unsigned)(dy_fix_blocks < 2147483647LL ? dy_fix_blocks : 2147483647LL)', '256', scratchArgs)}`,
        ]),
  ];
}

/**
 * The row kernel of the SpMV-form merge-path (256 threads, a row each): the rows' body with their segments
 * combined (`body`, printed by an EpiloguePrinter). The SpMM form's takes an output element a thread
 * (mergeTilesDense).
 */
function mergeRowKernel(o: OpCode, name: string, scratch: string[], ptrC: string, i: string, body: string[]): string[] {
  return [
    `${kernelHead(o, name, 256, scratch)} {`,
    `  const int dy_e0 = ${ptrC}[dy_lo];`,
    ...rowLoop(i, 'dy_lo + ((long long)blockIdx.x * blockDim.x + threadIdx.x)', '(long long)gridDim.x * blockDim.x'),
    ...body,
    '  }',
    '}',
  ];
}

/** Diagonals of the merge path per thread of mergeTiles, and per block (the catalogue counts them: runtime/catalogue/gpu.ts). */
const MERGE_ITEMS = GPU_SCHEDULE.mergeItems;
export const MERGE_TILE = MERGE_TILES.entries;

/**
 * Merrill and Garland's merge-based row reduction (SC 2016), for a row fold
 * without a dense loop (SpMV's shape). Each block takes MERGE_TILE
 * diagonals of the merge of row ends and entries: one thread searches the
 * global row pointers for the tile's two ends, the block stages the tile's
 * row ends in shared memory, and each thread searches those for its
 * MERGE_ITEMS diagonals. A thread writes the rows it holds whole; the
 * partials of rows that cross threads are combined by a segmented scan over
 * the block (keyed by row) and written by the thread that ends the row;
 * the partial of the row that crosses the tile's end is the block's carry.
 * The row kernel adds to a row that crossed tiles the carries of the
 * blocks it crossed (O(blocks) per row, none for most) and runs the rest of
 * the row body (the fused epilogue). Scratch (a partial per row, a carry
 * per block) comes from the workspace kept per stream (dy_workspace): a
 * call allocates nothing once its stream has it.
 */
function mergeTiles(o: OpCode, m: MergeShape): Variant {
  const { top, red } = m;
  const p = o.p;
  const names = mergeNames(o, m);
  const { T, ptrC, acc, ident, fold, i, pv, scratch, seg, fix } = names;
  const foldBody = new StmtPrinter(p).block(red.loop.body, '      ');
  const B = 256;
  const segLines = [
    `${kernelHead(o, seg, B, scratch)} {`,
    `  __shared__ int dy_s_end[${MERGE_TILE}];`,
    `  __shared__ ${T} dy_s_val[${B}];`,
    `  __shared__ int dy_s_row[${B}];`,
    '  __shared__ int dy_s_rk[4];',
    ...mergeTileHead(ptrC, MERGE_TILE, B, '  const int dy_t = (int)threadIdx.x;'),
    ...mergeLocalSearch('dy_t', MERGE_ITEMS),
    `  int ${i} = dy_r0 + dy_a, ${pv} = dy_k0 + (dy_t0 - dy_a);`,
    '  // Whether this thread starts inside its first row (earlier threads or blocks hold part of it).',
    `  const bool dy_inside = ${i} < dy_hi && ${pv} > (dy_a > 0 ? dy_s_end[dy_a - 1] : ${ptrC}[dy_r0]);`,
    `  ${T} ${acc} = ${ident}, dy_head = ${ident};`,
    ...mergeWalk(i, pv, [acc], ['dy_head'], ident, `dy_part[${i} - dy_lo] = ${acc};`, foldBody, '  '),
    "  // Segmented inclusive scan of the threads' open rows (keys non-decreasing: a row is a run of threads).",
    `  const int dy_key = dy_t0 < dy_t1 && ${i} < dy_hi ? ${i} : -1;`,
    '  dy_s_row[dy_t] = dy_key;',
    `  dy_s_val[dy_t] = ${acc};`,
    '  __syncthreads();',
    `  for (int dy_off = 1; dy_off < ${B}; dy_off <<= 1) {`,
    `    ${T} dy_v = dy_s_val[dy_t];`,
    `    if (dy_key >= 0 && dy_t >= dy_off && dy_s_row[dy_t - dy_off] == dy_key) dy_v = ${fold}::f(dy_s_val[dy_t - dy_off], dy_v);`,
    '    __syncthreads();',
    '    dy_s_val[dy_t] = dy_v;',
    '    __syncthreads();',
    '  }',
    '  if (dy_head_row >= 0) {',
    `    if (dy_t > 0 && dy_s_row[dy_t - 1] == dy_head_row) dy_head = ${fold}::f(dy_s_val[dy_t - 1], dy_head);`,
    '    dy_part[dy_head_row - dy_lo] = dy_head;',
    '  }',
    `  if (dy_t == (dy_len - 1) / ${MERGE_ITEMS} && dy_key >= 0) dy_carry[blockIdx.x] = dy_s_val[dy_t];`,
    '}',
  ];
  const ep = new EpiloguePrinter(p, red, mergeCombine(names, MERGE_TILE));
  const rowLines = mergeRowKernel(o, fix, scratch, ptrC, i, ep.block(top.body, '    '));
  const launch = mergeLaunch(o, top, names, MERGE_TILE, B);
  return {
    name: 'merge-path',
    cname: 'merge_path',
    note: `Merrill-Garland merge path: each block takes ${MERGE_TILE} rows+entries (one global search, row ends in shared memory, ${MERGE_ITEMS} per thread, rows crossing threads combined by a segmented block scan); a second kernel adds the carries of rows that cross tiles and runs the epilogue`,
    device: [...segLines, '', ...rowLines],
    launch,
    extra: [NNZ_PARAM],
  };
}

/** Warps per block of mergeTilesDense and the merge-path diagonals each walks (lanes over 32 dense columns). */
const MERGE_WARPS = GPU_SCHEDULE.blockLanes / 32;
const MERGE_WARP_ITEMS = GPU_SCHEDULE.mergeWarpItems;
/** Diagonals of the merge path per block of mergeTilesDense. */
export const MERGE_DENSE_TILE = MERGE_TILES.dense;

/**
 * Merrill and Garland's merge-based row reduction for a row fold inside a
 * loop over dense columns (SpMM's shape). Each block of MERGE_WARPS warps
 * takes MERGE_DENSE_TILE diagonals of the merge of row ends and entries:
 * one thread searches the global row pointers for the tile's two ends and
 * the block stages the tile's row ends in shared memory; each warp
 * searches those for its MERGE_WARP_ITEMS diagonals and walks them with
 * its lanes over 32 columns at a time. A warp writes the rows it holds
 * whole; a row begun by earlier warps gets their open partials (kept in
 * shared memory per warp and column) from the warp that ends it, O(warps)
 * per such row; the row open at the tile's end is the block's carry, one
 * per column. The row kernel adds to a row that crossed tiles the carries
 * of the tiles it crossed and runs the rest of the row body (the fused
 * epilogue). Scratch (a partial per row and column, a carry per tile and
 * column) comes from the workspace kept per stream: no allocation per call.
 */
function mergeTilesDense(o: OpCode, m: MergeShape, dense: For): Variant {
  const { top, red } = m;
  const p = o.p;
  const names = mergeNames(o, m);
  const { T, ptrC, acc, ident, fold, i, pv, scratch, seg, fix } = names;
  const K = o.host(dense.hi);
  const k = p.var(dense.var);
  const foldBody = new StmtPrinter(p).block(red.loop.body, '        ');
  const B = MERGE_WARPS * 32;
  const W = MERGE_WARP_ITEMS;
  /** The tile kernel up to its column loop (the partials' shared array declared by `tail`). */
  const head = (kernel: string, tail: string): string[] => [
    `${kernelHead(o, kernel, B, scratch)} {`,
    `  __shared__ int dy_s_end[${MERGE_DENSE_TILE}];`,
    `  __shared__ ${tail};`,
    `  __shared__ int dy_s_trow[${MERGE_WARPS}];`,
    '  __shared__ int dy_s_rk[4];',
    `  const int dy_K = ${K};`,
    ...mergeTileHead(
      ptrC,
      MERGE_DENSE_TILE,
      B,
      '  const int dy_t = (int)threadIdx.x, dy_w = dy_t >> 5, dy_lane = dy_t & 31;',
    ),
    ...mergeLocalSearch('dy_w', W),
    '  const int dy_i0 = dy_r0 + dy_a, dy_p0 = dy_k0 + (dy_t0 - dy_a);',
    '  // Whether this warp starts inside its first row (earlier warps or blocks hold part of it).',
    `  const bool dy_inside = dy_i0 < dy_hi && dy_p0 > (dy_a > 0 ? dy_s_end[dy_a - 1] : ${ptrC}[dy_r0]);`,
    `  const int dy_last = (dy_len - 1) / ${W};`,
  ];
  const segLines = [
    ...head(seg, `${T} dy_s_tail[${B}]`),
    '  for (int dy_kb = 0; dy_kb < dy_K; dy_kb += 32) {',
    '    const bool dy_act = dy_kb + dy_lane < dy_K;',
    `    const int ${k} = dy_act ? dy_kb + dy_lane : dy_K - 1;`,
    `    int ${i} = dy_i0, ${pv} = dy_p0;`,
    `    ${T} ${acc} = ${ident}, dy_head = ${ident};`,
    ...mergeWalk(
      i,
      pv,
      [acc],
      ['dy_head'],
      ident,
      `if (dy_act) dy_part[(long long)(${i} - dy_lo) * dy_K + ${k}] = ${acc};`,
      foldBody,
      '    ',
    ),
    "    // Each warp's open row and its partials; a row is a run of warps (rows never decrease along the tile).",
    `    const int dy_key = dy_t0 < dy_t1 && ${i} < dy_hi ? ${i} : -1;`,
    '    if (dy_lane == 0) dy_s_trow[dy_w] = dy_key;',
    `    dy_s_tail[dy_t] = ${acc};`,
    '    __syncthreads();',
    '    if (dy_head_row >= 0) {',
    '      for (int dy_u = dy_w - 1; dy_u >= 0 && dy_s_trow[dy_u] == dy_head_row; --dy_u)',
    `        dy_head = ${fold}::f(dy_s_tail[dy_u * 32 + dy_lane], dy_head);`,
    `      if (dy_act) dy_part[(long long)(dy_head_row - dy_lo) * dy_K + ${k}] = dy_head;`,
    '    }',
    '    if (dy_w == dy_last && dy_key >= 0) {',
    `      ${T} dy_c = ${acc};`,
    '      for (int dy_u = dy_w - 1; dy_u >= 0 && dy_s_trow[dy_u] == dy_key; --dy_u)',
    `        dy_c = ${fold}::f(dy_s_tail[dy_u * 32 + dy_lane], dy_c);`,
    `      if (dy_act) dy_carry[(long long)blockIdx.x * dy_K + ${k}] = dy_c;`,
    '    }',
    '    // The next columns reuse the shared partials.',
    '    __syncthreads();',
    '  }',
    '}',
  ];
  const ep = new EpiloguePrinter(p, red, mergeCombine(names, MERGE_DENSE_TILE, k));
  const rowLines = [
    `${kernelHead(o, fix, 256, scratch)} {`,
    `  const int dy_K = ${K};`,
    `  const int dy_e0 = ${ptrC}[dy_lo];`,
    "  // A thread per output element, a row's columns on neighbouring threads. A thread per row walked its columns",
    "  // one after another, a warp's loads rows apart: the H200 took 0.42 us a column (84 us at K = 128).",
    '  const long long dy_elems = ((long long)dy_hi - dy_lo) * dy_K;',
    '  for (long long dy_x = (long long)blockIdx.x * blockDim.x + threadIdx.x; dy_x < dy_elems; dy_x += (long long)gridDim.x * blockDim.x) {',
    '    // 32-bit division where the elements allow (a 64-bit one is a long call on the GPU).',
    '    const long long dy_r = dy_elems <= 4294967295LL ? (long long)((unsigned)dy_x / (unsigned)dy_K) : dy_x / dy_K;',
    `    const int ${i} = dy_lo + (int)dy_r;`,
    `    const int ${k} = (int)(dy_x - dy_r * dy_K);`,
    ...ep.block(dense.body, '    '),
    '  }',
    '}',
  ];
  const vec = mergeVectorTile(o, m, dense, names, head);
  const launch = mergeLaunch(o, top, names, MERGE_DENSE_TILE, B, K, vec);
  return {
    name: 'merge-path',
    cname: 'merge_path',
    note: `Merrill-Garland merge path: each block takes ${MERGE_DENSE_TILE} rows+entries (one global search, row ends in shared memory, ${MERGE_WARP_ITEMS} per warp with lanes over 32 columns${vec ? ` or ${vec.v} columns a lane as one vector where ${vec.v} divides the width` : ''}, rows crossing warps combined in shared memory); a second kernel adds the carries of rows that cross tiles and runs the epilogue`,
    device: [...segLines, '', ...(vec ? [...vec.device, ''] : []), ...rowLines],
    launch,
    extra: [NNZ_PARAM],
  };
}

/**
 * The tile kernel of mergeTilesDense with V columns a lane (vec-columns.ts): the walk folds V accumulators,
 * gathering each dense row as one vector, and the partials, the heads and the carry go to the scratch as
 * vectors (its rows of dy_K start on vector boundaries when V divides dy_K); each column folds in the scalar
 * kernel's order. Undefined where the fold gathers no dense row as a vector.
 */
function mergeVectorTile(
  o: OpCode,
  m: MergeShape,
  dense: For,
  names: ReturnType<typeof mergeNames>,
  head: (kernel: string, tail: string) => string[],
): { device: string[]; cond: string; kernel: string; v: number } | undefined {
  const { red } = m;
  const { T, acc, ident, fold, i, pv, seg } = names;
  for (const v of VECTOR_WIDTHS) {
    const vt = vectorType(red.init.type, v);
    if (vt === undefined) continue;
    const jam = new ColumnJam(v, dense.var, dense.hi, 'dy_col');
    jam.replicate(red.init.var, acc);
    if (!jam.spread(red.loop.body)) return undefined;
    const jp = new JamPrinter(o.p, jam, o.written);
    const foldBody = jp.block(red.loop.body, '        ');
    if (jp.vectorBufs.size === 0) return undefined;
    const us = Array.from({ length: v }, (_, u) => u);
    const accs = us.map((u) => `dy_${acc}_${u}`);
    const heads = us.map((u) => `dy_head_${u}`);
    const carries = us.map((u) => `dy_c_${u}`);
    const store = (at: string, xs: string[]): string =>
      `if (dy_act) *reinterpret_cast<${vt}*>(&${at}) = make_${vt}(${xs.join(', ')});`;
    /** Folds into xs the earlier warps' partials of the row `row` (a run of warps). */
    const back = (xs: string[], row: string, ind: string): string[] => [
      `${ind}for (int dy_u = dy_w - 1; dy_u >= 0 && dy_s_trow[dy_u] == ${row}; --dy_u) {`,
      ...xs.map((x, u) => `${ind}  ${x} = ${fold}::f(dy_s_tail[${u}][dy_u * 32 + dy_lane], ${x});`),
      `${ind}}`,
    ];
    const kernel = `${seg}_vec`;
    const device = [
      ...head(kernel, `${T} dy_s_tail[${v}][${MERGE_WARPS * 32}]`),
      `  for (int dy_kb = 0; dy_kb < dy_K; dy_kb += ${v} * 32) {`,
      `    // This lane's columns dy_col .. dy_col + ${v - 1}: a ${vt} of each dense row it gathers, partial and carry.`,
      `    const bool dy_act = dy_kb + ${v} * dy_lane < dy_K;`,
      `    const int dy_col = dy_act ? dy_kb + ${v} * dy_lane : dy_K - ${v};`,
      `    int ${i} = dy_i0, ${pv} = dy_p0;`,
      `    ${T} ${[...accs, ...heads].map((x) => `${x} = ${ident}`).join(', ')};`,
      ...mergeWalk(
        i,
        pv,
        accs,
        heads,
        ident,
        store(`dy_part[(long long)(${i} - dy_lo) * dy_K + dy_col]`, accs),
        foldBody,
        '    ',
      ),
      `    const int dy_key = dy_t0 < dy_t1 && ${i} < dy_hi ? ${i} : -1;`,
      '    if (dy_lane == 0) dy_s_trow[dy_w] = dy_key;',
      ...accs.map((a, u) => `    dy_s_tail[${u}][dy_t] = ${a};`),
      '    __syncthreads();',
      '    if (dy_head_row >= 0) {',
      ...back(heads, 'dy_head_row', '      '),
      `      ${store('dy_part[(long long)(dy_head_row - dy_lo) * dy_K + dy_col]', heads)}`,
      '    }',
      '    if (dy_w == dy_last && dy_key >= 0) {',
      `      ${T} ${carries.map((c, u) => `${c} = ${accs[u]!}`).join(', ')};`,
      ...back(carries, 'dy_key', '      '),
      `      ${store('dy_carry[(long long)blockIdx.x * dy_K + dy_col]', carries)}`,
      '    }',
      '    __syncthreads();',
      '  }',
      '}',
    ];
    const aligned = ['dy_part', ...[...jp.vectorBufs].map((b) => o.names.buf(b).c)].map(aligned16);
    return { device, kernel, v, cond: [`dy_K % ${v} == 0`, ...aligned].join(' && ') };
  }
  return undefined;
}
