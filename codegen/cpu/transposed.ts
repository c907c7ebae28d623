/**
 * SDDMM's entry loop on the native CPU target, lanes over entries with each
 * lane's row read whole and transposed in registers:
 *   for p { let j = colIdx[p]; let acc = 0; for k { acc = acc + Q[i*d + k] * K[j*d + k] }; S[p] = a[p] * acc }
 * runs W entries at once (8 f32, 4 f64: one 256-bit vector of accumulators),
 * the loop over k by W columns: each lane's `K[j*d + k .. k + W - 1]` is one
 * vector load and the W x W block is transposed by shuffles, so column step u
 * finds every lane's element in one vector; the last d mod W columns are
 * gathered lane by lane, and the last entries of a row run the plain loop
 * (f32's two passes put them in lanes across rows instead: crossRowLong).
 * Each lane does the plain loop's operations in its order: the same bits.
 * The column blocks of ./lanes.ts (which this shape also has) gather `K`
 * element by element; this ran SDDMM d = 32 1.9x faster on bcsstk33 in a C
 * harness (docs/PERFORMANCE.md). The wasm emitter does the same with 4 lanes
 * (codegen/wasm/simd.ts `transposedSteps`).
 */
import type { LElem, LExpr, LStmt } from '../../ir/loops.js';
import { hasLoad, indexCoefficient } from '../../ir/loops-walk.js';
import { columnShape, mentions } from '../c/columns.js';
import { cType } from '../cuda/cprint.js';
import type { CStmtPrinter, For } from './cprint.js';

type Let = Extract<LStmt, { k: 'let' }>;

/** Lanes per vector (256 bits) and the C names of the vector type, its load and its shuffle. */
const VEC = {
  f32: { W: 8, type: 'dy_v8f', load: 'dy_ld8f', shuf: 'DY_SHUF8' },
  f64: { W: 4, type: 'dy_v4d', load: 'dy_ld4d', shuf: 'DY_SHUF4' },
} as const;

/** The vector types, loads and shuffles the printed loops use, once per library (GCC and clang spell shuffles apart). */
export const TRANSPOSE_HELPERS = `typedef float dy_v8f __attribute__((vector_size(32)));
typedef double dy_v4d __attribute__((vector_size(32)));
typedef int dy_v8i __attribute__((vector_size(32)));
typedef long long dy_v4l __attribute__((vector_size(32)));
#if defined(__clang__)
#define DY_SHUF8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#define DY_SHUF4(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define DY_SHUF8(a, b, ...) __builtin_shuffle(a, b, (dy_v8i){__VA_ARGS__})
#define DY_SHUF4(a, b, ...) __builtin_shuffle(a, b, (dy_v4l){__VA_ARGS__})
#endif
static inline dy_v8f dy_ld8f(const float *p) { dy_v8f v; memcpy(&v, p, sizeof v); return v; }
static inline dy_v4d dy_ld4d(const double *p) { dy_v4d v; memcpy(&v, p, sizeof v); return v; }
`;

interface Shape {
  T: 'f32' | 'f64';
  /** Index lets of one entry (its column j), computed per lane. */
  laneLets: Let[];
  /** Float accumulators with a lane-free start value. */
  acc: Let[];
  inner: For;
  /** The gathered loads of the inner loop: per-lane base + the inner variable. */
  rows: LExpr[];
  tail: LStmt[];
}

/**
 * The loop's parts, or undefined when it is not of the shape. `perLane`: variables of the enclosing loops that
 * vary by lane too (the row, when lanes take entries of several rows): a load of them is a gathered row.
 */
function shapeOf(s: For, elemOf: (buf: string) => LElem, perLane: readonly string[] = []): Shape | undefined {
  const c = columnShape(s);
  if (!c) return undefined;
  const laneLets: Let[] = [];
  const acc: Let[] = [];
  const lane = new Set([s.var, ...perLane]);
  // An accumulator's start is printed before the block's renames: it may name none of the loop's locals.
  const locals = new Set<string>();
  for (const x of c.acc) {
    if (x.type === 'index' && mentions(x.value, lane)) {
      laneLets.push(x);
      lane.add(x.var);
    } else if ((x.type === 'f32' || x.type === 'f64') && !mentions(x.value, lane) && !mentions(x.value, locals))
      acc.push(x);
    else return undefined;
    locals.add(x.var);
  }
  if (acc.length === 0 || laneLets.length === 0) return undefined;
  const T = acc[0]!.type as 'f32' | 'f64';
  if (acc.some((a) => a.type !== T)) return undefined;
  const accVars = new Set(acc.map((a) => a.var));
  const varying = new Set([...lane, ...accVars]);
  const inner = c.entries;
  if (mentions(inner.lo, lane) || mentions(inner.hi, lane)) return undefined;
  const rows: LExpr[] = [];
  // A vector value: +, -, * of T over accumulators, gathered rows and lane-free scalars.
  const vector = (e: LExpr): boolean => {
    if (!mentions(e, varying)) return true;
    if (e.k === 'var') return accVars.has(e.name);
    if (e.k === 'load') {
      if (elemOf(e.buf) !== T || indexCoefficient(e.index, inner.var, new Set([inner.var])) !== 1 || hasLoad(e.index))
        return false;
      if (mentions(e.index, accVars)) return false;
      rows.push(e);
      return true;
    }
    if (e.k === 'bin')
      return (e.op === '+' || e.op === '-' || e.op === '*') && e.type === T && vector(e.lhs) && vector(e.rhs);
    return false;
  };
  for (const x of inner.body) if (x.k !== 'set' || !accVars.has(x.var) || !vector(x.value)) return undefined;
  if (rows.length === 0) return undefined;
  return { T, laneLets, acc, inner, rows, tail: c.tail };
}

/** The shuffles that transpose rows r (lane q's W elements) into columns c (element u of every lane). */
function transpose(T: 'f32' | 'f64', r: string[], c: string[], fresh: () => string, ind: string): string[] {
  const { type, shuf } = VEC[T];
  const out: string[] = [];
  const mk = (x: string, a: string, b: string, idx: number[]): string => {
    out.push(`${ind}const ${type} ${x} = ${shuf}(${a}, ${b}, ${idx.join(', ')});`);
    return x;
  };
  if (T === 'f64') {
    const t0 = mk(fresh(), r[0]!, r[1]!, [0, 4, 2, 6]);
    const t1 = mk(fresh(), r[0]!, r[1]!, [1, 5, 3, 7]);
    const t2 = mk(fresh(), r[2]!, r[3]!, [0, 4, 2, 6]);
    const t3 = mk(fresh(), r[2]!, r[3]!, [1, 5, 3, 7]);
    mk(c[0]!, t0, t2, [0, 1, 4, 5]);
    mk(c[1]!, t1, t3, [0, 1, 4, 5]);
    mk(c[2]!, t0, t2, [2, 3, 6, 7]);
    mk(c[3]!, t1, t3, [2, 3, 6, 7]);
    return out;
  }
  // 8 x 8: pairs of rows interleaved by elements, then by pairs, then the 128-bit halves exchanged.
  const lo32 = [0, 8, 1, 9, 4, 12, 5, 13];
  const hi32 = [2, 10, 3, 11, 6, 14, 7, 15];
  const lo64 = [0, 1, 8, 9, 4, 5, 12, 13];
  const hi64 = [2, 3, 10, 11, 6, 7, 14, 15];
  const t = [0, 2, 4, 6].flatMap((q) => [mk(fresh(), r[q]!, r[q + 1]!, lo32), mk(fresh(), r[q]!, r[q + 1]!, hi32)]);
  // t[2m] holds elements 0,1 (and 4,5) of rows 2m, 2m+1; t[2m+1] elements 2,3 (and 6,7).
  const u = [
    mk(fresh(), t[0]!, t[2]!, lo64), // column 0 (4) of rows 0-3
    mk(fresh(), t[0]!, t[2]!, hi64), // 1 (5)
    mk(fresh(), t[1]!, t[3]!, lo64), // 2 (6)
    mk(fresh(), t[1]!, t[3]!, hi64), // 3 (7)
    mk(fresh(), t[4]!, t[6]!, lo64),
    mk(fresh(), t[4]!, t[6]!, hi64),
    mk(fresh(), t[5]!, t[7]!, lo64),
    mk(fresh(), t[5]!, t[7]!, hi64),
  ];
  for (let k = 0; k < 4; k++) {
    mk(c[k]!, u[k]!, u[k + 4]!, [0, 1, 2, 3, 8, 9, 10, 11]);
    mk(c[k + 4]!, u[k]!, u[k + 4]!, [4, 5, 6, 7, 12, 13, 14, 15]);
  }
  return out;
}

/**
 * One block of W lanes of the shape: lane q's variables as `base[q]` names them (its entry, and its row where
 * the row varies by lane; every lane names the same variables), each lane's index lets, its gathered rows' starts, the accumulators as one
 * vector, the loop over k by W columns with each row transposed, the last columns gathered lane by lane, then
 * the rest of each entry's body lane by lane.
 */
function laneBlock(shape: Shape, base: readonly ReadonlyMap<string, string>[], i2: string, sp: CStmtPrinter): string[] {
  const p = sp.p;
  const { T, laneLets, acc, inner, rows, tail } = shape;
  const { W, type, load } = VEC[T];
  const ct = cType(T);
  const i3 = `${i2}  `;
  const K0 = sp.fresh('k');
  const KE = sp.fresh('kend');
  const lanes = Array.from({ length: W }, (_, q) => q);
  // Per lane: the entry, its index lets, the start of each gathered row (the load's address at kk = 0).
  const laneNames = lanes.map((q) => {
    const m = new Map<string, string>(base[q]!);
    for (const l of laneLets) m.set(l.var, `${sp.fresh(p.var(l.var))}`);
    return m;
  });
  const rowPtr = rows.map(() => lanes.map(() => sp.fresh('r')));
  const accName = new Map(acc.map((a) => [a.var, sp.fresh(`v${p.var(a.var)}`)]));
  const out: string[] = [];
  for (const q of lanes) {
    const pq = p.with(laneNames[q]!);
    for (const l of laneLets) out.push(`${i2}const int ${laneNames[q]!.get(l.var)!} = ${pq.as(l.value, 'index')};`);
  }
  const zero = new Map([[inner.var, '0']]);
  rows.forEach((x, n) => {
    if (x.k !== 'load') return;
    const b = p.names.buf(x.buf).c;
    for (const q of lanes)
      out.push(
        `${i2}const ${ct} *${rowPtr[n]![q]!} = ${b} + ${p.with(laneNames[q]!).with(zero).as(x.index, 'index')};`,
      );
  });
  for (const a of acc) {
    const s0 = sp.fresh('s');
    out.push(
      `${i2}const ${ct} ${s0} = ${p.as(a.value, T)};`,
      `${i2}${type} ${accName.get(a.var)!} = {${lanes.map(() => s0).join(', ')}};`,
    );
  }
  // The body once per column with `cols(n)` standing for gathered row n and kk as `kk`.
  const laneVars = new Set([...base[0]!.keys(), ...laneLets.map((l) => l.var), ...acc.map((a) => a.var)]);
  const body = (kk: string, cols: (n: number) => string, at: string): string[] => {
    const pk = p.with(new Map([[inner.var, kk]]));
    const vexpr = (e: LExpr): string => {
      if (!mentions(e, laneVars)) return pk.as(e, T);
      if (e.k === 'var') return accName.get(e.name)!;
      if (e.k === 'load') return cols(rows.indexOf(e));
      if (e.k === 'bin') return `(${vexpr(e.lhs)} ${e.op} ${vexpr(e.rhs)})`;
      throw new Error(`native cpu emitter: transposed loop: unexpected ${e.k}`);
    };
    return inner.body.flatMap((x) => (x.k === 'set' ? [`${at}${accName.get(x.var)!} = ${vexpr(x.value)};`] : []));
  };
  const lo = p.as(inner.lo, 'index');
  const hi = p.as(inner.hi, 'index');
  out.push(
    `${i2}int ${K0} = ${lo};`,
    `${i2}const int ${KE} = ${hi};`,
    `${i2}for (; ${K0} + ${W} <= ${KE}; ${K0} += ${W}) {`,
  );
  const colNames = rows.map(() => lanes.map(() => sp.fresh('c')));
  rows.forEach((_, n) => {
    const r = lanes.map((q) => {
      const name = sp.fresh('row');
      out.push(`${i3}const ${type} ${name} = ${load}(${rowPtr[n]![q]!} + ${K0});`);
      return name;
    });
    out.push(...transpose(T, r, colNames[n]!, () => sp.fresh('t'), i3));
  });
  for (let u = 0; u < W; u++) out.push(...body(`(${K0} + ${u})`, (n) => colNames[n]![u]!, i3));
  out.push(`${i2}}`, `${i2}for (; ${K0} < ${KE}; ++${K0}) {`);
  const gathered = rows.map((_, n) => {
    const g = sp.fresh('g');
    out.push(`${i3}const ${type} ${g} = {${lanes.map((q) => `${rowPtr[n]![q]!}[${K0}]`).join(', ')}};`);
    return g;
  });
  out.push(...body(K0, (n) => gathered[n]!, i3), `${i2}}`);
  // The rest of each entry's body, lane by lane, reading its accumulators' lanes.
  for (const q of lanes) {
    const m = new Map(laneNames[q]!);
    for (const a of acc) m.set(a.var, `${accName.get(a.var)!}[${q}]`);
    out.push(`${i2}{`, ...sp.over(p.with(m)).block(tail, `${i2}  `), `${i2}}`);
  }
  return out;
}

/**
 * Entry loop s's whole blocks of W from entry P (a C variable) to E, each block's lanes in the row (lane q takes
 * entry P + q); P is left at the first entry no block took.
 */
function rowBlocks(s: For, shape: Shape, P: string, E: string, ind: string, sp: CStmtPrinter): string[] {
  const { W } = VEC[shape.T];
  const lanes = Array.from({ length: W }, (_, q) => new Map<string, string>([[s.var, `(${P} + ${q})`]]));
  return [`${ind}for (; ${P} + ${W} <= ${E}; ${P} += ${W}) {`, ...laneBlock(shape, lanes, `${ind}  `, sp), `${ind}}`];
}

/**
 * The loop printed with lanes over entries and transposed rows where a row holds W entries or more (the last
 * entries of such a row by the plain loop), as `short` prints it otherwise; undefined when it does not have the shape.
 */
export function transposedLoop(
  s: For,
  ind: string,
  sp: CStmtPrinter,
  short: (s: For, ind: string) => string[],
): string[] | undefined {
  const p = sp.p;
  const shape = shapeOf(s, (b) => p.bufElem(b));
  if (!shape) return undefined;
  const { W } = VEC[shape.T];
  const i1 = `${ind}  `;
  const i2 = `${ind}    `;
  const P = sp.fresh('p');
  const E = sp.fresh('pend');
  return [
    `${ind}{`,
    `${i1}int ${P} = ${p.as(s.lo, 'index')};`,
    `${i1}const int ${E} = ${p.as(s.hi, 'index')};`,
    `${i1}if (${E} - ${P} < ${W}) {`,
    ...short(s, i2),
    `${i1}} else {`,
    ...rowBlocks(s, shape, P, E, i1, sp),
    // The last entries of the row: the plain loop.
    ...sp.forStmt(s, i1, P, E),
    `${i1}}`,
    `${ind}}`,
  ];
}

/**
 * Rows of fewer entries than this run the lanes across rows (crossRowShort); the others crossRowLong: whole blocks
 * of W in the row, their last entries in lanes across the long rows. f32 only:
 * f64's 4 lanes ran rows of 3 and 4 entries 2.3-2.5x slower that way, real short-row graphs 0.89-1.12x
 * (docs/PERFORMANCE.md, *Lanes across rows*).
 */
export const CROSS_ROW_BELOW: Readonly<Record<'f32' | 'f64', number | undefined>> = { f32: 8, f64: undefined };

/** The row loop's entry loop and its shape with the row varying by lane, where the loop has that shape. */
export function crossRowShape(
  top: For,
  elemOf: (buf: string) => LElem,
  ptrOf: (entries: For, row: string) => string | undefined,
): { e: For; ptr: string; shape: Shape; rowShape: Shape; below: number } | undefined {
  if (top.body.length !== 1 || top.body[0]!.k !== 'for') return undefined;
  const e = top.body[0] as For;
  const ptr = ptrOf(e, top.var);
  const rowShape = ptr === undefined ? undefined : shapeOf(e, elemOf);
  if (ptr === undefined || rowShape === undefined) return undefined;
  const shape = shapeOf(e, elemOf, [top.var]);
  const below = shape && CROSS_ROW_BELOW[shape.T];
  return shape && below !== undefined ? { e, ptr, shape, rowShape, below } : undefined;
}

type CrossShape = NonNullable<ReturnType<typeof crossRowShape>>;

/**
 * Rows listed per tile before a pass runs them. A pass that skipped the other pass's rows by a branch on each
 * row's length mispredicted it wherever long and short rows alternate at random (generated rows of 3-12
 * entries ran 0.67-0.89x of the one-pass code, docs/PERFORMANCE.md *Lanes across rows*); the list is built
 * without a branch (each row written, the count moved by the comparison) and the pass walks it.
 */
const ROW_TILE = 256;

/**
 * The loop over the rows in [lo, hi) (C expressions) whose length compares with `below` as `cmp` says, tile by
 * tile: `I` is declared in the body's scope with the row.
 */
function listedRows(
  sp: CStmtPrinter,
  R: string,
  I: string,
  cmp: '<' | '>=',
  below: number,
  lo: string,
  hi: string,
  ind: string,
  body: (ind: string) => string[],
): string[] {
  // Prefixes end in a letter: fresh() appends a counter, and 't1' + 10 would be 't' + 110.
  const [ROWS, T0, T1, END, NL, R0, Q] = ['rows', 'tlo', 'thi', 'end', 'nl', 'r', 'q'].map((n) => sp.fresh(n));
  const i1 = `${ind}  `;
  const i2 = `${ind}    `;
  return [
    `${ind}int ${ROWS}[${ROW_TILE}];`,
    // T0 moves to T1 (at most END), never past it: no overflow near INT_MAX rows.
    `${ind}for (int ${T0} = ${lo}, ${END} = ${hi}, ${T1}; ${T0} < ${END}; ${T0} = ${T1}) {`,
    `${i1}${T1} = ${END} - ${T0} < ${ROW_TILE} ? ${END} : ${T0} + ${ROW_TILE};`,
    `${i1}int ${NL} = 0;`,
    `${i1}for (int ${R0} = ${T0}; ${R0} < ${T1}; ++${R0}) {`,
    `${i2}${ROWS}[${NL}] = ${R0};`,
    `${i2}${NL} += (int)(${R}[${R0} + 1] - ${R}[${R0}] ${cmp} ${below});`,
    `${i1}}`,
    `${i1}for (int ${Q} = 0; ${Q} < ${NL}; ++${Q}) {`,
    `${i2}const int ${I} = ${ROWS}[${Q}];`,
    ...body(i2),
    `${i1}}`,
    `${ind}}`,
  ];
}

/**
 * Entries of any rows into W lanes, a block run whenever the lanes are full, each lane with its own row: both
 * K's and Q's rows are read per lane and transposed. `push` prints the loop that adds the entries from `from`
 * to `PE` of row `I` (the caller declares `const int PE`, the returned name, first); `rest` runs the entries left
 * in the lanes (fewer than W) by the plain loop.
 */
function crossLanes(top: For, x: CrossShape, sp: CStmtPrinter) {
  const p = sp.p;
  const { e, shape } = x;
  const { W } = VEC[shape.T];
  const I = p.var(top.var);
  const [BP, BR, NB, PP, PE, Q] = ['bp', 'br', 'nb', 'p', 'pe', 'q'].map((n) => sp.fresh(n));
  const base = Array.from(
    { length: W },
    (_, q) =>
      new Map([
        [e.var, `${BP}[${q}]`],
        [top.var, `${BR}[${q}]`],
      ]),
  );
  const left = sp.over(
    p.with(
      new Map([
        [e.var, `${BP}[${Q}]`],
        [top.var, `${BR}[${Q}]`],
      ]),
    ),
  );
  return {
    PE,
    decl: (ind: string): string => `${ind}int ${BP}[${W}], ${BR}[${W}], ${NB} = 0;`,
    push: (from: string, j1: string): string[] => {
      const j2 = `${j1}  `;
      return [
        `${j1}for (int ${PP} = ${from}; ${PP} < ${PE}; ++${PP}) {`,
        `${j2}${BP}[${NB}] = ${PP};`,
        `${j2}${BR}[${NB}] = ${I};`,
        `${j2}if (++${NB} < ${W}) continue;`,
        `${j2}${NB} = 0;`,
        ...laneBlock(shape, base, j2, sp),
        `${j1}}`,
      ];
    },
    rest: (ind: string): string[] => [
      `${ind}for (int ${Q} = 0; ${Q} < ${NB}; ++${Q}) {`,
      ...left.block(e.body, `${ind}  `),
      `${ind}}`,
    ],
  };
}

/**
 * The rows of CROSS_ROW_BELOW entries or more in [lo, hi) (C expressions): W entries at a time with the lanes in
 * the row (its row of Q broadcast), then the last entries of each (fewer than W) W at a time across those rows
 * (crossLanes). Run by the plain loop, each of those last entries was one chain of dependent adds: rows of 8-24
 * entries ran 0.84x of the one-pass code at d = 16 and 0.90x at d = 64, 0.94x and 1.42x this way
 * (docs/PERFORMANCE.md, *Lanes across rows*).
 */
export function crossRowLong(top: For, x: CrossShape, ind: string, sp: CStmtPrinter, lo: string, hi: string): string[] {
  const p = sp.p;
  const { e, rowShape } = x;
  const R = p.names.buf(x.ptr).c;
  const I = p.var(top.var);
  const P = sp.fresh('p');
  const c = crossLanes(top, x, sp);
  return [
    c.decl(ind),
    ...listedRows(sp, R, I, '>=', x.below, lo, hi, ind, (i) => [
      `${i}int ${P} = ${p.as(e.lo, 'index')};`,
      `${i}const int ${c.PE} = ${p.as(e.hi, 'index')};`,
      ...rowBlocks(e, rowShape, P, c.PE, i, sp),
      ...c.push(P, i),
    ]),
    ...c.rest(ind),
  ];
}

/**
 * The entries of the rows of fewer than CROSS_ROW_BELOW entries in [lo, hi), W at a time whichever rows they
 * come from (crossLanes). Such a row otherwise runs one or two chains of dependent adds (native f32 d = 16: 0.72
 * and 0.56 ns a gathered element on rows of 1 and 2, against 0.13 on rows of 64; docs/PERFORMANCE.md). Each
 * entry adds its products in the plain loop's order: the same bits.
 */
export function crossRowShort(
  top: For,
  x: CrossShape,
  ind: string,
  sp: CStmtPrinter,
  lo: string,
  hi: string,
): string[] {
  const p = sp.p;
  const R = p.names.buf(x.ptr).c;
  const I = p.var(top.var);
  const c = crossLanes(top, x, sp);
  return [
    c.decl(ind),
    ...listedRows(sp, R, I, '<', x.below, lo, hi, ind, (j1) => [
      `${j1}const int ${c.PE} = ${R}[${I} + 1];`,
      ...c.push(`${R}[${I}]`, j1),
    ]),
    ...c.rest(ind),
  ];
}
