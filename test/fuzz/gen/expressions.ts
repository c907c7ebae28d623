/**
 * The expressions of generated programs: reads of the values in scope,
 * literals, every operator and function, selects and conditions, and
 * reductions over a sparse row or column or a dense dim. The statements
 * around them are generator.ts's.
 */
import { chance, pick, type Rng, weighted } from '../util.js';
import { Checker, type Info, isExt, paramInfo } from './checker.js';
import {
  bin,
  implicitOk,
  isFloat,
  lit,
  MAX_EXTENT,
  NUMS,
  ref,
  type BinaryOp,
  type Dim,
  type Node,
  type Num,
  type Program,
  type ReduceOp,
  type Ty,
  type UnaryOp,
  type Val,
} from './program.js';

export interface Ctx {
  /** Index letters in scope and the dim each ranges over. */
  letters: Map<string, Dim>;
  /** The sparse value whose entries the innermost driven reduction (or the sparse result) visits. */
  sparse?: { pattern: string; row: string; col: string };
  /** Letters taken anywhere in the statement (an implicitly summed index must occur nowhere else). */
  used: Set<string>;
}

/** Index letters for reductions (i, j and c index the left side). */
const LETTERS = ['j', 'p', 'q', 'r', 'u', 'v', 'a', 'b', 'd', 'g', 'h', 'l'];

/** Draws expressions over the values a program has so far, keeping them where the checker allows. */
export class Expressions {
  readonly vals = new Map<string, Val>();
  readonly check: Checker;

  constructor(
    readonly rng: Rng,
    readonly p: Program,
  ) {
    for (const v of p.params) this.vals.set(v.name, v);
    this.check = new Checker(new Map(p.params.map((v) => [v.name, paramInfo(v)])), (d) =>
      d === 'k' ? MAX_EXTENT.k : MAX_EXTENT.rows,
    );
  }

  protected get ty(): Num {
    return this.p.ty;
  }

  protected dims(): Dim[] {
    return [...new Set(this.p.params.flatMap((v) => v.dims))];
  }

  protected sparseVals(pattern?: string): Val[] {
    return [...this.vals.values()].filter((v) => v.pattern && (pattern === undefined || v.pattern === pattern));
  }

  /** One value of each pattern. */
  protected patterns(): Val[] {
    const seen = new Map<string, Val>();
    for (const v of this.sparseVals()) if (!seen.has(v.pattern!)) seen.set(v.pattern!, v);
    return [...seen.values()];
  }

  protected infoOf(e: Node, ty: Ty): Info {
    const c = new Checker(this.check.env, this.check.extent);
    return c.info(e, ty);
  }

  protected fresh(ctx: Ctx): string {
    const l = LETTERS.find((x) => !ctx.used.has(x) && !ctx.letters.has(x))!;
    ctx.used.add(l);
    return l;
  }

  /** `v` indexed by letters in scope (a letter given first where it fits), or undefined where it cannot be. */
  protected access(v: Val, ctx: Ctx, first?: string): Node | undefined {
    if (v.pattern)
      return ctx.sparse && ctx.sparse.pattern === v.pattern ? ref(v.name, [ctx.sparse.row, ctx.sparse.col]) : undefined;
    const taken = new Set<string>();
    const idx: string[] = [];
    for (const d of v.dims) {
      const options = [...ctx.letters].filter(([l, x]) => x === d && !taken.has(l)).map(([l]) => l);
      if (options.length === 0) return undefined;
      const l = first !== undefined && options.includes(first) && !taken.has(first) ? first : pick(this.rng, options);
      taken.add(l);
      idx.push(l);
    }
    if (first !== undefined && !idx.includes(first)) return undefined;
    return ref(v.name, idx);
  }

  protected refs(ctx: Ctx, ty: Ty, pred: (v: Val) => boolean = () => true): Node[] {
    return [...this.vals.values()]
      .filter((v) => v.ty === ty && pred(v))
      .map((v) => this.access(v, ctx))
      .filter((x): x is Node => x !== undefined);
  }

  protected literal(ty: Num): Node {
    if (isFloat(ty))
      return lit(pick(this.rng, ['0', '1', '2', '3', '0.5', '0.25', '1.5', '-1', '0.3', '-0.7', 'inf', '-inf']));
    if (ty === 'i32' && chance(this.rng, 0.1)) return lit(pick(this.rng, ['2147483647', '-2147483648', '65536']));
    return lit(pick(this.rng, ['0', '1', '2', '3', '-1', '5']));
  }

  protected leaf(ctx: Ctx, ty: Num): Node {
    // i64 extremes (empty min/max rows) stay out of arithmetic: see Info.
    const refs = this.refs(ctx, ty, (v) => ty !== 'i64' || !isExt(this.check.env.get(v.name)));
    const r = this.rng.next();
    if (refs.length > 0 && r < 0.72) return pick(this.rng, refs);
    if (r < 0.86) return this.literal(ty);
    return { k: 'dim', name: pick(this.rng, this.dims()) };
  }

  expr(ctx: Ctx, ty: Num, depth: number): Node {
    const r = this.rng.next();
    if (depth <= 0 || r < 0.2) return this.leaf(ctx, ty);
    if (r < 0.34) return this.unary(ty, this.expr(ctx, ty, depth - 1));
    if (r < 0.66) return this.binary(ctx, ty, depth);
    if (r < 0.74)
      return {
        k: 'sel',
        c: this.cond(ctx, depth - 1),
        a: this.expr(ctx, ty, depth - 1),
        b: this.expr(ctx, ty, depth - 1),
      };
    return this.reduction(ctx, ty, depth - 1) ?? this.binary(ctx, ty, depth);
  }

  unary(ty: Num, a: Node): Node {
    const i = this.infoOf(a, ty);
    if (!isFloat(ty))
      return { k: 'un', op: ty === 'i64' && isExt(i) ? 'relu' : pick(this.rng, ['neg', 'abs', 'relu']), a };
    let op = pick(this.rng, [
      'neg',
      'abs',
      'relu',
      'exp',
      'log1',
      'sqrt',
      'tanh',
      'sigmoid',
      'pow2',
      'pow3',
      'powHalf',
      'powInv',
    ] as const satisfies readonly UnaryOp[]) as UnaryOp;
    if (op === 'exp' && i.mag > 10) op = 'tanh';
    if (op === 'sqrt' && !i.exact) op = 'sqrt1';
    if ((op === 'pow2' && i.mag > 1000) || (op === 'pow3' && i.mag > 100)) op = 'log1';
    return { k: 'un', op, a };
  }

  binary(ctx: Ctx, ty: Num, depth: number): Node {
    const a = this.expr(ctx, ty, depth - 1);
    let op = weighted(this.rng, [
      [3, '+'],
      [2, '-'],
      [3, '*'],
      [1.2, '/'],
      [1, 'min'],
      [1, 'max'],
    ] as const) as BinaryOp;
    if (op === '/') {
      if (!isFloat(ty))
        return bin(
          '/',
          a,
          chance(this.rng, 0.5) ? lit(pick(this.rng, ['0', '-1', '2', '3'])) : this.expr(ctx, ty, depth - 1),
        );
      const r = this.rng.next();
      const divisor =
        r < 0.4
          ? lit(pick(this.rng, ['2', '4', '3', '0.5']))
          : r < 0.6
            ? ({ k: 'dim', name: pick(this.rng, this.dims()) } as Node)
            : bin('+', { k: 'un', op: 'abs', a: this.expr(ctx, ty, depth - 1) }, lit('1'));
      return bin('/', a, divisor);
    }
    const b = this.expr(ctx, ty, depth - 1);
    const [ia, ib] = [this.infoOf(a, ty), this.infoOf(b, ty)];
    if (ty === 'i64' && (isExt(ia) || isExt(ib))) op = chance(this.rng, 0.5) ? 'min' : 'max';
    if (
      op === '*' &&
      ia.mag * ib.mag > (ty === 'i64' ? 2 ** 40 : isFloat(ty) && !(ia.exact && ib.exact) ? 1e4 : Infinity)
    )
      op = '+';
    return chance(this.rng, 0.5) ? bin(op, a, b) : bin(op, b, a);
  }

  /** Values f32 computes exactly (see Info), in dtype ty. */
  protected exactRefs(ctx: Ctx, ty: Num): Node[] {
    return this.refs(ctx, ty, (v) => !!this.check.env.get(v.name)?.exact);
  }

  protected exactExpr(ctx: Ctx, ty: Num): Node | undefined {
    const leaves = this.exactRefs(ctx, ty);
    if (leaves.length === 0) return undefined;
    const a = pick(this.rng, leaves);
    if (chance(this.rng, 0.6)) return a;
    const op = pick(this.rng, ['+', '-', '*', 'min', 'max'] as const);
    const e = chance(this.rng, 0.3)
      ? ({ k: 'un', op: pick(this.rng, ['abs', 'neg', 'relu'] as const), a } as Node)
      : bin(op, a, chance(this.rng, 0.5) ? pick(this.rng, leaves) : this.literal(ty));
    const i = this.infoOf(e, ty);
    return i.exact && !(ty === 'i64' && isExt(i)) ? e : a;
  }

  compare(ctx: Ctx): Node {
    const tys = NUMS.filter((t) => this.exactRefs(ctx, t).length > 0);
    const ty =
      tys.includes(this.ty) && chance(this.rng, 0.6) ? this.ty : tys.length > 0 ? pick(this.rng, tys) : this.ty;
    const a = this.exactExpr(ctx, ty) ?? ({ k: 'dim', name: pick(this.rng, this.dims()) } as Node);
    const b = chance(this.rng, 0.6) ? this.literal(ty) : (this.exactExpr(ctx, ty) ?? this.literal(ty));
    return { k: 'cmp', ty, op: pick(this.rng, ['<', '<=', '>', '>=', '==', '!='] as const), a, b };
  }

  cond(ctx: Ctx, depth: number): Node {
    const bools = this.refs(ctx, 'bool');
    const r = this.rng.next();
    if (bools.length > 0 && r < 0.2) return pick(this.rng, bools);
    if (depth > 0 && r < 0.3)
      return {
        k: 'logic',
        op: pick(this.rng, ['&&', '||'] as const),
        a: this.cond(ctx, depth - 1),
        b: this.cond(ctx, depth - 1),
      };
    if (depth > 0 && r < 0.36) return { k: 'not', a: this.cond(ctx, depth - 1) };
    if (depth > 0 && r < 0.55) {
      const red = this.boolReduction(ctx);
      if (red) return red;
    }
    return this.compare(ctx);
  }

  /** any/all over a sparse row (or column) or a dense dim. */
  boolReduction(ctx: Ctx): Node | undefined {
    const options = this.drives(ctx);
    if (options.length === 0) return undefined;
    const o = pick(this.rng, options);
    const L = this.fresh(ctx);
    const inner: Ctx = { letters: new Map([...ctx.letters, [L, o.dim]]), used: ctx.used };
    if (o.pattern)
      inner.sparse =
        o.side === 'row' ? { pattern: o.pattern, row: o.fixed, col: L } : { pattern: o.pattern, row: L, col: o.fixed };
    const drivers = o.pattern
      ? this.sparseVals(o.pattern).filter((v) => v.ty !== 'bool' && this.check.env.get(v.name)?.exact)
      : [...this.vals.values()].filter(
          (v) => !v.pattern && v.ty !== 'bool' && v.dims.includes(o.dim) && this.check.env.get(v.name)?.exact,
        );
    const d = drivers.map((v) => ({ v, a: this.access(v, inner, L) })).filter((x) => x.a !== undefined);
    if (d.length === 0) return undefined;
    const { v, a } = pick(this.rng, d);
    let body: Node = {
      k: 'cmp',
      ty: v.ty as Num,
      op: pick(this.rng, ['<', '>', '>=', '!='] as const),
      a: a!,
      b: this.literal(v.ty as Num),
    };
    if (chance(this.rng, 0.3))
      body = { k: 'logic', op: pick(this.rng, ['&&', '||'] as const), a: body, b: this.cond(inner, 0) };
    return {
      k: 'red',
      op: pick(this.rng, ['any', 'all'] as const),
      idx: L,
      dim: o.dim,
      implicit: false,
      body,
    };
  }

  /** The reductions possible in ctx: over a sparse pattern's row (or column) from a letter in scope, or over a dense dim. */
  protected drives(ctx: Ctx): { pattern?: string; side: 'row' | 'col'; fixed: string; dim: Dim }[] {
    const out: { pattern?: string; side: 'row' | 'col'; fixed: string; dim: Dim }[] = [];
    for (const p of this.patterns()) {
      const [rd, cd] = p.dims as [Dim, Dim];
      for (const [l, d] of ctx.letters) {
        if (d === rd) out.push({ pattern: p.pattern!, side: 'row', fixed: l, dim: cd });
        if (d === cd) out.push({ pattern: p.pattern!, side: 'col', fixed: l, dim: rd });
      }
    }
    for (const d of this.dims()) out.push({ side: 'row', fixed: '', dim: d });
    return out;
  }

  reduction(ctx: Ctx, ty: Num, depth: number): Node | undefined {
    const options = this.drives(ctx);
    const sparse = options.filter((o) => o.pattern);
    const o = sparse.length > 0 && chance(this.rng, 0.7) ? pick(this.rng, sparse) : pick(this.rng, options);
    return o.pattern ? this.driven(ctx, ty, depth, o.pattern, o.fixed, o.side) : this.dense(ctx, ty, depth, o.dim);
  }

  /** A reduction over the entries of one row (side 'row') or column of a sparse pattern. */
  driven(
    ctx: Ctx,
    ty: Num,
    depth: number,
    pattern: string,
    fixed: string,
    side: 'row' | 'col',
    operand?: (inner: Ctx, L: string) => Node | undefined,
  ): Node {
    const p = this.patterns().find((x) => x.pattern === pattern)!;
    const [rd, cd] = p.dims as [Dim, Dim];
    const L = this.fresh(ctx);
    const [row, col] = side === 'row' ? [fixed, L] : [L, fixed];
    const inner: Ctx = {
      letters: new Map([...ctx.letters, [L, side === 'row' ? cd : rd]]),
      sparse: { pattern, row, col },
      used: ctx.used,
    };
    const op = weighted(this.rng, [
      [5, 'sum'],
      [2, 'min'],
      [2, 'max'],
    ] as const) as ReduceOp;
    const E = (): Node =>
      (operand && chance(this.rng, 0.7) ? operand(inner, L) : undefined) ?? this.expr(inner, ty, Math.min(depth, 2));
    const drivers = this.sparseVals(pattern).filter(
      (v) => v.ty === ty && (ty !== 'i64' || !isExt(this.check.env.get(v.name))),
    );
    let body: Node;
    if (drivers.length > 0) {
      const driver = pick(this.rng, drivers);
      const d = ref(driver.name, [row, col]);
      const dd = chance(this.rng, 0.15) ? this.unary(ty, d) : d;
      body = weighted(this.rng, [
        [5, () => bin('*', dd, E())],
        [op === 'sum' ? 1 : 4, () => bin('+', dd, E())],
        [1, () => dd],
        [
          1,
          () =>
            (this.check.env.get(driver.name)?.exact
              ? {
                  k: 'sel',
                  c: { k: 'cmp', ty, op: pick(this.rng, ['<', '>', '!='] as const), a: d, b: this.literal(ty) },
                  a: E(),
                  b: E(),
                }
              : { k: 'sel', c: this.compare(inner), a: bin('*', dd, E()), b: E() }) as Node,
        ],
      ] as const)();
    } else {
      // The pattern's values are of another dtype: they drive the reduction through a condition.
      const v = pick(this.rng, this.sparseVals(pattern));
      const c: Node = {
        k: 'cmp',
        ty: v.ty as Num,
        op: pick(this.rng, ['<', '>', '!='] as const),
        a: ref(v.name, [row, col]),
        b: this.literal(v.ty as Num),
      };
      body = { k: 'sel', c, a: E(), b: chance(this.rng, 0.5) ? lit('0') : E() };
    }
    return {
      k: 'red',
      op,
      idx: L,
      dim: side === 'row' ? cd : rd,
      implicit: op === 'sum' && implicitOk(body, L) && chance(this.rng, 0.4),
      body,
    };
  }

  /** A reduction over a dense dim: a value indexed by the new letter, combined with an expression. */
  dense(
    ctx: Ctx,
    ty: Num,
    depth: number,
    dim: Dim,
    operand?: (inner: Ctx, L: string) => Node | undefined,
  ): Node | undefined {
    const L = this.fresh(ctx);
    const inner: Ctx = { letters: new Map([...ctx.letters, [L, dim]]), used: ctx.used };
    const lead = (operand ? operand(inner, L) : undefined) ?? this.withLetter(inner, ty, L);
    if (!lead) return undefined;
    const op = weighted(this.rng, [
      [5, 'sum'],
      [2, 'min'],
      [2, 'max'],
    ] as const) as ReduceOp;
    const body = chance(this.rng, 0.7)
      ? bin(pick(this.rng, ['*', '+', '-'] as const), lead, this.expr(inner, ty, Math.min(depth, 1)))
      : lead;
    return {
      k: 'red',
      op,
      idx: L,
      dim,
      implicit: op === 'sum' && implicitOk(body, L) && chance(this.rng, 0.4),
      body,
    };
  }

  protected withLetter(ctx: Ctx, ty: Num, L: string): Node | undefined {
    const dim = ctx.letters.get(L)!;
    const vs = [...this.vals.values()].filter(
      (v) => !v.pattern && v.ty === ty && v.dims.includes(dim) && (ty !== 'i64' || !isExt(this.check.env.get(v.name))),
    );
    const xs = vs.map((v) => this.access(v, ctx, L)).filter((x): x is Node => x !== undefined);
    return xs.length > 0 ? pick(this.rng, xs) : undefined;
  }

  /** Around a statement's core: nothing, a function, an operator with another expression, or a select. */
  wrap(ctx: Ctx, ty: Num, core: Node): Node {
    const r = this.rng.next();
    if (r < 0.35) return core;
    if (r < 0.55) return this.unary(ty, core);
    if (r < 0.88) {
      const other = this.expr(ctx, ty, 2);
      const op = pick(this.rng, ['+', '-', '*', 'min', 'max'] as const);
      return chance(this.rng, 0.5) ? bin(op, core, other) : bin(op, other, core);
    }
    return { k: 'sel', c: this.cond(ctx, 1), a: core, b: this.expr(ctx, ty, 1) };
  }
}
