/**
 * 128-bit SIMD by lanes of a loop variable: 4 (f32) or 2 (f64) consecutive
 * iterations k run at once, each lane doing exactly the scalar code's
 * operations in the scalar code's order, so results equal the scalar loop's
 * bit for bit. Two shapes profit:
 *   - SpMM / GEMM / elementwise, lanes over a dense column k:
 *     `for k { let acc = 0; for p { acc = acc + v[p] * T[j*h + k] }; H[i*h + k] = f(acc) }`
 *     (the interchange that puts k innermost keeps each lane's sum order);
 *   - SDDMM, lanes over consecutive entries p of a row:
 *     `for p { let j = colIdx[p]; let acc = 0; for k { acc = acc + Q[i*d + k] * K[j*d + k] }; S[p] = a[p] * acc }`
 *     where wasm has no gather instruction for `K[j*d + k]`: the inner loop
 *     over k runs by steps of 4 (f32) or 2 (f64) columns, each lane's row
 *     segment `K[j*d + k .. k+3]` read as one vector and the 4 x 4 (2 x 2)
 *     block transposed with shuffles, so step u finds every lane's column
 *     k + u in one vector (`transposedSteps`); the last d mod 4 columns are
 *     gathered lane by lane.
 * Blocks of 4, 2 and 1 vectors (16, 8, 4 f32 lanes) share one walk of the
 * inner loop; a scalar loop does the remainder.
 *
 * A loop qualifies when, with k its variable and "varying" meaning k or a
 * local whose value depends on k:
 *   - a varying local of the vector's element type (f32 or f64) holds one
 *     vector per block group; a varying index local that is never
 *     reassigned (an entry's column j) holds one scalar per lane; no local
 *     declared outside the loop is assigned in it;
 *   - stores go to base + k (base free of varying names) of buffers of the
 *     vector type that the loop does not read;
 *   - a varying value is built from +, -, *, /, neg, relu, abs, sqrt, min,
 *     max of that type, loads of buffers of that type (contiguous at
 *     base + k, else gathered), and k-free subexpressions (computed once per
 *     vector, then splat);
 *   - inner loops have k-free bounds; there is no `if`.
 * Not vectorised: SpMV (its accumulator is declared outside the entry loop:
 * a reduction over p, and reordering its sum would change the result), a
 * reduction over k itself (SDDMM's dot product), strided stores, host math.
 */
import type { LBuffer, LElem, LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import { hasLoad, indexCoefficient, mentionsAny as mentions, walkLExpr } from '../../ir/loops-walk.js';
import type { FnBuilder, Ref, WasmModule } from './binaryen.js';

type ForStmt = Extract<LStmt, { k: 'for' }>;
export type VecElem = 'f32' | 'f64';

export interface VectorPlan {
  elem: VecElem;
  /** Locals that hold one vector per group (declared inside the loop). */
  vectors: Set<string>;
  /** Index locals that vary with k (an entry's column j): one scalar per lane. */
  lanes: Set<string>;
  /** Some value needs per-lane scalars: a lane local, or a gathered load (lane by lane). */
  perLane: boolean;
  /**
   * Buffers read contiguously in k at a row reached through a loaded index (SpMM's B[colIdx[p], k]):
   * each entry reads a row of them from wherever it lies, which spread walks help (`SPREAD`).
   */
  rowGathered: Set<string>;
}

/** What the vectoriser needs of the scalar function emitter. */
export interface ScalarEmitter {
  readonly W: WasmModule;
  readonly F: FnBuilder;
  /** Emits e (free of varying names, apart from k inside indices) converted to `to`, in the current scopes. */
  as(e: LExpr, to: LElem): Ref;
  bufParam(name: string): number;
  bufElem(name: string): LElem;
  /** Runs fn with extra scalar names in scope. */
  scoped<T>(names: Map<string, { index: number; elem: LElem }>, fn: () => T): T;
  /** The scalar loop `for s.var in [lo, hi) s.body`. */
  scalarFor(s: ForStmt, lo: Ref, hi: Ref): Ref;
}

const LANES: Record<VecElem, number> = { f32: 4, f64: 2 };
/**
 * Vectors per block, widest first. Not 8 (K = 32 f32 in one walk): V8's
 * TurboFan places a block's loads ahead of its arithmetic, so 8 accumulators,
 * 8 loaded vectors and the splat outgrow x64's 15 allocatable xmm registers
 * and one accumulator lives on the stack, its add chain waiting on a store
 * and a reload every entry. Two walks of 4 ran SpMM K = 32 1.1-1.4x faster
 * on rows of 10 entries or more and the same on rows of 2 (bench/wasm-groups.ts,
 * docs/PERFORMANCE.md); the block of 2 keeps K = 24 at two walks.
 */
export const GROUPS: readonly number[] = [4, 2, 1];

/** Bytes of the widest block of columns (GROUPS[0] vectors of 16 bytes): the CPU model's dense trips are per block. */
export const WASM_BLOCK_BYTES = GROUPS[0]! * 16;
/**
 * Most walks sharing a block of the widest vectors in an op's spread function (then half as many,
 * down to 2). A walk of 4 vectors can start 4 of B's cache lines (64 bytes, 4 vectors each), so 4:
 * K = 64 f32 and K = 32 f64 take one block of 4 walks, K = 32 f32 one of 2. Rows of B from beyond
 * L2 ran 1.1-1.47x faster so, rows in L2 down to 0.62x (bench/wasm-groups.ts, docs/PERFORMANCE.md
 * *Spread walks*): the executor picks the function by B's bytes (runtime/wasm/spread.ts).
 */
export const SPREAD = 4;

// ---- analysis ----

/** An index expression of coefficient 1 in k (indexCoefficient) with k replaced by 0: index(k) = atZero + k. */
function atZero(e: LExpr, k: string): LExpr {
  if (e.k === 'var' && e.name === k) return { k: 'const', value: 0, type: 'index' };
  if (e.k === 'bin') return { ...e, lhs: atZero(e.lhs, k), rhs: atZero(e.rhs, k) };
  return e;
}

/**
 * The gathered loads of inner loop t that can be read by rows and transposed: t's body is lets and
 * sets only, and each load that varies by lane (SDDMM's K[j*d + kk], j an entry's column) has an
 * index of coefficient 1 in kk and mentions kk nowhere else. Empty when any varying load does not
 * qualify (the loop then keeps its lane-by-lane gathers).
 */
function transposable(t: ForStmt, varying: ReadonlySet<string>): LExpr[] {
  if (!t.body.every((x) => x.k === 'let' || x.k === 'set')) return [];
  // The rows are read once per step, ahead of the body: their indices may name nothing the body declares.
  const declared = new Set(t.body.flatMap((x) => (x.k === 'let' ? [x.var] : [])));
  const out: LExpr[] = [];
  let ok = true;
  // Loads inside a varying load's index make it fail below; those inside a lane-free one are lane-free.
  const visit = (e: LExpr): void =>
    walkLExpr(e, (x) => {
      if (x.k !== 'load' || !mentions(x.index, varying)) return;
      if (indexCoefficient(x.index, t.var, new Set([t.var])) === 1 && !hasLoad(x.index) && !mentions(x.index, declared))
        out.push(x);
      else ok = false;
    });
  for (const x of t.body) if (x.k === 'let' || x.k === 'set') visit(x.value);
  return ok ? out : [];
}

const bytesOf = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
/** Lanes of a and b interleaved by elements of `size` bytes: the low halves, or the high ones. */
function unpack(m: WasmModule['m'], a: Ref, b: Ref, size: 4 | 8, high: boolean): Ref {
  const o = high ? 8 : 0;
  const mask =
    size === 8
      ? [...bytesOf(o, 8), ...bytesOf(16 + o, 8)]
      : [...bytesOf(o, 4), ...bytesOf(16 + o, 4), ...bytesOf(o + 4, 4), ...bytesOf(20 + o, 4)];
  return m.i8x16.shuffle(a, b, mask);
}

/**
 * Rows (lane q's elements 0..L-1, in locals rows[q]) to columns (element u of every lane) set into
 * cols[u]; L = 4 (f32: two rounds of unpacks through the temporaries tmp[0..3]) or 2 (f64: one).
 */
function transpose(W: WasmModule, rows: number[], cols: number[], tmp: number[]): Ref[] {
  const m = W.m;
  const get = (l: number): Ref => m.local.get(l, W.b.v128);
  if (rows.length === 2)
    return [
      m.local.set(cols[0]!, unpack(m, get(rows[0]!), get(rows[1]!), 8, false)),
      m.local.set(cols[1]!, unpack(m, get(rows[0]!), get(rows[1]!), 8, true)),
    ];
  const [r0, r1, r2, r3] = rows as [number, number, number, number];
  const [t0, t1, t2, t3] = tmp as [number, number, number, number];
  return [
    m.local.set(t0, unpack(m, get(r0), get(r1), 4, false)), // r0[0] r1[0] r0[1] r1[1]
    m.local.set(t1, unpack(m, get(r0), get(r1), 4, true)), // r0[2] r1[2] r0[3] r1[3]
    m.local.set(t2, unpack(m, get(r2), get(r3), 4, false)),
    m.local.set(t3, unpack(m, get(r2), get(r3), 4, true)),
    m.local.set(cols[0]!, unpack(m, get(t0), get(t2), 8, false)), // r0[0] r1[0] r2[0] r3[0]
    m.local.set(cols[1]!, unpack(m, get(t0), get(t2), 8, true)),
    m.local.set(cols[2]!, unpack(m, get(t1), get(t3), 8, false)),
    m.local.set(cols[3]!, unpack(m, get(t1), get(t3), 8, true)),
  ];
}

function walk(ss: readonly LStmt[], visit: (s: LStmt) => void): void {
  for (const s of ss) {
    visit(s);
    if (s.k === 'for') walk(s.body, visit);
    else if (s.k === 'if') {
      walk(s.then, visit);
      if (s.else) walk(s.else, visit);
    }
  }
}

/** The memory region a buffer names (X and X.next are distinct regions; one value's buffers of one role and layout are one). */
function region(b: LBuffer): string {
  return `${b.of}${b.name.endsWith('.next') ? '.next' : ''}:${b.role}:${b.layout ?? ''}`;
}

/** Whether (and how) the loop s can run by vector lanes of its variable. */
export function planVector(s: ForStmt, buffers: readonly LBuffer[]): VectorPlan | undefined {
  const k = s.var;
  const buf = new Map(buffers.map((b) => [b.name, b]));
  const declared = new Map<string, LElem>();
  let ok = true;
  walk(s.body, (t) => {
    if (t.k === 'let') declared.set(t.var, t.type);
    else if (t.k === 'for') declared.set(t.var, 'index');
    else if (t.k === 'if') ok = false;
  });
  if (!ok || declared.has(k)) return undefined;
  // Varying names: k, then every local assigned a value that mentions one (to a fixed point).
  const varying = new Set([k]);
  for (let grew = true; grew;) {
    grew = false;
    walk(s.body, (t) => {
      if ((t.k === 'let' || t.k === 'set') && !varying.has(t.var) && mentions(t.value, varying)) {
        varying.add(t.var);
        grew = true;
      }
    });
  }
  const assigned = new Set<string>();
  walk(s.body, (t) => {
    if (t.k === 'set') assigned.add(t.var);
  });
  // Varying index locals (never reassigned) live as one scalar per lane; the rest are vectors.
  const lanes = new Set(
    [...varying].filter(
      (v) => v !== k && (declared.get(v) === 'index' || declared.get(v) === 'i32') && !assigned.has(v),
    ),
  );
  const vectors = new Set([...varying].filter((v) => v !== k && !lanes.has(v)));
  let perLane = lanes.size > 0;
  // The element type: that of the stores (all alike).
  const stored = new Set<string>();
  let elem: LElem | undefined;
  walk(s.body, (t) => {
    if (t.k !== 'store') return;
    const b = buf.get(t.buf);
    if (!b) ok = false;
    else {
      stored.add(region(b));
      if (elem === undefined) elem = b.elem;
      else if (elem !== b.elem) ok = false;
    }
  });
  if (!ok || (elem !== 'f32' && elem !== 'f64')) return undefined;
  const T: VecElem = elem;
  for (const v of vectors) if (declared.get(v) !== T) return undefined;

  // Type of a varying expression (varying locals are all of type T).
  const typeOf = (e: LExpr): LElem | undefined => {
    switch (e.k) {
      case 'var':
        return T;
      case 'load':
        return buf.get(e.buf)?.elem;
      case 'cast':
        return e.to;
      case 'const':
        return e.type;
      default:
        return e.type;
    }
  };
  const index = (e: LExpr): boolean => indexCoefficient(e, k, varying) === 1;
  // Locals an inner loop (a walk over a row's entries) declares from a loaded value, or from one such
  // (an entry's column j = colIdx[p]): a contiguous load there at a row through them reads a new row each trip.
  const loaded = new Set<string>();
  for (const t of s.body)
    if (t.k === 'for')
      walk(t.body, (x) => {
        if (x.k === 'let' && (hasLoad(x.value) || mentions(x.value, loaded))) loaded.add(x.var);
      });
  const rowGathered = new Set<string>();
  let depth = 0;
  // Contiguous (base + k), or gathered lane by lane when the index varies otherwise (but not with a vector).
  const loadOk = (e: Extract<LExpr, { k: 'load' }>): boolean => {
    const b = buf.get(e.buf);
    if (!b || b.elem !== T || stored.has(region(b))) return false;
    if (index(e.index)) {
      if (depth > 0 && (hasLoad(e.index) || mentions(e.index, loaded))) rowGathered.add(e.buf);
      return true;
    }
    if (mentions(e.index, vectors)) return false;
    perLane = true;
    return true;
  };
  const readsOk = (e: LExpr): boolean => {
    if (e.k === 'load') {
      const b = buf.get(e.buf);
      if (!b || stored.has(region(b))) return false;
    }
    return children(e).every(readsOk);
  };
  // A varying value of type T that lanes can compute.
  const value = (e: LExpr): boolean => {
    // k-free, but its loads must not read what the loop writes.
    if (!mentions(e, varying)) return readsOk(e);
    switch (e.k) {
      case 'var':
        return vectors.has(e.name);
      case 'load':
        return loadOk(e);
      case 'bin':
        return (
          e.type === T &&
          (e.op === '+' || e.op === '-' || e.op === '*' || e.op === '/' || e.op === 'idiv') &&
          value(e.lhs) &&
          value(e.rhs)
        );
      case 'un':
        return e.type === T && e.op === 'neg' && value(e.arg);
      case 'call':
        return e.type === T && ['relu', 'abs', 'sqrt', 'min', 'max'].includes(e.fn) && e.args.every(value);
      case 'cast':
        return e.to === T && value(e.arg) && typeOf(e.arg) === T;
      default:
        return false;
    }
  };
  const stmts = (ss: readonly LStmt[]): boolean =>
    ss.every((t) => {
      switch (t.k) {
        case 'let':
          if (vectors.has(t.var)) return value(t.value);
          if (lanes.has(t.var)) return !mentions(t.value, vectors) && readsOk(t.value);
          return !mentions(t.value, varying) && value(t.value);
        case 'set':
          // Only accumulators: a scalar assigned in the loop would be assigned once per vector instead of once per k.
          return vectors.has(t.var) && declared.has(t.var) && value(t.value);
        case 'for': {
          if (mentions(t.lo, varying) || mentions(t.hi, varying)) return false;
          depth++;
          const ok = stmts(t.body);
          depth--;
          return ok;
        }
        case 'store':
          return index(t.index) && value(t.value);
        case 'if':
          return false;
      }
    });
  // A local declared twice (shadowing) would confuse the vector/scalar split.
  let lets = 0;
  walk(s.body, (t) => {
    if (t.k === 'let' || t.k === 'for') lets++;
  });
  if (lets !== declared.size) return undefined;
  return stmts(s.body) ? { elem: T, vectors, lanes, perLane, rowGathered } : undefined;
}

function children(e: LExpr): LExpr[] {
  switch (e.k) {
    case 'const':
    case 'var':
      return [];
    case 'load':
      return [e.index];
    case 'bin':
      return [e.lhs, e.rhs];
    case 'un':
    case 'cast':
      return [e.arg];
    case 'call':
      return e.args;
    case 'select':
      return [e.cond, e.then, e.else];
  }
}

/** Whether a planned loop takes spread walks: it reads rows through loaded indices, and no value is per lane. */
const spreads = (p: VectorPlan): boolean => !p.perLane && p.rowGathered.size > 0;

/**
 * The buffers of f that its vector loops read by rows through loaded indices, in spread walks (the loops the
 * emitter vectorises: at each loop, planVector's plan, else the loops inside). Empty: spread walks change
 * nothing in f.
 */
export function spreadBuffers(f: LoopFunc): string[] {
  const out = new Set<string>();
  const visit = (ss: readonly LStmt[]): void => {
    for (const s of ss) {
      if (s.k === 'for') {
        const p = planVector(s, f.buffers);
        if (p) {
          if (spreads(p)) for (const b of p.rowGathered) out.add(b);
        } else visit(s.body);
      } else if (s.k === 'if') {
        visit(s.then);
        if (s.else) visit(s.else);
      }
    }
  };
  visit(f.body);
  return [...out].sort();
}

// ---- emission ----

/** A vector value: statements computing shared parts once, then group g's vector. */
interface VNode {
  pre: Ref[];
  get: (g: number) => Ref;
}

/** Emits a planned loop: vector blocks of `blocks` vectors (GROUPS unless a benchmark says otherwise), then the scalar remainder. */
export class VectorLoop {
  private readonly lanes: number;
  private readonly bytes: number;
  /** log2 of bytes: an element index to a byte offset. */
  private readonly shift: number;
  private vec = new Map<string, number[]>();
  private varying: Set<string>;
  /** Per-lane scalars of the current block: k + q, and each lane local, by lane q. */
  private laneK: number[] = [];
  private laneVars = new Map<string, number[]>();
  /** Per buffer read contiguously in the current block: a local holding its base + k0 * bytes, set once per block. */
  private kBases = new Map<string, number>();
  /** Gathered loads of an inner loop unrolled by lanes: per load, per group, per step u the transposed vector's local. */
  private transposed = new Map<LExpr, number[][]>();
  private step = 0;
  /** Byte offset of group g's vector from the block's k0 (g * 16, or spread across a walk's cache lines). */
  private offset: (g: number) => number = (g) => g * 16;

  constructor(
    private readonly S: ScalarEmitter,
    private readonly s: ForStmt,
    private readonly plan: VectorPlan,
    private readonly blocks: readonly number[],
    private readonly spread: number = 1,
  ) {
    this.lanes = LANES[plan.elem];
    this.bytes = plan.elem === 'f32' ? 4 : 8;
    this.shift = plan.elem === 'f32' ? 2 : 3;
    this.varying = new Set([s.var, ...plan.vectors, ...plan.lanes]);
  }

  emit(lo: Ref, hi: Ref): Ref {
    const { W, F } = this.S;
    const m = W.m;
    const k0 = F.local('index');
    const end = F.local('index');
    const gk = (): Ref => F.get(k0, 'index');
    const out: Ref[] = [F.set(k0, lo), F.set(end, hi)];
    // Spread walks (contiguous loads only): w walks of the entries share one block of w * G
    // vectors, walk r taking vectors r, r + w, ...: the first walk then reaches every cache line
    // of B's row that the block reads (4 vectors a line), the later walks find them in L1.
    // Blocks of spread, spread / 2, ... down to 2 walks come first, then the plain blocks.
    const stages: [number, number][] = [];
    if (spreads(this.plan)) for (let w = this.spread; w > 1; w >>= 1) stages.push([this.blocks[0]!, w]);
    for (const G of this.blocks) stages.push([G, 1]);
    for (const [G, walks] of stages) {
      const step = G * walks * this.lanes;
      const b = F.label('VB');
      const l = F.label('VL');
      const prefix: Ref[] = [];
      this.laneVars = new Map();
      this.laneK = [];
      if (this.plan.perLane) {
        for (let q = 0; q < step; q++) {
          const l = F.local('index');
          this.laneK.push(l);
          prefix.push(F.set(l, m.i32.add(gk(), m.i32.const(q))));
        }
      }
      this.kBases = new Map();
      const stmts: Ref[] = [];
      for (let r = 0; r < walks; r++) {
        this.offset = (g) => (r + walks * g) * 16;
        stmts.push(
          ...this.S.scoped(new Map([[this.s.var, { index: k0, elem: 'index' as LElem }]]), () =>
            this.stmts(this.s.body, G),
          ),
        );
      }
      this.offset = (g) => g * 16;
      const shift = m.i32.const(this.shift);
      const bases = [...this.kBases].map(([buf, l]) =>
        F.set(l, m.i32.add(F.get(this.S.bufParam(buf), 'i32'), m.i32.shl(gk(), shift))),
      );
      const body = [...prefix, ...bases, ...stmts];
      out.push(
        m.block(b, [
          m.loop(
            l,
            m.block(null, [
              m.br_if(b, m.i32.lt_s(m.i32.sub(F.get(end, 'index'), gk()), m.i32.const(step))),
              ...body,
              F.set(k0, m.i32.add(gk(), m.i32.const(step))),
              m.br(l),
            ]),
          ),
        ]),
      );
    }
    out.push(this.S.scalarFor(this.s, gk(), F.get(end, 'index')));
    return m.block(null, out);
  }

  /**
   * The inner loop t (variable kk) by steps of `lanes`, while a whole step is left: each gathered
   * load in `rows` (index = per-lane base + kk) is read as one vector per lane (that lane's
   * elements kk .. kk + lanes - 1, which the scalar loop reads too) and transposed in registers,
   * so step u finds lane q's element kk + u in vector u. The body then runs once per u in order:
   * each lane does the scalar code's operations in its order (same bits). Leaves v where the
   * remainder (fewer than `lanes` iterations, done by the caller's per-lane gather loop) starts.
   */
  private transposedSteps(t: ForStmt, rows: LExpr[], v: number, e: number, G: number): Ref {
    const { W, F } = this.S;
    const m = W.m;
    const L = this.lanes;
    const b = F.label('TB');
    const l = F.label('TL');
    const ks = Array.from({ length: L }, () => F.local('index'));
    const pre: Ref[] = ks.map((kq, u) => F.set(kq, m.i32.add(F.get(v, 'index'), m.i32.const(u))));
    const saved = this.transposed;
    this.transposed = new Map(saved);
    for (const x of rows) {
      if (x.k !== 'load') continue;
      const perGroup: number[][] = [];
      for (let g = 0; g < G; g++) {
        const rs = Array.from({ length: L }, (_, q) => {
          const at = this.S.scoped(new Map([[t.var, { index: v, elem: 'index' as LElem }]]), () =>
            this.S.scoped(this.lane(g * L + q), () => this.address(x.buf, x.index)),
          );
          const r = F.vlocal();
          pre.push(m.local.set(r, m.v128.load(0, this.bytes, at)));
          return r;
        });
        const cs = Array.from({ length: L }, () => F.vlocal());
        const tmp = L === 4 ? Array.from({ length: 4 }, () => F.vlocal()) : [];
        pre.push(...transpose(W, rs, cs, tmp));
        perGroup.push(cs);
      }
      this.transposed.set(x, perGroup);
    }
    const body: Ref[] = [];
    for (let u = 0; u < L; u++) {
      this.step = u;
      body.push(
        ...this.S.scoped(new Map([[t.var, { index: ks[u]!, elem: 'index' as LElem }]]), () => this.stmts(t.body, G)),
      );
    }
    this.transposed = saved;
    this.step = 0;
    return m.block(b, [
      m.loop(
        l,
        m.block(null, [
          m.br_if(b, m.i32.lt_s(m.i32.sub(F.get(e, 'index'), F.get(v, 'index')), m.i32.const(L))),
          ...pre,
          ...body,
          F.set(v, m.i32.add(F.get(v, 'index'), m.i32.const(L))),
          m.br(l),
        ]),
      ),
    ]);
  }

  /** Names as lane q sees them: k is k0 + q, a lane local its q-th scalar. */
  private lane(q: number): Map<string, { index: number; elem: LElem }> {
    const b = new Map<string, { index: number; elem: LElem }>([[this.s.var, { index: this.laneK[q]!, elem: 'index' }]]);
    for (const [n, ls] of this.laneVars) b.set(n, { index: ls[q]!, elem: 'index' });
    return b;
  }

  private vlocals(name: string, G: number): number[] {
    let ls = this.vec.get(name);
    if (!ls || ls.length !== G) {
      ls = Array.from({ length: G }, () => this.S.F.vlocal());
      this.vec.set(name, ls);
    }
    return ls;
  }

  private stmts(ss: readonly LStmt[], G: number): Ref[] {
    const { W, F } = this.S;
    const m = W.m;
    const out: Ref[] = [];
    // Scalars declared in this block, visible to its later statements (the map fills as it goes).
    const scalars = new Map<string, { index: number; elem: LElem }>();
    this.S.scoped(scalars, () => {
      for (const t of ss) {
        switch (t.k) {
          case 'let':
          case 'set': {
            if (this.plan.vectors.has(t.var)) {
              // A fresh set of locals (one per group) for each `let`; `set` reuses them.
              if (t.k === 'let') this.vec.delete(t.var);
              const ls = this.vlocals(t.var, G);
              const v = this.value(t.value, G);
              out.push(...v.pre, ...ls.map((l, g) => m.local.set(l, v.get(g))));
            } else if (t.k === 'let' && this.plan.lanes.has(t.var)) {
              const ls = this.laneK.map((_, q) => {
                const l = F.local(t.type);
                out.push(
                  F.set(
                    l,
                    this.S.scoped(this.lane(q), () => this.S.as(t.value, t.type)),
                  ),
                );
                return l;
              });
              this.laneVars.set(t.var, ls);
            } else if (t.k === 'let') {
              const l = F.local(t.type);
              out.push(F.set(l, this.S.as(t.value, t.type)));
              scalars.set(t.var, { index: l, elem: t.type });
            } else throw new Error(`wasm emitter: simd: scalar '${t.var}' assigned in a vector loop`);
            break;
          }
          case 'for': {
            const lo = this.S.as(t.lo, 'index');
            const hi = this.S.as(t.hi, 'index');
            const v = F.local('index');
            const e = F.local('index');
            // Where its gathered rows can be transposed, whole steps of lanes first; the loop below does the rest.
            const rows = this.plan.perLane ? transposable(t, this.varying) : [];
            if (rows.length) out.push(F.set(v, lo), F.set(e, hi), this.transposedSteps(t, rows, v, e, G));
            const body = this.S.scoped(new Map([[t.var, { index: v, elem: 'index' as LElem }]]), () =>
              this.stmts(t.body, G),
            );
            out.push(
              rows.length ? F.forLoop(v, e, F.get(v, 'index'), F.get(e, 'index'), body) : F.forLoop(v, e, lo, hi, body),
            );
            break;
          }
          case 'store': {
            const a = F.local('index');
            const v = this.value(t.value, G);
            out.push(...v.pre, F.set(a, this.address(t.buf, t.index)));
            for (let g = 0; g < G; g++) out.push(m.v128.store(this.offset(g), this.bytes, F.get(a, 'index'), v.get(g)));
            break;
          }
          case 'if':
            throw new Error('wasm emitter: simd: unexpected if');
        }
      }
    });
    return out;
  }

  /** Byte address of element `index` (at k = k0) of buffer buf. */
  private address(buf: string, index: LExpr): Ref {
    const { W, F } = this.S;
    const m = W.m;
    return m.i32.add(F.get(this.S.bufParam(buf), 'i32'), m.i32.shl(this.S.as(index, 'index'), m.i32.const(this.shift)));
  }

  private contiguous(index: LExpr): boolean {
    return indexCoefficient(index, this.s.var, this.varying) === 1;
  }

  private splat(x: Ref): Ref {
    const m = this.S.W.m;
    return this.plan.elem === 'f32' ? m.f32x4.splat(x) : m.f64x2.splat(x);
  }

  private value(e: LExpr, G: number): VNode {
    const { W, F } = this.S;
    const m = W.m;
    const V = this.plan.elem === 'f32' ? m.f32x4 : m.f64x2;
    const T = this.plan.elem;
    if (!mentions(e, this.varying)) {
      const l = F.vlocal();
      // An element of the vector's type read once and splat (SpMM's entry value): one load-splat
      // instruction (vbroadcastss from memory) instead of a scalar load and a splat; same bits.
      const x =
        e.k === 'load' && this.S.bufElem(e.buf) === T
          ? (T === 'f32' ? m.v128.load32_splat : m.v128.load64_splat)(0, this.bytes, this.address(e.buf, e.index))
          : this.splat(this.S.as(e, T));
      return { pre: [m.local.set(l, x)], get: () => m.local.get(l, W.b.v128) };
    }
    switch (e.k) {
      case 'var': {
        const ls = this.vec.get(e.name)!;
        return { pre: [], get: (g) => m.local.get(ls[g]!, W.b.v128) };
      }
      case 'load': {
        const tr = this.transposed.get(e);
        if (tr) {
          const u = this.step;
          return { pre: [], get: (g) => m.local.get(tr[g]![u]!, W.b.v128) };
        }
        if (!this.contiguous(e.index)) {
          // A gather: lane by lane, each lane's index as the scalar code computes it.
          const one = (q: number): Ref =>
            this.S.scoped(this.lane(q), () =>
              W.load(T, F.get(this.S.bufParam(e.buf), 'i32'), this.S.as(e.index, 'index')),
            );
          return {
            pre: [],
            get: (g) => {
              let v = this.splat(one(g * this.lanes));
              for (let l = 1; l < this.lanes; l++) v = V.replace_lane(v, l, one(g * this.lanes + l));
              return v;
            },
          };
        }
        // base + (index at k = 0) * bytes, the base moved by k0 once per block: the loop of entries
        // inside then computes one product and no add per load (V8 does not hoist the k0 term itself).
        let kb = this.kBases.get(e.buf);
        if (kb === undefined) this.kBases.set(e.buf, (kb = F.local('index')));
        const a = F.local('index');
        const at = m.i32.add(
          F.get(kb, 'index'),
          m.i32.shl(this.S.as(atZero(e.index, this.s.var), 'index'), m.i32.const(this.shift)),
        );
        return {
          pre: [F.set(a, at)],
          get: (g) => m.v128.load(this.offset(g), this.bytes, F.get(a, 'index')),
        };
      }
      case 'cast':
        return this.value(e.arg, G);
      case 'un': {
        const x = this.value(e.arg, G);
        return { pre: x.pre, get: (g) => V.neg(x.get(g)) };
      }
      case 'bin': {
        const a = this.value(e.lhs, G);
        const b = this.value(e.rhs, G);
        const op = { '+': V.add, '-': V.sub, '*': V.mul, '/': V.div, idiv: V.div }[e.op as '+'];
        return { pre: [...a.pre, ...b.pre], get: (g) => op(a.get(g), b.get(g)) };
      }
      case 'call': {
        const xs = e.args.map((x) => this.value(x, G));
        const pre = xs.flatMap((x) => x.pre);
        switch (e.fn) {
          case 'relu': {
            // max(x, +0), as the scalar code: NaN stays NaN, -0 becomes +0.
            const zero = F.vlocal();
            return {
              pre: [...pre, m.local.set(zero, this.splat(W.constant(0, T)))],
              get: (g) => V.max(xs[0]!.get(g), m.local.get(zero, W.b.v128)),
            };
          }
          case 'abs':
            return { pre, get: (g) => V.abs(xs[0]!.get(g)) };
          case 'sqrt':
            return { pre, get: (g) => V.sqrt(xs[0]!.get(g)) };
          case 'min':
            return { pre, get: (g) => V.min(xs[0]!.get(g), xs[1]!.get(g)) };
          case 'max':
            return { pre, get: (g) => V.max(xs[0]!.get(g), xs[1]!.get(g)) };
          default:
            throw new Error(`wasm emitter: simd: unexpected ${e.fn}`);
        }
      }
      default:
        throw new Error(`wasm emitter: simd: unexpected ${e.k}`);
    }
  }
}
