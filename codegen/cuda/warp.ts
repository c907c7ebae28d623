/**
 * warp-per-row, and WarpPrinter, the row body printed for a warp (or a group
 * or block of lanes) that adaptive-rows' kernels also use: lanes split
 * reductions (shuffle-combined) and independent loops, entries are staged
 * through shared memory, and SpMM-shaped column loops get vector columns
 * (vec-columns.ts). See variants.ts for the schedules together.
 */
import type { LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import { ADAPTIVE_LANES, GPU_SCHEDULE } from '../../runtime/catalogue/gpu.js';
import { columnShape } from '../c/columns.js';
import { cType, ExprPrinter, StmtPrinter, type LLoad } from './cprint.js';
import { ColumnJam, jamContext, jamStatement, vectorType, aligned16, VECTOR_WIDTHS } from './vec-columns.js';
import {
  declared,
  entryLoopOf,
  exprVars,
  freeVars,
  isConst0,
  loads,
  onlySizes,
  outerSets,
  reductionAt,
  topLoop,
  writtenBuffers,
  type For,
  type Reduction,
} from './nest.js';
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
  rowLoop,
  rangeLines,
  grid,
} from './variant.js';

// ---------------------------------------------------------------- warp-per-row

/** How WarpPrinter puts lanes on a row (see its constructor). */
export interface LaneSplit {
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

/** Threads of adaptive-rows' long-row blocks (the catalogue counts their walks: runtime/catalogue/gpu.ts laneSteps). */
export const BLOCK_LANES = GPU_SCHEDULE.blockLanes;
/** adaptive-rows sends a row to a block of its own when its group would take more than this many steps. */
export const LONG_ROW_STEPS = ADAPTIVE_LANES.longRowSteps;
/** Blocks of the long-row kernel at most (each loops over the queued rows). */
export const LONG_ROW_BLOCKS = 1024;

/** Prints a row body for a warp: lanes split reductions and independent loops; see the file header. */
export class WarpPrinter extends StmtPrinter {
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
      // One copy a buffer per kernel: walks of a row follow one another (each ends at a __syncwarp) and never
      // nest (a walk's body is not converged), so a second walk of the same entries reuses the first's copy.
      const decl = `__shared__ ${elem === 'bool' ? 'int' : cType(elem)} ${c}[8][32];`;
      if (!this.shared.includes(decl)) this.shared.push(decl);
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

export function varOfLoad(e: LExpr): string {
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
export function vectorPrinter(
  o: OpCode,
  top: For,
  lanes: LaneSplit,
): { wp: WarpPrinter; body: string[]; v: number } | undefined {
  for (const v of VECTOR_WIDTHS) {
    const wp = new WarpPrinter(o.p, o.f, { ...lanes, vec: v });
    const body = wp.block(top.body, '    ');
    if (wp.vectorBufs.size > 0) return { wp, body, v };
  }
  return undefined;
}

/** The host condition for a vector kernel: V divides every vector loop's width, every vector buffer is 16-byte aligned. */
export function vectorCondition(o: OpCode, wp: WarpPrinter, v: number): string {
  const widths = [...new Set(wp.vectorWidths.map((w) => o.host(w)))].map((w) => `${paren(w)} % ${v} == 0`);
  const aligned = [...wp.vectorBufs].map((b) => aligned16(o.names.buf(b).c));
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
