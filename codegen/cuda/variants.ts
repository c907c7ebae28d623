/**
 * GPU schedules of one op's loop nest. Each takes the LoopFunc (with its C
 * names) and returns device code plus the host lines that launch it, or
 * undefined when the nest does not have the shape the schedule needs, in
 * which case that variant is not emitted for the op:
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
import type { LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import { ADAPTIVE_LANES, DENSE_VECTOR } from '../../runtime/catalogue/gpu.js';
import { columnShape } from '../c/columns.js';
import { cConst, cType, ExprPrinter, FuncNames, StmtPrinter, type LLoad } from './cprint.js';
import { ColumnJam, jamContext, jamStatement, vectorType } from './vec-columns.js';
import {
  declared,
  entryLoopOf,
  exprVars,
  freeVars,
  isConst0,
  isSparseOp,
  loads,
  onlySizes,
  outerSets,
  reductionAt,
  topLoop,
  writtenBuffers,
  type FoldOp,
  type For,
  type Reduction,
} from './nest.js';

export interface ExtraParam {
  type: string;
  name: string;
  doc: string;
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

const FOLD_FN: Record<FoldOp, string> = {
  sum: 'dy_op_sum',
  min: 'dy_op_min',
  max: 'dy_op_max',
  or: 'dy_op_or',
  and: 'dy_op_and',
};
const indent = (lines: string[], by: string): string[] => lines.map((l) => (l === '' ? l : by + l));

function kernelHead(o: OpCode, name: string, threads: number, extra: string[] = []): string {
  return `static __global__ void __launch_bounds__(${threads}) ${name}(${[...o.params(true), ...extra].join(', ')})`;
}

/** A launch on the stub's stream: DY_LAUNCH (program.cu's helpers) is `<<< >>>` for nvcc and a call in the CPU emulation, which C++ needs. */
function launchLine(kernel: string, grid: string, block: string, args: readonly string[]): string {
  return `DY_LAUNCH(${kernel}, ${grid}, ${block}, stream, ${args.join(', ')});`;
}

/** Kernel parameters of the clamped range of the parallel loop (after the op's own). */
const RANGE_PARAMS = ['int dy_lo', 'int dy_hi'];
const RANGE_ARGS = ['dy_lo', 'dy_hi'];

const paren = (c: string): string => (/^[A-Za-z0-9_]+$/.test(c) ? c : `(${c})`);

/**
 * Host lines clamping the parallel loop to the stub's rows [dy_row_begin,
 * dy_row_end) as the wasm functions clamp to [lo, hi): dy_lo, dy_hi (int).
 */
function clampLines(o: OpCode, top: For): string[] {
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
function rowLoop(i: string, first: string, stride: string): string[] {
  return [
    `  for (long long dy_row = ${first}; dy_row < dy_hi; dy_row += ${stride}) {`,
    `    const int ${i} = (int)dy_row;`,
  ];
}

/** The clamped range and its row count dy_n (long long); an empty range launches nothing. */
function rangeLines(o: OpCode, top: For): string[] {
  return [...clampLines(o, top), 'const long long dy_n = (long long)dy_hi - dy_lo;', 'if (dy_n <= 0) return 0;'];
}

/** Lines that compute a 1-D grid of `blocks` (a long long expression) and reject one too large. */
function grid(blocks: string): string[] {
  return [`const long long dy_blocks = ${blocks};`, 'if (dy_blocks > 2147483647LL) return DYPE_ERR_TOO_LARGE;'];
}

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

// ---------------------------------------------------------------- warp-per-row

/** How WarpPrinter puts lanes on a row (see its constructor). */
interface LaneSplit {
  width: string;
  /** Narrow lanes split the row's dense loop (an SpMM's columns) instead of its entry walks. */
  dense?: boolean;
  /** The row variable whose entry walks may split (narrow widths). */
  row?: string;
  live?: string;
  skip?: string;
  /** Columns a lane owns as one vector (vec-columns.ts): the kernel the launch runs when they divide the width. */
  vec?: number;
}

/** Threads of adaptive-rows' long-row blocks. */
const BLOCK_LANES = 256;
/** adaptive-rows sends a row to a block of its own when its group would take more than this many steps. */
const LONG_ROW_STEPS = ADAPTIVE_LANES.longRowSteps;
/** Blocks of the long-row kernel at most (each loops over the queued rows). */
const LONG_ROW_BLOCKS = 1024;

/** Prints a row body for a warp: lanes split reductions and independent loops; see the file header. */
class WarpPrinter extends StmtPrinter {
  splits = 0;
  /** Splits that put lanes on a loop's iterations or cache entries (not row reductions). */
  laneSplits = 0;
  /** IR variables whose value differs between lanes. */
  private varying = new Set<string>();
  /** Active-lane flags of the enclosing lane-split loops (empty: the values are warp-uniform). */
  private actives: string[] = [];
  /** Inside a loop whose iterations lanes share out: each lane owns what it stores. */
  private laneOwned = false;
  /** All lanes run the same statements with the same trip counts here. */
  private converged = true;
  readonly shared: string[] = [];
  /** Buffers read or written as vectors (the launch checks their alignment). */
  readonly vectorBufs = new Set<string>();
  /** The widths of the column loops printed with vectors (the launch checks that V divides them). */
  readonly vectorWidths: LExpr[] = [];
  /** Inside a column loop whose columns a lane owns V at a time. */
  private jam: ColumnJam | undefined;

  constructor(
    p: ExprPrinter,
    private readonly f: LoopFunc,
    /**
     * Lanes per row: 32 (a warp); a C expression of a power of two up to 32 (adaptive-rows' groups, whose
     * rows share the warp's shuffles); or the 256 threads of a block (adaptive-rows' long rows). Below or
     * above a warp only the walks of row `row`'s entries split, `live` guards the stores (groups past the
     * last row, rows sent to the long-row kernel), and `skip` empties those walks (the lanes still meet at
     * the reduction's shuffles).
     */
    private readonly lanes: LaneSplit = { width: '32' },
  ) {
    super(p);
  }

  private get narrow(): boolean {
    return this.lanes.width !== '32';
  }

  /** The row-pointer buffer of the entry walks split so far (narrow splits must all walk one matrix's rows). */
  entryPtr: string | undefined;
  /** The end of the dense loop narrow lanes split (`dense` mode). */
  denseHi: LExpr | undefined;

  private uniform(e: LExpr): boolean {
    return [...exprVars(e)].every((v) => !this.varying.has(v));
  }

  override block(ss: readonly LStmt[], ind: string): string[] {
    const out: string[] = [];
    for (let k = 0; k < ss.length; k++) {
      const s = ss[k]!;
      const red = s.k === 'for' ? reductionAt(ss, k) : undefined;
      if (red && this.canSplit(s as For) && !this.varying.has(red.init.var)) {
        // Narrow groups and blocks are sized by the row length: they split a walk over the row's entries, nothing else.
        const ptr =
          !this.lanes.dense && varOfLoad(red.loop.lo) === this.lanes.row
            ? entryLoopOf(red.loop, this.lanes.row, this.f)
            : undefined;
        const entries = ptr !== undefined && (this.entryPtr === undefined || this.entryPtr === ptr);
        if (entries) this.entryPtr = ptr;
        if (!this.narrow || entries) {
          out.push(...this.splitReduction(red, ind));
          continue;
        }
        this.laneSplits++;
      }
      if (s.k === 'let' && !this.uniform(s.value)) this.varying.add(s.var);
      if (s.k === 'if' && !this.uniform(s.cond)) {
        const saved = this.converged;
        this.converged = false;
        out.push(...this.stmt(s, ind));
        this.converged = saved;
        continue;
      }
      out.push(...this.stmt(s, ind));
    }
    return out;
  }

  private canSplit(s: For): boolean {
    return this.converged && !this.laneOwned && this.actives.length === 0 && this.uniform(s.lo) && this.uniform(s.hi);
  }

  private splitReduction(red: Reduction, ind: string): string[] {
    this.splits++;
    const s = red.loop;
    const v = this.p.var(s.var);
    const end = this.fresh('end');
    const saved = [this.laneOwned, this.converged] as const;
    this.laneOwned = true;
    this.converged = false;
    for (const d of declared([s])) this.varying.add(d);
    const body = this.block(s.body, `${ind}  `);
    [this.laneOwned, this.converged] = saved;
    const acc = this.p.var(red.init.var);
    const hi = this.p.as(s.hi, 'index');
    const fold = FOLD_FN[red.op];
    let reduce: string;
    if (this.lanes.width === '32') reduce = `dy_warp_reduce<${fold}>(${acc})`;
    else if (this.lanes.width === `${BLOCK_LANES}`) {
      const scratch = this.fresh('red');
      const T = red.init.type === 'bool' ? 'int' : cType(red.init.type);
      this.shared.push(`__shared__ ${T} ${scratch}[${BLOCK_LANES / 32}];`);
      reduce = `dy_block_reduce<${fold}>(${acc}, ${scratch})`;
    } else reduce = `dy_group_reduce<${fold}>(${acc}, ${this.lanes.width})`;
    return [
      `${ind}for (int ${v} = ${this.p.as(s.lo, 'index')} + dy_lane, ${end} = ${this.lanes.skip ? `${this.lanes.skip} ? 0 : ${hi}` : hi}; ${v} < ${end}; ${v} += ${this.lanes.width}) {`,
      ...body,
      `${ind}}`,
      `${ind}${acc} = ${reduce};`,
    ];
  }

  /** A dense inner reduction the lanes could split instead (SDDMM's dot product): keep the loop around it warp-wide. */
  private hasDenseReduction(ss: readonly LStmt[]): boolean {
    return ss.some((s, k) => s.k === 'for' && isConst0(s.lo) && reductionAt(ss, k) !== undefined);
  }

  override forStmt(s: For, ind: string): string[] {
    const independent = outerSets(s.body).size === 0;
    if (independent && this.canSplit(s) && !this.hasDenseReduction(s.body)) {
      if (!this.narrow) {
        this.laneSplits++;
        return this.splitLanes(s, ind);
      }
      // Narrow groups over a dense dimension (an SpMM's columns): one such loop, from 0 to a size.
      if (this.lanes.dense && this.denseHi === undefined && isConst0(s.lo) && onlySizes(s.hi, this.f)) {
        this.denseHi = s.hi;
        return this.splitLanes(s, ind);
      }
      this.laneSplits++;
    } else if (
      this.converged &&
      this.laneOwned &&
      this.uniform(s.lo) &&
      this.uniform(s.hi) &&
      entryLoopOf(s, varOfLoad(s.lo), this.f)
    ) {
      if (!this.narrow) {
        this.laneSplits++;
        return this.cachedEntries(s, ind);
      }
      // Narrow groups read the entries directly (a group's lanes read the same ones: one broadcast load).
      if (!this.lanes.dense) this.laneSplits++;
    }
    const uni = this.uniform(s.lo) && this.uniform(s.hi);
    const saved = this.converged;
    if (!uni) {
      this.varying.add(s.var);
      this.converged = false;
    }
    const out = super.forStmt(s, ind);
    this.converged = saved;
    return out;
  }

  /** Lanes take consecutive iterations, 32 at a time; idle lanes repeat the last one and store nothing. */
  private splitLanes(s: For, ind: string): string[] {
    const vec = this.lanes.vec === undefined ? undefined : this.vecColumns(s, ind);
    if (vec) return vec;
    this.splits++;
    const v = this.p.var(s.var);
    const b = this.fresh('b');
    const e = this.fresh('e');
    const act = this.fresh('act');
    for (const d of declared([s])) this.varying.add(d);
    this.actives.push(act);
    const saved = this.laneOwned;
    this.laneOwned = true;
    const body = this.block(s.body, `${ind}  `);
    this.laneOwned = saved;
    this.actives.pop();
    return [
      `${ind}for (int ${b} = ${this.p.as(s.lo, 'index')}, ${e} = ${this.p.as(s.hi, 'index')}; ${b} < ${e}; ${b} += ${this.lanes.width}) {`,
      `${ind}  const bool ${act} = ${b} + dy_lane < ${e};`,
      `${ind}  const int ${v} = ${act} ? ${b} + dy_lane : ${e} - 1;`,
      ...body,
      `${ind}}`,
    ];
  }

  /**
   * A column loop with V columns a lane (vec-columns.ts): lanes take V consecutive columns, V x the lanes at a
   * time (V divides the width: the launch checks), or undefined where the loop has not the column shape.
   */
  private vecColumns(s: For, ind: string): string[] | undefined {
    const V = this.lanes.vec!;
    const shape = columnShape(s);
    if (!shape || !isConst0(s.lo) || this.jam) return undefined;
    const vt = vectorType(shape.acc[0]!.type, V);
    if (vt === undefined || shape.acc.some((a) => a.type !== shape.acc[0]!.type)) return undefined;
    this.splits++;
    const p = this.p;
    const b = this.fresh('b');
    const e = this.fresh('e');
    const act = this.fresh('act');
    const c = this.fresh('c');
    for (const d of declared([s])) this.varying.add(d);
    if (!onlySizes(s.hi, this.f)) return undefined;
    this.vectorWidths.push(s.hi);
    const jam = new ColumnJam(V, s.var, s.hi, c);
    this.actives.push(act);
    const saved = [this.laneOwned, this.jam] as const;
    this.laneOwned = true;
    this.jam = jam;
    const i2 = `${ind}  `;
    const body = [
      ...shape.acc.flatMap((a) => this.jammed(a, i2)),
      ...this.forStmt(shape.entries, i2),
      ...this.block(shape.tail, i2),
    ];
    [this.laneOwned, this.jam] = saved;
    this.actives.pop();
    return [
      `${ind}for (int ${b} = 0, ${e} = ${p.as(s.hi, 'index')}; ${b} < ${e}; ${b} += ${V} * ${this.lanes.width}) {`,
      `${i2}// This lane's columns ${c} .. ${c} + ${V - 1}: a ${vt} of each dense row it reads or writes.`,
      `${i2}const bool ${act} = ${b} + ${V} * dy_lane < ${e};`,
      `${i2}const int ${c} = ${act} ? ${b} + ${V} * dy_lane : ${e} - ${V};`,
      ...body,
      `${ind}}`,
    ];
  }

  override stmt(s: LStmt, ind: string): string[] {
    if (this.jam && (s.k === 'let' || s.k === 'set' || s.k === 'store') && this.jam.touches(s))
      return this.jammed(s, ind);
    return super.stmt(s, ind);
  }

  /** A statement of a vector column loop, once per column; its vector loads first, a vector store where it can. */
  private jammed(s: Extract<LStmt, { k: 'let' | 'set' | 'store' }>, ind: string): string[] {
    return jamStatement(
      jamContext(this, this.jam!, writtenBuffers(this.f), this.vectorBufs, this.storeGuard()),
      s,
      ind,
    );
  }

  /** The entries every lane walks, loaded once per 32 by the warp into shared memory. */
  private cachedEntries(s: For, ind: string): string[] {
    const p = s.var;
    const ptr = (s.lo as LLoad).buf;
    const layout = this.f.buffers.find((x) => x.name === ptr)!.layout;
    const cacheable = new Set(
      this.f.buffers
        .filter(
          (x) =>
            (x.role === 'colIdx' || x.role === 'rowIdx' || x.role === 'values') &&
            x.layout === layout &&
            !this.p.names.f.buffers.some((y) => y.name === x.name && writtenBuffers(this.f).has(y.name)),
        )
        .map((x) => x.name),
    );
    const used = new Set<string>();
    for (const e of bodyLoads(s.body))
      if (e.index.k === 'var' && e.index.name === p && cacheable.has(e.buf)) used.add(e.buf);
    if (used.size === 0 || freeVars(s.body).has(p) === false) return super.forStmt(s, ind);
    this.splits++;
    const pb = this.fresh('pb');
    const pe = this.fresh('pe');
    const t = this.fresh('t');
    const sh = new Map<string, string>();
    for (const u of used) {
      const c = `dy_sh_${this.p.names.buf(u).c}`;
      sh.set(u, c);
      const elem = this.p.names.buf(u).elem;
      this.shared.push(`__shared__ ${elem === 'bool' ? 'int' : cType(elem)} ${c}[8][32];`);
    }
    const inner = this.p;
    this.p = inner.with(new Map(), (e) =>
      e.index.k === 'var' && e.index.name === p && sh.has(e.buf) ? `${sh.get(e.buf)!}[dy_w][${t}]` : undefined,
    );
    const saved = this.converged;
    this.converged = false;
    const body = this.block(s.body, `${ind}    `);
    this.converged = saved;
    this.p = inner;
    const v = inner.var(p);
    return [
      `${ind}for (int ${pb} = ${inner.as(s.lo, 'index')}, ${pe} = ${inner.as(s.hi, 'index')}; ${pb} < ${pe}; ${pb} += 32) {`,
      `${ind}  if (${pb} + dy_lane < ${pe}) {`,
      ...[...sh].map(([u, c]) => `${ind}    ${c}[dy_w][dy_lane] = ${inner.names.buf(u).c}[${pb} + dy_lane];`),
      `${ind}  }`,
      `${ind}  __syncwarp();`,
      `${ind}  for (int ${t} = 0, ${t}_n = min(32, ${pe} - ${pb}); ${t} < ${t}_n; ++${t}) {`,
      `${ind}    const int ${v} = ${pb} + ${t};`,
      `${ind}    (void)${v};`,
      ...body,
      `${ind}  }`,
      `${ind}  __syncwarp();`,
      `${ind}}`,
    ];
  }

  /** What a store here is made under: the group's row is live, the lane's iteration is, or lane 0 for warp-uniform values. */
  private storeGuard(): string {
    const live = this.lanes.live ? [this.lanes.live] : [];
    return (this.laneOwned ? [...live, ...this.actives] : [...live, 'dy_lane == 0', ...this.actives]).join(' && ');
  }

  override storeStmt(s: Extract<LStmt, { k: 'store' }>, ind: string): string[] {
    const guard = this.storeGuard();
    return guard === '' ? super.storeStmt(s, ind) : [`${ind}if (${guard}) ${this.storeLine(s)}`];
  }
}

function varOfLoad(e: LExpr): string {
  return e.k === 'load' && e.index.k === 'var' ? e.index.name : '';
}

function bodyLoads(ss: readonly LStmt[]): LLoad[] {
  const out: LLoad[] = [];
  const visit = (xs: readonly LStmt[]): void => {
    for (const s of xs) {
      if (s.k === 'for') {
        loads(s.lo, out);
        loads(s.hi, out);
        visit(s.body);
      } else if (s.k === 'let' || s.k === 'set') loads(s.value, out);
      else if (s.k === 'store') {
        loads(s.index, out);
        loads(s.value, out);
      } else {
        loads(s.cond, out);
        visit(s.then);
        if (s.else) visit(s.else);
      }
    }
  };
  visit(ss);
  return out;
}

/**
 * The vector copy of a warp schedule's row body (vec-columns.ts): the printer and V of the first vector width
 * (float4, then double2) that prints some vector access, or undefined.
 */
function vectorPrinter(
  o: OpCode,
  top: For,
  lanes: LaneSplit,
): { wp: WarpPrinter; body: string[]; v: number } | undefined {
  for (const v of [...new Set(Object.values(DENSE_VECTOR))].filter((x) => x > 1)) {
    const wp = new WarpPrinter(o.p, o.f, { ...lanes, vec: v });
    const body = wp.block(top.body, '    ');
    if (wp.vectorBufs.size > 0) return { wp, body, v };
  }
  return undefined;
}

/** The host condition for a vector kernel: V divides every vector loop's width, every vector buffer is 16-byte aligned. */
function vectorCondition(o: OpCode, wp: WarpPrinter, v: number): string {
  const widths = [...new Set(wp.vectorWidths.map((w) => o.host(w)))].map((w) => `${paren(w)} % ${v} == 0`);
  const aligned = [...wp.vectorBufs].map((b) => `(reinterpret_cast<uintptr_t>(${o.names.buf(b).c}) & 15u) == 0`);
  return [...widths, ...aligned].join(' && ');
}

export function warpPerRow(o: OpCode): Variant | undefined {
  const top = topLoop(o.f);
  if (!top || !onlySizes(top.lo, o.f) || !onlySizes(top.hi, o.f)) return undefined;
  const name = `${o.base}_warp_per_row`;
  const wp = new WarpPrinter(o.p, o.f);
  const body = wp.block(top.body, '    ');
  if (wp.splits === 0) return undefined;
  const i = o.p.var(top.var);
  const kernel = (kname: string, w: WarpPrinter, lines: string[]): string[] => [
    `${kernelHead(o, kname, 256, RANGE_PARAMS)} {`,
    ...indent(w.shared, '  '),
    '  const int dy_lane = (int)(threadIdx.x & 31u);',
    '  const int dy_w = (int)(threadIdx.x >> 5);',
    '  (void)dy_w;',
    ...rowLoop(
      i,
      'dy_lo + (((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5)',
      '((long long)gridDim.x * blockDim.x) >> 5',
    ),
    ...lines,
    '  }',
    '}',
  ];
  const vec = vectorPrinter(o, top, { width: '32' });
  const vecName = `${name}_vec`;
  const args = [...o.args(), ...RANGE_ARGS];
  const scalarLaunch = launchLine(name, '(unsigned)dy_blocks', '256', args);
  const launch = [...rangeLines(o, top), ...grid('(dy_n + 7) / 8')];
  if (vec) {
    // Up to 32 columns the scalar lanes walk a row once already; vectors would idle 3 lanes in 4.
    const wide = [...new Set(vec.wp.vectorWidths.map((w) => o.host(w)))].map((w) => `${paren(w)} > 32`);
    launch.push(
      `// Wider than a warp: ${vec.v} columns a lane as one vector, when ${vec.v} divides the width and the rows are aligned.`,
      `if (${[...wide, vectorCondition(o, vec.wp, vec.v)].join(' && ')}) {`,
      `  ${launchLine(vecName, '(unsigned)dy_blocks', '256', args)}`,
      '} else {',
      `  ${scalarLaunch}`,
      '}',
    );
  } else launch.push(scalarLaunch);
  return {
    name: 'warp-per-row',
    cname: 'warp_per_row',
    note: `a warp per iteration of the parallel loop; lanes split its reductions (shuffle-combined) or its dense dimension (entries cached in shared memory${vec ? `; past 32 columns ${vec.v} a lane as one vector` : ''})`,
    device: [...kernel(name, wp, body), ...(vec ? ['', ...kernel(vecName, vec.wp, vec.body)] : [])],
    launch,
    extra: [],
  };
}

// ---------------------------------------------------------------- adaptive-rows

/** The entry count a variant's stub takes beside the op's sizes (merge-path, adaptive-rows). */
export const NNZ_PARAM: ExtraParam = {
  type: 'int',
  name: 'dy_nnz',
  doc: "stored entries of the matrix whose row pointers the op walks (its rowPtr[rows]); the launch is sized by them, the range's own entries are read on the device",
};

export const needsNnz = (v: Variant): boolean => v.extra.some((e) => e.name === NNZ_PARAM.name);

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
          `    // A row of more than ${DENSE_LONG_ENTRIES} entries goes to the long-row kernel (a block each); its group skips it.`,
          `    const bool dy_long = dy_live && ${ptrC}[${i} + 1] - ${ptrC}[${i}] > ${DENSE_LONG_ENTRIES};`,
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
    ...(long
      ? [
          "// The queue of long rows (at most one per row of the range) and its count, in the stream's workspace.",
          'int* dy_queue = nullptr;',
          'cudaError_t dy_err = dy_workspace(stream, (size_t)(dy_n + 1) * sizeof(int), (void**)&dy_queue);',
          'if (dy_err != cudaSuccess) return (int)dy_err;',
          'int* dy_count = dy_queue + dy_n;',
          'dy_err = cudaMemsetAsync(dy_count, 0, sizeof(int), stream);',
          'if (dy_err != cudaSuccess) return (int)dy_err;',
        ]
      : []),
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
    extra: [],
  };
}

/** adaptive-rows' SpMM form sends a row of more than this many entries to a block of its own (runtime/catalogue/gpu.ts). */
const DENSE_LONG_ENTRIES = ADAPTIVE_LANES.denseLongEntries;

/** The nest's column loop, its fold over the row's entries and the row pointers, where a block can take a row. */
function denseLongShape(o: OpCode): (MergeShape & { dense: For; tail: LStmt[] }) | undefined {
  const m = mergeShape(o.f);
  if (!m?.dense) return undefined;
  const shape = columnShape(m.dense);
  if (!shape || shape.acc.length !== 1 || shape.acc[0] !== m.red.init || shape.entries !== m.red.loop) return undefined;
  return { ...m, dense: m.dense, tail: shape.tail };
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
  const name = `${o.base}_adaptive_rows`;
  const longName = `${o.base}_adaptive_rows_long`;
  const i = o.p.var(top.var);
  const device = [
    `${kernelHead(o, name, 256, [...RANGE_PARAMS, 'int dy_width', 'int* __restrict__ dy_queue', 'int* __restrict__ dy_count'])} {`,
    '  const int dy_lane = (int)(threadIdx.x & (unsigned)(dy_width - 1));',
    ...groupRowLoop(i),
    `    // A row that would keep its group more than ${LONG_ROW_STEPS} steps goes to the long-row kernel; its group walks nothing.`,
    `    const bool dy_long = dy_live && ${ptrC}[${i} + 1] - ${ptrC}[${i}] > ${LONG_ROW_STEPS} * dy_width;`,
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
    'int* dy_queue = nullptr;',
    'cudaError_t dy_err = dy_workspace(stream, (size_t)(dy_cap + 1) * sizeof(int), (void**)&dy_queue);',
    'if (dy_err != cudaSuccess) return (int)dy_err;',
    'int* dy_count = dy_queue + dy_cap;',
    'dy_err = cudaMemsetAsync(dy_count, 0, sizeof(int), stream);',
    'if (dy_err != cudaSuccess) return (int)dy_err;',
    launchLine(name, '(unsigned)dy_blocks', '256', [...o.args(), ...RANGE_ARGS, 'dy_width', 'dy_queue', 'dy_count']),
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
    extra: [NNZ_PARAM],
  };
}

// ---------------------------------------------------------------- merge-path

interface MergeShape {
  top: For;
  /** The dense loop whose iterations go to lanes (SpMM), if any. */
  dense?: For;
  red: Reduction;
  ptr: string;
}

function mergeShape(f: LoopFunc): MergeShape | undefined {
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
 * workspace, then the tile kernel (`segBlock` threads) and the row kernel. With `K` (the dense width) the
 * scratch holds K values per row and tile, and a width of 0 launches the row kernel alone.
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
    `${T}* dy_part = nullptr;`,
    `const cudaError_t dy_err = dy_workspace(stream, (size_t)${per === undefined ? '(dy_rows + dy_tiles)' : `((dy_rows + dy_tiles) * ${per})`} * sizeof(${T}), (void**)&dy_part);`,
    'if (dy_err != cudaSuccess) return (int)dy_err;',
    `${T}* dy_carry = dy_part + dy_rows${per === undefined ? '' : ` * ${per}`};`,
    ...(K === undefined ? segLaunch : [`if (dy_K > 0) ${segLaunch[0]!}`, ...segLaunch.slice(1)]),
    launchLine(fix, '(unsigned)((dy_rows + 255) / 256)', '256', scratchArgs),
  ];
}

/**
 * The row kernel of the merge-path tile variants (256 threads, a row each): `before` and `after` around dy_e0,
 * then the rows' body with their segments combined (`body`, printed by an EpiloguePrinter).
 */
function mergeRowKernel(
  o: OpCode,
  name: string,
  scratch: string[],
  ptrC: string,
  i: string,
  before: string[],
  body: string[],
  after: string[] = [],
): string[] {
  return [
    `${kernelHead(o, name, 256, scratch)} {`,
    ...before,
    `  const int dy_e0 = ${ptrC}[dy_lo];`,
    ...after,
    ...rowLoop(i, 'dy_lo + ((long long)blockIdx.x * blockDim.x + threadIdx.x)', '(long long)gridDim.x * blockDim.x'),
    ...body,
    '  }',
    '}',
  ];
}

/** Diagonals of the merge path per block of mergeTiles (256 threads x MERGE_ITEMS). */
export const MERGE_TILE = 2048;
const MERGE_ITEMS = 8;

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
  const rowLines = mergeRowKernel(o, fix, scratch, ptrC, i, [], ep.block(top.body, '    '));
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
const MERGE_WARPS = 8;
const MERGE_WARP_ITEMS = 64;
/** Diagonals of the merge path per block of mergeTilesDense. */
export const MERGE_DENSE_TILE = MERGE_WARPS * MERGE_WARP_ITEMS;

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
  const rowLines = mergeRowKernel(o, fix, scratch, ptrC, i, [`  const int dy_K = ${K};`], ep.block(top.body, '    '), [
    '  (void)dy_K;',
  ]);
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

/** A merge walk's fold body with V columns a lane (vec-columns.ts). */
class JamPrinter extends StmtPrinter {
  readonly vectorBufs = new Set<string>();

  constructor(
    p: ExprPrinter,
    private readonly jam: ColumnJam,
    private readonly written: ReadonlySet<string>,
    /** The condition every store is made under ('' for none). */
    private readonly guard = '',
  ) {
    super(p);
  }

  override stmt(s: LStmt, ind: string): string[] {
    if ((s.k === 'let' || s.k === 'set' || s.k === 'store') && this.jam.touches(s))
      return jamStatement(jamContext(this, this.jam, this.written, this.vectorBufs, this.guard), s, ind);
    return super.stmt(s, ind);
  }

  override storeStmt(s: Extract<LStmt, { k: 'store' }>, ind: string): string[] {
    return this.guard === '' ? super.storeStmt(s, ind) : [`${ind}if (${this.guard}) ${this.storeLine(s)}`];
  }
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
  for (const v of [...new Set(Object.values(DENSE_VECTOR))].filter((x) => x > 1)) {
    const vt = vectorType(red.init.type, v);
    if (vt === undefined) continue;
    const jam = new ColumnJam(v, dense.var, dense.hi, 'dy_col');
    jam.replicate(red.init.var, acc);
    const jp = new JamPrinter(o.p, jam, o.written);
    const foldBody = jp.block(red.loop.body, '        ');
    if (jp.vectorBufs.size === 0) return undefined;
    const us = Array.from({ length: v }, (_, u) => u);
    const accs = us.map((u) => `dy_${acc}_${u}`);
    const heads = us.map((u) => `dy_head_${u}`);
    const carries = us.map((u) => `dy_c_${u}`);
    const store = (at: string, xs: string[]): string =>
      `if (dy_act) *reinterpret_cast<${vt}*>(&${at}) = make_${vt}(${xs.join(', ')});`;
    const back = (xs: string[], ind: string): string[] => [
      `${ind}for (int dy_u = dy_w - 1; dy_u >= 0 && dy_s_trow[dy_u] == ${xs === heads ? 'dy_head_row' : 'dy_key'}; --dy_u) {`,
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
      ...back(heads, '      '),
      `      ${store('dy_part[(long long)(dy_head_row - dy_lo) * dy_K + dy_col]', heads)}`,
      '    }',
      '    if (dy_w == dy_last && dy_key >= 0) {',
      `      ${T} ${carries.map((c, u) => `${c} = ${accs[u]!}`).join(', ')};`,
      ...back(carries, '      '),
      `      ${store('dy_carry[(long long)blockIdx.x * dy_K + dy_col]', carries)}`,
      '    }',
      '    __syncthreads();',
      '  }',
      '}',
    ];
    const aligned = ['dy_part', ...[...jp.vectorBufs].map((b) => o.names.buf(b).c)].map(
      (b) => `(reinterpret_cast<uintptr_t>(${b}) & 15u) == 0`,
    );
    return { device, kernel, v, cond: [`dy_K % ${v} == 0`, ...aligned].join(' && ') };
  }
  return undefined;
}

// ---------------------------------------------------------------- tiled

export function tiled(o: OpCode): Variant | undefined {
  const f = o.f;
  const top = topLoop(f);
  if (!top || isSparseOp(f) || !onlySizes(top.lo, f) || !onlySizes(top.hi, f)) return undefined;
  if (top.body.length !== 1 || top.body[0]!.k !== 'for') return undefined;
  const kl = top.body[0] as For;
  if (!isConst0(kl.lo) || !onlySizes(kl.hi, f)) return undefined;
  if (kl.body.length < 2) return undefined;
  const red = reductionAt(kl.body, 1);
  if (!red || kl.body[0] !== red.init) return undefined;
  const jl = red.loop;
  if (!isConst0(jl.lo) || !onlySizes(jl.hi, f) || jl.body.length !== 1 || jl.body[0]!.k !== 'set') return undefined;
  if (
    ![...freeVars(jl.body)].every(
      (v) => v === top.var || v === kl.var || v === jl.var || v === red.init.var || f.sizes.includes(v),
    )
  )
    return undefined;
  const [iv, kv, jv] = [top.var, kl.var, jl.var];
  const set = jl.body[0] as Extract<LStmt, { k: 'set' }>;
  // Loads of the dot-product body that depend on (i, j) or (j, k) only go through tiles.
  const tileA: LLoad[] = [];
  const tileB: LLoad[] = [];
  for (const e of loads(set.value)) {
    if (loads(e.index).length > 0) continue;
    const vs = exprVars(e.index);
    const nonSize = [...vs].filter((v) => !f.sizes.includes(v));
    if (!nonSize.includes(jv)) continue;
    if (nonSize.every((v) => v === iv || v === jv)) tileA.push(e);
    else if (nonSize.every((v) => v === kv || v === jv)) tileB.push(e);
  }
  if (tileA.length + tileB.length === 0) return undefined;
  const p = o.p;
  const name = `${o.base}_tiled`;
  const [I, Kc, J] = [p.var(iv), p.var(kv), p.var(jv)];
  const acc = p.var(red.init.var);
  const T = cType(red.init.type);
  const hook = new Map<LLoad, string>();
  const shared: string[] = [];
  const fills: string[] = [];
  tileA.forEach((e, n) => {
    const c = `dy_ta${n}`;
    const elem = p.names.buf(e.buf).elem;
    shared.push(`__shared__ ${elem === 'bool' ? 'int' : cType(elem)} ${c}[16][17];`);
    hook.set(e, `${c}[dy_ty][dy_t]`);
    fills.push(
      `    { const int ${I} = min(dy_i0 + dy_ty, dy_hi - 1); const int ${J} = min(dy_jb + dy_tx, dy_J - 1); ${c}[dy_ty][dy_tx] = ${p.load(e)}; }`,
    );
  });
  tileB.forEach((e, n) => {
    const c = `dy_tb${n}`;
    const elem = p.names.buf(e.buf).elem;
    shared.push(`__shared__ ${elem === 'bool' ? 'int' : cType(elem)} ${c}[16][17];`);
    hook.set(e, `${c}[dy_t][dy_tx]`);
    fills.push(
      `    { const int ${Kc} = min(dy_k0 + dy_tx, dy_K - 1); const int ${J} = min(dy_jb + dy_ty, dy_J - 1); ${c}[dy_ty][dy_tx] = ${p.load(e)}; }`,
    );
  });
  const tp = p.with(new Map(), (e) => hook.get(e));
  const rest = new StmtPrinter(p).block(kl.body.slice(2), '    ');
  const device = [
    `${kernelHead(o, name, 256, RANGE_PARAMS)} {`,
    ...indent(shared, '  '),
    '  const int dy_tx = (int)threadIdx.x, dy_ty = (int)threadIdx.y;',
    `  const int dy_K = ${o.host(kl.hi)}, dy_J = ${o.host(jl.hi)};`,
    '  const int dy_i0 = dy_lo + (int)blockIdx.x * 16, dy_k0 = (int)blockIdx.y * 16;',
    '  const bool dy_act = dy_i0 + dy_ty < dy_hi && dy_k0 + dy_tx < dy_K;',
    `  const int ${I} = min(dy_i0 + dy_ty, dy_hi - 1);`,
    `  const int ${Kc} = min(dy_k0 + dy_tx, dy_K - 1);`,
    `  ${T} ${acc} = ${p.as(red.init.value, red.init.type)};`,
    '  for (int dy_jb = 0; dy_jb < dy_J; dy_jb += 16) {',
    ...fills,
    '    __syncthreads();',
    '    for (int dy_t = 0, dy_n = min(16, dy_J - dy_jb); dy_t < dy_n; ++dy_t) {',
    `      const int ${J} = dy_jb + dy_t;`,
    `      (void)${J};`,
    `      ${acc} = ${tp.as(set.value, red.init.type)};`,
    '    }',
    '    __syncthreads();',
    '  }',
    '  if (dy_act) {',
    ...rest,
    '  }',
    '}',
  ];
  const launch = [
    ...clampLines(o, top),
    `const long long dy_rows = (long long)dy_hi - dy_lo, dy_cols = ${o.host(kl.hi)};`,
    'if (dy_rows <= 0 || dy_cols <= 0) return 0;',
    '// Row tiles on x, whose limit is 2^31 - 1 blocks (y allows 65535).',
    'if ((dy_rows + 15) / 16 > 2147483647LL || (dy_cols + 15) / 16 > 65535LL) return DYPE_ERR_TOO_LARGE;',
    launchLine(name, 'dim3((unsigned)((dy_rows + 15) / 16), (unsigned)((dy_cols + 15) / 16))', 'dim3(16, 16)', [
      ...o.args(),
      ...RANGE_ARGS,
    ]),
  ];
  return {
    name: 'tiled',
    cname: 'tiled',
    note: `16 x 16 output tiles; ${tileA.length + tileB.length} operand(s) of the dense reduction staged in shared-memory tiles`,
    device,
    launch,
    extra: [],
  };
}

// ---------------------------------------------------------------- elementwise

export function elementwise(o: OpCode): Variant | undefined {
  const f = o.f;
  const top = topLoop(f);
  if (!top || isSparseOp(f)) return undefined;
  const nest: For[] = [top];
  let inner = top.body;
  while (inner.length === 1 && inner[0]!.k === 'for') {
    nest.push(inner[0] as For);
    inner = (inner[0] as For).body;
  }
  let hasLoop = false;
  for (const s of inner) if (s.k === 'for' || s.k === 'if') hasLoop = true;
  if (hasLoop) return undefined;
  if (!nest.every((l) => onlySizes(l.lo, f) && onlySizes(l.hi, f))) return undefined;
  const name = `${o.base}_elementwise`;
  const p = o.p;
  // The top loop runs over the clamped range [dy_lo, dy_hi); the inner ones over their whole ranges.
  const ext = nest.map((l, n) =>
    n === 0
      ? 'const long long dy_n0 = (long long)dy_hi - dy_lo;'
      : `const long long dy_n${n} = (long long)(${o.host(l.hi)}) - (${o.host(l.lo)});`,
  );
  const decode: string[] = ['    long long dy_r = dy_e;'];
  for (let n = nest.length - 1; n >= 0; n--) {
    const l = nest[n]!;
    if (n === 0) decode.push(`    const int ${p.var(l.var)} = dy_lo + (int)dy_r;`);
    else
      decode.push(
        `    const int ${p.var(l.var)} = (${o.host(l.lo)}) + (int)(dy_r % dy_n${n});`,
        `    dy_r /= dy_n${n};`,
      );
  }
  const total = nest.map((_, n) => `dy_n${n}`).join(' * ');
  const device = [
    `${kernelHead(o, name, 256, RANGE_PARAMS)} {`,
    ...ext.map((l) => `  ${l}`),
    `  const long long dy_total = ${total};`,
    '  for (long long dy_e = (long long)blockIdx.x * blockDim.x + threadIdx.x; dy_e < dy_total; dy_e += (long long)gridDim.x * blockDim.x) {',
    ...decode,
    ...new StmtPrinter(p).block(inner, '    '),
    '  }',
    '}',
  ];
  const launch = [
    ...clampLines(o, top),
    ...ext,
    `if (${nest.map((_, n) => `dy_n${n} <= 0`).join(' || ')}) return 0;`,
    `const long long dy_total = ${total};`,
    'const long long dy_blocks = (dy_total + 255) / 256 < 1048576LL ? (dy_total + 255) / 256 : 1048576LL;',
    launchLine(name, '(unsigned)dy_blocks', '256', [...o.args(), ...RANGE_ARGS]),
  ];
  return {
    name: 'elementwise',
    cname: 'elementwise',
    note: `one thread per element of the ${nest.length}-deep dense nest (grid-stride, innermost index fastest)`,
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
    ? [adaptiveRows(o), warpPerRow(o), mergePath(o), rowPerThread(o)]
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
