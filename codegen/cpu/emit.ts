/**
 * Prints one LoopFunc as a C function of the native CPU library:
 *   static void dy_fN(char *const *dy_b, const long long *dy_s, long long dy_lo, long long dy_hi)
 * with the op's buffers (restrict pointers, in LoopFunc order), its sizes
 * (in LoopFunc order) and [dy_lo, dy_hi) clamping the top-level parallel
 * loop, as the wasm functions take them. Threads are the library's
 * (codegen/cpu/library.ts): each calls the function on its own row range.
 *
 * Vector-friendly inner loops: a loop over a row's columns c that holds
 * accumulators across a loop over the row's entries (SpMM's
 * `for c { acc = 0; for p { acc += A[p] * B[j*k + c] }; Y[i*k + c] = acc }`)
 * is strip-mined (codegen/cpu/lanes.ts) so that the entry loop is outside
 * and a block of columns, a contiguous vector, is updated per entry. Each
 * accumulator still folds its entries in the same order, so results are the
 * scalar code's bit for bit.
 *
 * Widths: a function whose column blocks are bounded by a size alone is
 * printed once per common width (LANE_WIDTHS) with that size a C constant,
 * once more with the size as given, and as a dispatcher on the size, so
 * that the C compiler drops the block ladder and unrolls each copy for its
 * width. (One always-inlined body called with constants instead left gcc's
 * straight-line vectoriser scalar: 5x slower.) The emitted SpMM with K = 32 a constant
 * ran 1.3x faster than with K at run time on bcsstk33 and Groebner_id2003_aug
 * and 1.45x on luxembourg_osm (2 entries a row), where it trailed the
 * hand-vectorised C baseline (measured in a C harness, docs/PERFORMANCE.md).
 * The copy for half a block (16 columns of f32, 8 of f64) is marked
 * DY_HALF_BLOCK (codegen/cpu/library.ts): gcc 12 on an AVX-512 host left it
 * scalar (so printed it ran 1.2-4.4x slower than the general copy, f32
 * K = 16 on bcsstk33 1.72 against 0.39 ms, and until 2026-12-04 that width
 * had no copy), and packs it in two
 * 256-bit registers when that function prefers 256-bit vectors: f32 K = 16
 * then ran 1.2-1.9x and f64 K = 8 1.9-3.5x faster than through the general
 * copy (ca-GrQc, bcsstk33, luxembourg_osm; docs/PERFORMANCE.md). The
 * preference for the whole library instead slowed f32 K = 32 on bcsstk33
 * 1.7x. The other widths' copies ran 1.2-1.8x faster than the general one
 * (K = 8 to 128, f32 and f64, bcsstk33), and K = 4's 1.2-2.8x (ca-GrQc,
 * bcsstk33, luxembourg_osm). A copy for K = 24 (a 16- and an 8-column
 * block a row) ran f32 1.2-1.7x slower than the general one: none.
 */
import type { LoopFunc } from '../../ir/loops.js';
import { storageType } from '../cuda/cprint.js';
import { FuncNames } from '../cuda/cprint.js';
import type { NameContext } from '../cuda/names.js';
import { CPrinter, CStmtPrinter, type For } from './cprint.js';
import { flatRows } from './flat.js';
import { hasF32EntryFold } from './folds.js';
import { hasLaneLoop, laneLoop, laneWidthSizes } from './lanes.js';
import { pairedLoop, pairedRows } from './pairs.js';
import { crossRowLong, crossRowShape, crossRowShort, transposedLoop } from './transposed.js';
import { entryLoopOf } from '../cuda/nest.js';

/** Widths of a column-blocked loop given a constant copy of its function (GNN feature widths, SpMM's K). */
export const LANE_WIDTHS = [4, 8, 16, 32, 64, 128] as const;

/** C text of one op's function, named `fn` (with its copies per width and their dispatcher, where it has them). */
export function emitCpuFunction(f: LoopFunc, fn: string, ctx: NameContext, pairs = true, crossRows = true): string {
  const bounded = laneWidthSizes(f.body, new Set(f.sizes));
  const at = [...bounded.keys()].map((w) => f.sizes.indexOf(w)).sort((a, b) => a - b)[0];
  const head = `/* ${f.name}: op ${f.op} -> ${f.result} */`;
  if (at === undefined) {
    if (crossRows && hasCrossRows(f))
      return [
        head,
        ...functionText(f, `${fn}_long`, ctx, undefined, false, pairs, 'long'),
        ...functionText(f, `${fn}_short`, ctx, undefined, false, pairs, 'short'),
        ...crossDispatch(fn, rowsBound(f)),
      ].join('\n');
    const scalarFolds = !hasLaneLoop(f.body) && hasF32EntryFold(f);
    return [head, ...functionText(f, fn, ctx, undefined, scalarFolds, pairs)].join('\n');
  }
  const blocks = bounded.get(f.sizes[at]!)!;
  return [
    head,
    ...functionText(f, `${fn}_any`, ctx),
    ...LANE_WIDTHS.flatMap((w) =>
      functionText(f, `${fn}_w${w}`, ctx, { at, width: w, halfBlock: [...blocks].some((b) => w % b >= b / 2) }),
    ),
    ...widthDispatch(fn, at, LANE_WIDTHS),
  ].join('\n');
}

/**
 * The function's C text; with `fixed`, size `at` is the constant `width` (the caller dispatches on it). With
 * `pairs`, a row loop of the shape ./pairs.ts takes runs its rows two at a time where they are long enough.
 */
function functionText(
  f: LoopFunc,
  fn: string,
  ctx: NameContext,
  fixed?: { at: number; width: number; halfBlock: boolean },
  scalarFolds = false,
  pairs = false,
  cross?: 'long' | 'short',
): string[] {
  const names = new FuncNames(f, ctx);
  const p = new CPrinter(names);
  const sp = new CStmtPrinter(p, (s, ind, q) => {
    const lanes = (x: For, i: string): string[] | undefined => laneLoop(x, i, q, fixed ? 'loop' : 'blocks');
    return transposedLoop(s, ind, q, (x, i) => lanes(x, i) ?? q.forStmt(x, i)) ?? lanes(s, ind);
  });
  const lines: string[] = [
    // With column blocks, gcc's loop vectoriser would take the entry loop instead (gathers of B, in-order
    // reductions: 8x slower than the blocks measured); its straight-line vectoriser packs the blocks. A
    // floating-point fold over a row's entries it can only take as a fold-left, slower while x is cached (./folds.ts).
    // The two passes stay apart: inlined into one function, gcc slowed the long rows' pass by up to 1.26x.
    `${cross ? '__attribute__((noinline)) ' : ''}${fixed?.halfBlock ? 'DY_HALF_BLOCK ' : ''}${hasLaneLoop(f.body) || scalarFolds ? '__attribute__((optimize("no-tree-loop-vectorize"))) ' : ''}static void ${fn}(char *const *dy_b, const long long *dy_s, long long dy_lo, long long dy_hi) {`,
  ];
  f.buffers.forEach((b, i) => {
    const c = names.buf(b.name).c;
    lines.push(`  ${storageType(b.elem)} *restrict ${c} = (${storageType(b.elem)} *)dy_b[${i}];`);
  });
  f.sizes.forEach((s, i) =>
    lines.push(`  const int ${names.sizes.get(s)!} = ${fixed?.at === i ? String(fixed.width) : `(int)dy_s[${i}]`};`),
  );
  lines.push('  (void)dy_lo;', '  (void)dy_hi;', '  (void)dy_s;');
  for (const b of f.buffers) lines.push(`  (void)${names.buf(b.name).c};`);
  for (const s of f.sizes) lines.push(`  (void)${names.sizes.get(s)!};`);
  for (const s of f.body) {
    if (s.k === 'for' && s.parallel) {
      // Clamp the parallel loop to the range this call was given.
      const lo = sp.fresh('lo');
      const hi = sp.fresh('hi');
      const rows = rowsSize(f);
      const paired = pairs && !hasLaneLoop(f.body) && rows !== undefined ? pairedRows(s, f) : undefined;
      const x = cross
        ? crossRowShape(
            s,
            (b) => p.bufElem(b),
            (e, v) => entryLoopOf(e, v, f),
          )
        : undefined;
      const crossLines = x
        ? (cross === 'long' ? crossRowLong : crossRowShort)(s, x, '  ', sp, `(int)${lo}`, `(int)${hi}`)
        : undefined;
      const flat = cross ? undefined : flatRows(s, f);
      const width = flat ? p.as(flat.hi, 'index') : '';
      const flatLines = flat ? sp.forStmt(flat, '  ', `(int)(${lo} * ${width})`, `(int)(${hi} * ${width})`) : undefined;
      lines.push(
        `  long long ${lo} = ${p.as(s.lo, 'index')}, ${hi} = ${p.as(s.hi, 'index')};`,
        `  if (dy_lo > ${lo}) ${lo} = dy_lo;`,
        `  if (dy_hi < ${hi}) ${hi} = dy_hi;`,
        ...(crossLines ??
          flatLines ??
          (paired
            ? pairedLoop(paired, sp, '  ', lo, hi, names.sizes.get(f.sizes[rows!]!)!)
            : sp.forStmt(s, '  ', `(int)${lo}`, `(int)${hi}`))),
      );
    } else lines.push(...sp.stmt(s, '  '));
  }
  lines.push('}');
  return lines;
}

/** The size that bounds the top-level parallel loop (the rows), as an index into the sizes; undefined when none does. */
function rowsSize(f: LoopFunc): number | undefined {
  const top = f.body.find((s) => s.k === 'for' && s.parallel);
  if (!top || top.k !== 'for' || top.hi.k !== 'var') return undefined;
  const at = f.sizes.indexOf(top.hi.name);
  return at < 0 ? undefined : at;
}

/** The op's function: the copy for size `at`'s width where there is one, the general one otherwise. */
function widthDispatch(fn: string, at: number, widths: readonly number[]): string[] {
  return [
    `static void ${fn}(char *const *dy_b, const long long *dy_s, long long dy_lo, long long dy_hi) {`,
    `  switch (dy_s[${at}]) {`,
    ...widths.map((w) => `    case ${w}: ${fn}_w${w}(dy_b, dy_s, dy_lo, dy_hi); return;`),
    `    default: ${fn}_any(dy_b, dy_s, dy_lo, dy_hi);`,
    '  }',
    '}',
  ];
}

/**
 * Rows a tile of the two passes covers. Each pass over all the rows read Q's and K's rows once more where
 * they outgrow the caches: generated banded rows of 3-12 entries at d = 64 (12.8 MB of each) ran 0.69-0.80x
 * of the one-pass code. A tile's Q rows at d = 64 f32 are 256 KB, and each pass's lanes left waiting at a
 * tile's end (fewer than 8 entries) run the plain loop.
 */
const CROSS_TILE = 1024;

/** The parallel row loop's end as a C expression of the op's function (a size of dy_s or a literal), if it is one. */
function rowsBound(f: LoopFunc): string | undefined {
  const top = f.body.find((s) => s.k === 'for' && s.parallel);
  if (!top || top.k !== 'for') return undefined;
  if (top.hi.k === 'const') return `${top.hi.value}LL`;
  const at = rowsSize(f);
  return at === undefined ? undefined : `dy_s[${at}]`;
}

/** The op's function over its two passes, tile by tile over its rows (`rows`: their end), or over all at once. */
function crossDispatch(fn: string, rows: string | undefined): string[] {
  const head = `static void ${fn}(char *const *dy_b, const long long *dy_s, long long dy_lo, long long dy_hi) {`;
  if (rows === undefined)
    return [head, `  ${fn}_long(dy_b, dy_s, dy_lo, dy_hi);`, `  ${fn}_short(dy_b, dy_s, dy_lo, dy_hi);`, `}`];
  return [
    head,
    `  const long long dy_z = dy_hi < ${rows} ? dy_hi : ${rows};`,
    `  for (long long dy_t = dy_lo > 0 ? dy_lo : 0, dy_u; dy_t < dy_z; dy_t = dy_u) {`,
    `    dy_u = dy_z - dy_t < ${CROSS_TILE} ? dy_z : dy_t + ${CROSS_TILE};`,
    `    ${fn}_long(dy_b, dy_s, dy_t, dy_u);`,
    `    ${fn}_short(dy_b, dy_s, dy_t, dy_u);`,
    `  }`,
    `}`,
  ];
}

/** Whether f's parallel row loop is an SDDMM-shaped one that takes two passes (./transposed.ts crossRowShape). */
function hasCrossRows(f: LoopFunc): boolean {
  // The body is the row loop alone: the tiles run the passes' functions once per tile (crossDispatch).
  if (f.body.length !== 1) return false;
  const top = f.body[0]!;
  if (top.k !== 'for' || !top.parallel) return false;
  const elem = new Map(f.buffers.map((b) => [b.name, b.elem]));
  return (
    crossRowShape(
      top,
      (b) => elem.get(b)!,
      (e, v) => entryLoopOf(e, v, f),
    ) !== undefined
  );
}
