/**
 * adaptive-rows: rows on groups of lanes sized by the data (the mean row
 * length over a row's entries, the dense width over an SpMM's columns),
 * long rows on blocks of their own. See variants.ts for the schedules together.
 */
import type { LStmt } from '../../ir/loops.js';
import { ADAPTIVE_LANES } from '../../runtime/catalogue/gpu.js';
import { columnShape } from '../c/columns.js';
import { cConst, cType } from './cprint.js';
import { ColumnJam, JamPrinter } from './vec-columns.js';
import { onlySizes, topLoop, type For } from './nest.js';
import {
  type Variant,
  OpCode,
  FOLD_FN,
  indent,
  kernelHead,
  launchLine,
  RANGE_PARAMS,
  RANGE_ARGS,
  paren,
  rangeLines,
  grid,
  NNZ_PARAM,
  longestParam,
} from './variant.js';
import {
  BLOCK_LANES,
  LONG_ROW_BLOCKS,
  LONG_ROW_STEPS,
  WarpPrinter,
  vectorCondition,
  vectorPrinter,
  type LaneSplit,
} from './warp.js';
import { mergeShape, type MergeShape } from './merge.js';

// ---------------------------------------------------------------- adaptive-rows

/**
 * Rows of a row reduction (SpMV's shape) on groups of `dy_width` lanes, the
 * width the smallest power of two at least the mean row length, within
 * [ADAPTIVE_LANES.min, ADAPTIVE_LANES.max] (runtime/catalogue/gpu.ts, which
 * prices it with the same rule): several short rows per warp, a warp per row
 * from 32 entries on. A warp's groups take consecutive rows and every lane
 * of it the same trips, so the group shuffles see all 32 lanes; groups past
 * the last row repeat the warp's first row and store nothing. Only ops whose
 * lanes split row reductions alone qualify (an SpMM's dense width keeps
 * warp-per-row's lanes).
 */
export function adaptiveRows(o: OpCode): Variant | undefined {
  const top = topLoop(o.f);
  if (!top || !onlySizes(top.lo, o.f) || !onlySizes(top.hi, o.f)) return undefined;
  return entryRows(o, top) ?? denseRows(o, top);
}

/** The warp-uniform loop over a group's rows (adaptive-rows' kernels): `i` the row, `dy_live` false past the last. */
function groupRowLoop(i: string): string[] {
  return [
    '  const long long dy_groups = ((long long)gridDim.x * blockDim.x) / dy_width;',
    "  // The warp's first group: the same for its 32 lanes, so they run the same trips.",
    '  for (long long dy_base = dy_lo + ((long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31u)) / dy_width; dy_base < dy_hi; dy_base += dy_groups) {',
    '    const long long dy_row = dy_base + (long long)((threadIdx.x & 31u) / (unsigned)dy_width);',
    '    const bool dy_live = dy_row < dy_hi;',
    `    const int ${i} = (int)(dy_live ? dy_row : dy_base);`,
  ];
}

/**
 * adaptive-rows over an SpMM's columns (GE-SpMM's sub-warp rows): groups of
 * the smallest power of two of lanes at least the dense width K, up to 32
 * (adaptiveDenseLanes), each lane its columns, several rows per warp when K
 * is small; a group's lanes read the row's entries directly (the same
 * address: one broadcast load). No shuffles, so nothing needs a whole warp.
 */
function denseRows(o: OpCode, top: For): Variant | undefined {
  const lanes: LaneSplit = { width: 'dy_width', row: top.var, live: 'dy_live', dense: true };
  const wp = new WarpPrinter(o.p, o.f, lanes);
  const ind = '    ';
  const body = wp.block(top.body, ind);
  if (wp.splits === 0 || wp.laneSplits > 0 || wp.denseHi === undefined) return undefined;
  const name = `${o.base}_adaptive_rows`;
  const i = o.p.var(top.var);
  // Rows longer than DENSE_LONG_ENTRIES go to a block each where the nest allows it (a fold over one walk of
  // the row's entries inside the column loop: SpMM's shape).
  const long = denseLongShape(o);
  const ptrC = long ? o.names.buf(long.ptr).c : '';
  const queue = long ? ['int* __restrict__ dy_queue', 'int* __restrict__ dy_count'] : [];
  const kernel = (kname: string, lines: string[]): string[] => [
    `${kernelHead(o, kname, 256, [...RANGE_PARAMS, 'int dy_width', ...queue])} {`,
    '  const int dy_lane = (int)(threadIdx.x & (unsigned)(dy_width - 1));',
    ...groupRowLoop(i),
    ...(long
      ? [
          `    // A row of more than ${DENSE_LONG_ENTRIES} entries goes to the long-row kernel (a block each) where the stub`,
          '    // queued it (dy_count set); its group skips it. Without the pass every group walks its own row.',
          `    const bool dy_long = dy_count != nullptr && dy_live && ${ptrC}[${i} + 1] - ${ptrC}[${i}] > ${DENSE_LONG_ENTRIES};`,
          `    if (dy_long && dy_lane == 0) dy_queue[atomicAdd(dy_count, 1)] = ${i};`,
          '    if (!dy_long) {',
          ...indent(lines, '  '),
          '    }',
        ]
      : lines),
    '  }',
    '}',
  ];
  const found = vectorPrinter(o, top, lanes);
  // The vector copy must split the same dense loop, its only one.
  const vec = found && found.wp.laneSplits === 0 && found.wp.vectorWidths.length === 1 ? found : undefined;
  const vecName = `${name}_vec`;
  const args = [...o.args(), ...RANGE_ARGS, 'dy_width', ...(long ? ['dy_queue', 'dy_count'] : [])];
  const longArgs = [...o.args(), ...RANGE_ARGS, 'dy_queue', 'dy_count'];
  const launches = (kname: string): string[] => [
    launchLine(kname, '(unsigned)dy_blocks', '256', args),
    ...(long
      ? [
          'if (dy_count != nullptr)',
          '  ' +
            launchLine(
              `${kname}_long`,
              `(unsigned)(dy_n < ${LONG_ROW_BLOCKS} ? dy_n : ${LONG_ROW_BLOCKS})`,
              `${BLOCK_LANES}`,
              longArgs,
            ),
        ]
      : []),
  ];
  const launch = [
    ...rangeLines(o, top),
    `// Lanes per row from the dense width (runtime/catalogue/gpu.ts adaptiveDenseLanes, denseVector).`,
    `const long long dy_k = ${o.host(wp.denseHi)};`,
    `const int dy_vec = ${vec ? `${vectorCondition(o, vec.wp, vec.v)} ? ${vec.v} : 1` : '1'};`,
    'int dy_width = 1;',
    `while (dy_width < ${ADAPTIVE_LANES.max} && dy_width * dy_vec < dy_k) dy_width <<= 1;`,
    ...grid('(dy_n * dy_width + 255) / 256'),
    ...(long ? longQueue(`${DENSE_LONG_ENTRIES}`, `${DENSE_LONG_ENTRIES} entries`, '(dy_n + 1)', 'dy_n') : []),
  ];
  if (vec)
    launch.push(
      `if (dy_vec == ${vec.v}) {`,
      ...indent(launches(vecName), '  '),
      '} else {',
      ...indent(launches(name), '  '),
      '}',
    );
  else launch.push(...launches(name));
  const longKernels = long
    ? [
        '',
        ...denseLongKernel(o, long, 1, `${name}_long`),
        ...(vec ? ['', ...denseLongKernel(o, long, vec.v, `${vecName}_long`)] : []),
      ]
    : [];
  return {
    name: 'adaptive-rows',
    cname: 'adaptive_rows',
    note: `rows on groups of 1-${ADAPTIVE_LANES.max} lanes (a power of two, the dense width's), each lane its columns${vec ? ` (${vec.v} as one vector where ${vec.v} divides the width)` : ''}, several rows per warp for narrow widths${long ? `; rows of more than ${DENSE_LONG_ENTRIES} entries go to a block each` : ''}`,
    device: [...kernel(name, body), ...(vec ? ['', ...kernel(vecName, vec.body)] : []), ...longKernels],
    launch,
    extra: long ? [longestParam(long.ptrRole)] : [],
  };
}

/**
 * Host lines that set up the long-row pass only where a row can exceed `most` entries: the queue of long rows
 * and its count (dy_queue, dy_count) in the stream's workspace (its slot held in dy_ws until the stub returns),
 * the count cleared. The caller's figure dy_longest (0: not known) bounds every row; where it shows none is
 * long, both stay null, the groups walk every row and the stub queues one launch, not a memset and two
 * (5.4 us a call on an H200, docs/PERFORMANCE.md). A figure below the true one therefore only leaves long
 * rows on their groups.
 */
function longQueue(most: string, what: string, slots: string, countAt: string): string[] {
  return [
    `// The long-row pass, only where a row can be longer than a group keeps, ${what} (dy_longest: the caller's bound; 0: not known).`,
    '// Held to the return: another host thread on this stream could otherwise free the queue under these launches.',
    'dy_workspace_hold dy_ws;',
    'int* dy_queue = nullptr;',
    'int* dy_count = nullptr;',
    `if (dy_longest <= 0 || (long long)dy_longest > ${most}) {`,
    `  const cudaError_t dy_err = dy_workspace(stream, (size_t)${slots} * sizeof(int), (void**)&dy_queue, &dy_ws);`,
    '  if (dy_err != cudaSuccess) return (int)dy_err;',
    `  dy_count = dy_queue + ${countAt};`,
    '  const cudaError_t dy_clr = cudaMemsetAsync(dy_count, 0, sizeof(int), stream);',
    '  if (dy_clr != cudaSuccess) return (int)dy_clr;',
    '}',
  ];
}

/** adaptive-rows' SpMM form sends a row of more than this many entries to a block of its own (runtime/catalogue/gpu.ts). */
const DENSE_LONG_ENTRIES = ADAPTIVE_LANES.denseLongEntries;

/** The nest's column loop, its fold over the row's entries and the row pointers, where a block can take a row. */
function denseLongShape(
  o: OpCode,
): (MergeShape & { dense: For; tail: LStmt[]; ptrRole: 'rowPtr' | 'colPtr' }) | undefined {
  const m = mergeShape(o.f);
  if (!m?.dense) return undefined;
  const shape = columnShape(m.dense);
  if (!shape || shape.acc.length !== 1 || shape.acc[0] !== m.red.init || shape.entries !== m.red.loop) return undefined;
  const ptrRole = pointerRole(o, m.ptr);
  if (!ptrRole) return undefined;
  return { ...m, dense: m.dense, tail: shape.tail, ptrRole };
}

/** Whether buffer `name` of the op is row or column pointers (the longest figure the stub takes). */
function pointerRole(o: OpCode, name: string): 'rowPtr' | 'colPtr' | undefined {
  const role = o.f.buffers.find((b) => b.name === name)?.role;
  return role === 'rowPtr' || role === 'colPtr' ? role : undefined;
}

/**
 * The long-row kernel of adaptive-rows' SpMM form: a block of BLOCK_LANES threads per queued row (looping over
 * the queue), its warps taking every 8th entry of the row with lanes over the columns (V a lane, as one vector
 * where the group kernel has them: vec-columns.ts), then warp 0 folds the 8 warps' partials in warp order and
 * runs the rest of the column body. The sum's order differs from the group kernel's (the folds are
 * reassociated, as the entries form's block fold is).
 */
function denseLongKernel(o: OpCode, m: MergeShape & { dense: For; tail: LStmt[] }, v: number, kname: string): string[] {
  const { red, dense, top } = m;
  const T = cType(red.init.type);
  const ident = cConst((red.init.value as { value: number }).value, red.init.type);
  const fold = FOLD_FN[red.op];
  const warps = BLOCK_LANES / 32;
  const jam = new ColumnJam(v, dense.var, dense.hi, 'dy_col');
  const acc = o.p.var(red.init.var);
  jam.replicate(red.init.var, acc);
  const jp = new JamPrinter(o.p, jam, o.written);
  const foldBody = jp.block(red.loop.body, '        ');
  const tp = new JamPrinter(o.p, jam, o.written, 'dy_act');
  const tail = tp.block(m.tail, '        ');
  const us = Array.from({ length: v }, (_, u) => u);
  const accs = us.map((u) => `dy_${acc}_${u}`);
  const ptrC = o.names.buf(m.ptr).c;
  const i = o.p.var(top.var);
  const pv = o.p.var(red.loop.var);
  const K = o.host(dense.hi);
  return [
    `${kernelHead(o, kname, BLOCK_LANES, [...RANGE_PARAMS, 'const int* __restrict__ dy_queue', 'const int* __restrict__ dy_count'])} {`,
    `  __shared__ ${T} dy_s_part[${warps}][${v}][32];`,
    '  const int dy_t = (int)threadIdx.x, dy_w = dy_t >> 5, dy_lane = dy_t & 31;',
    '  const int dy_queued = *dy_count;',
    '  (void)dy_lo;',
    '  (void)dy_hi;',
    '  for (int dy_q = (int)blockIdx.x; dy_q < dy_queued; dy_q += (int)gridDim.x) {',
    `    const int ${i} = dy_queue[dy_q];`,
    `    for (int dy_kb = 0, dy_K = ${K}; dy_kb < dy_K; dy_kb += ${v * 32}) {`,
    `      const bool dy_act = dy_kb + ${v === 1 ? '' : `${v} * `}dy_lane < dy_K;`,
    `      const int dy_col = dy_act ? dy_kb + ${v === 1 ? '' : `${v} * `}dy_lane : dy_K - ${v};`,
    `      ${T} ${accs.map((a) => `${a} = ${ident}`).join(', ')};`,
    `      for (int ${pv} = ${ptrC}[${i}] + dy_w, dy_pe = ${ptrC}[${i} + 1]; ${pv} < dy_pe; ${pv} += ${warps}) {`,
    ...foldBody,
    '      }',
    ...accs.map((a, u) => `      dy_s_part[dy_w][${u}][dy_lane] = ${a};`),
    '      __syncthreads();',
    '      if (dy_w == 0) {',
    `        for (int dy_x = 1; dy_x < ${warps}; ++dy_x) {`,
    ...accs.map((a, u) => `          ${a} = ${fold}::f(${a}, dy_s_part[dy_x][${u}][dy_lane]);`),
    '        }',
    ...tail,
    '      }',
    '      __syncthreads();',
    '    }',
    '  }',
    '}',
  ];
}

function entryRows(o: OpCode, top: For): Variant | undefined {
  const wp = new WarpPrinter(o.p, o.f, {
    width: 'dy_width',
    row: top.var,
    live: 'dy_live && !dy_long',
    skip: 'dy_long',
  });
  const body = wp.block(top.body, '    ');
  if (wp.splits === 0 || wp.laneSplits > 0 || !wp.entryPtr) return undefined;
  const bp = new WarpPrinter(o.p, o.f, { width: `${BLOCK_LANES}`, row: top.var });
  const blockBody = bp.block(top.body, '    ');
  if (bp.splits === 0 || bp.laneSplits > 0 || bp.entryPtr !== wp.entryPtr) return undefined;
  const ptrC = o.names.buf(wp.entryPtr).c;
  const ptrRole = pointerRole(o, wp.entryPtr);
  if (!ptrRole) return undefined;
  const name = `${o.base}_adaptive_rows`;
  const longName = `${o.base}_adaptive_rows_long`;
  const i = o.p.var(top.var);
  const device = [
    `${kernelHead(o, name, 256, [...RANGE_PARAMS, 'int dy_width', 'int* __restrict__ dy_queue', 'int* __restrict__ dy_count'])} {`,
    '  const int dy_lane = (int)(threadIdx.x & (unsigned)(dy_width - 1));',
    ...groupRowLoop(i),
    `    // A row that would keep its group more than ${LONG_ROW_STEPS} steps goes to the long-row kernel where the stub`,
    '    // queued it (dy_count set); its group walks nothing. Without the pass every group walks its own row.',
    `    const bool dy_long = dy_count != nullptr && dy_live && ${ptrC}[${i} + 1] - ${ptrC}[${i}] > ${LONG_ROW_STEPS} * dy_width;`,
    `    if (dy_long && dy_lane == 0) dy_queue[atomicAdd(dy_count, 1)] = ${i};`,
    ...body,
    '  }',
    '}',
    '',
    `${kernelHead(o, longName, BLOCK_LANES, [...RANGE_PARAMS, 'const int* __restrict__ dy_queue', 'const int* __restrict__ dy_count'])} {`,
    ...indent(bp.shared, '  '),
    '  const int dy_lane = (int)threadIdx.x;',
    '  const int dy_queued = *dy_count;',
    '  (void)dy_lo;',
    '  (void)dy_hi;',
    '  for (int dy_q = (int)blockIdx.x; dy_q < dy_queued; dy_q += (int)gridDim.x) {',
    `    const int ${i} = dy_queue[dy_q];`,
    ...blockBody,
    '  }',
    '}',
  ];
  const [lo, hi] = [paren(o.host(top.lo)), paren(o.host(top.hi))];
  const launch = [
    ...rangeLines(o, top),
    'if (dy_nnz < 0) return DYPE_ERR_BAD_SIZE;',
    `// Lanes per row from the whole matrix's mean row length (runtime/catalogue/gpu.ts adaptiveLanes).`,
    `const long long dy_all = ${lo === '0' ? `(long long)${hi}` : `(long long)${hi} - ${lo}`};`,
    'const long long dy_mean = dy_all > 0 ? ((long long)dy_nnz + dy_all - 1) / dy_all : 0;',
    `int dy_width = ${ADAPTIVE_LANES.min};`,
    `while (dy_width < ${ADAPTIVE_LANES.max} && dy_width < dy_mean) dy_width <<= 1;`,
    ...grid('(dy_n * dy_width + 255) / 256'),
    '// Long rows hold more than the steps x width entries each: at most this many, queued on the device.',
    `const long long dy_cap = (long long)dy_nnz / (${LONG_ROW_STEPS}LL * dy_width) + 1;`,
    ...longQueue(`${LONG_ROW_STEPS}LL * dy_width`, `${LONG_ROW_STEPS} steps of its lanes`, '(dy_cap + 1)', 'dy_cap'),
    launchLine(name, '(unsigned)dy_blocks', '256', [...o.args(), ...RANGE_ARGS, 'dy_width', 'dy_queue', 'dy_count']),
    'if (dy_count != nullptr)',
    '  ' +
      launchLine(longName, `(unsigned)(dy_cap < ${LONG_ROW_BLOCKS} ? dy_cap : ${LONG_ROW_BLOCKS})`, `${BLOCK_LANES}`, [
        ...o.args(),
        ...RANGE_ARGS,
        'dy_queue',
        'dy_count',
      ]),
  ];
  return {
    name: 'adaptive-rows',
    cname: 'adaptive_rows',
    note: `rows on groups of ${ADAPTIVE_LANES.min}-${ADAPTIVE_LANES.max} lanes (a power of two, the mean row length's) that split the row reduction, several rows per warp; rows longer than ${LONG_ROW_STEPS} x the lanes go to a block each`,
    device,
    launch,
    extra: [NNZ_PARAM, longestParam(ptrRole)],
  };
}
