/**
 * Random well-typed programs: parameters of one dtype (and some of
 * another), then statements drawn from templates (elementwise, SpMV and its
 * transpose, SpMM, SDDMM and other maps over a pattern's entries, dense
 * contractions, scalar and bool reductions, a densified copy, an update of
 * an earlier value, repeat loops), each kept only where the checker finds it
 * inside the tolerances. The expressions are expressions.ts's.
 */
import { chance, pick, type Rng, weighted } from '../util.js';
import { Checker, isExt } from './checker.js';
import { type Ctx, Expressions } from './expressions.js';
import {
  bin,
  FORMATS,
  isFloat,
  lit,
  MAX_TRIPS,
  mentions,
  NUMS,
  readsValue,
  ref,
  type Assign,
  type Dim,
  type Loop,
  type Node,
  type Num,
  type Program,
  type ReduceOp,
  type Stmt,
  type Ty,
  type Val,
} from './program.js';

/** Adds statements to a program, one template at a time. */
class Generator extends Expressions {
  private temps = 0;
  readonly body: Stmt[] = [];
  readonly assigned: string[] = [];

  private newTemp(ty: Ty, dims: Dim[], source?: Val): Val {
    const v: Val = { name: `t${++this.temps}`, ty, dims, result: chance(this.rng, 0.5) };
    if (source?.pattern) {
      v.format = v.result && chance(this.rng, 0.4) ? pick(this.rng, FORMATS) : source.format!;
      v.pattern = v.format === source.format ? source.pattern : `${source.pattern.split(':')[0]}:${v.format}`;
    }
    return v;
  }

  private lettersFor(dims: Dim[]): string[] {
    return dims.map((d, i) => (d === 'k' ? 'c' : i === 0 ? 'i' : 'j'));
  }

  private ctxFor(dims: Dim[], idx: string[]): Ctx {
    return { letters: new Map(idx.map((l, i) => [l, dims[i]!])), used: new Set(idx) };
  }

  /** A statement assigning a new temporary (or, with `target`, an existing value) of `dims`. */
  private assign(target: Val, make: (ctx: Ctx) => Node | undefined, sparseAt?: string): Assign | undefined {
    const idx = this.lettersFor(target.dims);
    for (let tries = 0; tries < 3; tries++) {
      const ctx = this.ctxFor(target.dims, idx);
      if (sparseAt) ctx.sparse = { pattern: sparseAt, row: idx[0]!, col: idx[1]! };
      const rhs = make(ctx);
      // Every index of the left side must index something on the right (DY2002), and a value must give it its dtype:
      // a right side of literals and dims alone (selected by conditions) takes another one for a new temporary.
      if (rhs && idx.every((l) => mentions(rhs, l)) && (target.ty === 'bool' || readsValue(rhs)))
        return { k: 'assign', lhs: target.name, idx, ty: target.ty, rhs };
    }
    return undefined;
  }

  private vectorDims(): Dim[][] {
    const out: Dim[][] = [[this.p.rowDim], [this.p.colDim]];
    if (this.dims().includes('k')) out.push([this.p.rowDim, 'k'], [this.p.colDim, 'k']);
    return out;
  }

  /** One template's statements, or undefined where it does not apply. */
  private template(name: string): { stmts: Stmt[]; defines: Val[] } | undefined {
    const ty = this.ty;
    const { rowDim, colDim } = this.p;
    const pats = this.patterns();
    const one = (v: Val, s: Assign | undefined) => (s ? { stmts: [s], defines: [v] } : undefined);
    switch (name) {
      case 'elementwise': {
        const v = this.newTemp(ty, pick(this.rng, this.vectorDims()));
        return one(
          v,
          this.assign(v, (ctx) => this.expr(ctx, ty, 3)),
        );
      }
      case 'spmv':
      case 'spmv-t': {
        const pat = pick(this.rng, pats);
        const side = name === 'spmv' ? 'row' : 'col';
        const v = this.newTemp(ty, [side === 'row' ? (pat.dims[0] as Dim) : (pat.dims[1] as Dim)]);
        return one(
          v,
          this.assign(v, (ctx) => this.wrap(ctx, ty, this.driven(ctx, ty, 2, pat.pattern!, 'i', side))),
        );
      }
      case 'spmm': {
        if (!this.dims().includes('k')) return undefined;
        const pat = pick(this.rng, pats);
        const v = this.newTemp(ty, [pat.dims[0] as Dim, 'k']);
        const operand = (inner: Ctx, L: string): Node | undefined => {
          const ms = [...this.vals.values()].filter(
            (x) => !x.pattern && x.ty === ty && x.dims.length === 2 && x.dims[0] === pat.dims[1] && x.dims[1] === 'k',
          );
          return ms.length > 0 ? ref(pick(this.rng, ms).name, [L, 'c']) : this.withLetter(inner, ty, L);
        };
        return one(
          v,
          this.assign(v, (ctx) => this.wrap(ctx, ty, this.driven(ctx, ty, 1, pat.pattern!, 'i', 'row', operand))),
        );
      }
      case 'sparse': {
        // SDDMM (a dot product of dense rows at each entry) or another map over a pattern's entries.
        const src = pick(this.rng, this.sparseVals());
        const p = pats.find((x) => x.pattern === src.pattern)!;
        const v = this.newTemp(ty, p.dims as Dim[], src);
        const make = (ctx: Ctx): Node | undefined => {
          const drivers = this.sparseVals(src.pattern).filter(
            (x) => x.ty === ty && (ty !== 'i64' || !isExt(this.check.env.get(x.name))),
          );
          if (drivers.length === 0) {
            const d = pick(this.rng, this.sparseVals(src.pattern));
            const c: Node = {
              k: 'cmp',
              ty: d.ty as Num,
              op: pick(this.rng, ['<', '>', '!='] as const),
              a: ref(d.name, ['i', 'j']),
              b: this.literal(d.ty as Num),
            };
            return { k: 'sel', c, a: this.expr(ctx, ty, 2), b: this.expr(ctx, ty, 1) };
          }
          const d = ref(pick(this.rng, drivers).name, ['i', 'j']);
          if (this.dims().includes('k') && chance(this.rng, 0.5)) {
            const dot = this.dense(ctx, ty, 1, 'k', (_inner, L) => {
              const rows = [...this.vals.values()].filter(
                (x) => !x.pattern && x.ty === ty && x.dims.length === 2 && x.dims[1] === 'k',
              );
              const a = rows.filter((x) => x.dims[0] === p.dims[0]);
              const b = rows.filter((x) => x.dims[0] === p.dims[1]);
              return a.length > 0 && b.length > 0
                ? bin('*', ref(pick(this.rng, a).name, ['i', L]), ref(pick(this.rng, b).name, ['j', L]))
                : undefined;
            });
            if (dot) return bin('*', d, dot);
          }
          return this.wrap(ctx, ty, chance(this.rng, 0.5) ? d : this.unary(ty, d));
        };
        return one(v, this.assign(v, make, src.pattern));
      }
      case 'contraction': {
        if (!this.dims().includes('k')) return undefined;
        const v = this.newTemp(ty, [pick(this.rng, [rowDim, colDim]), 'k']);
        return one(
          v,
          this.assign(v, (ctx) => {
            const core = this.dense(ctx, ty, 1, 'k');
            return core && this.wrap(ctx, ty, core);
          }),
        );
      }
      case 'scalar': {
        const v = this.newTemp(ty, []);
        return one(
          v,
          this.assign(v, (ctx) => {
            const d = pick(this.rng, this.dims());
            const L = this.fresh(ctx);
            const inner: Ctx = { letters: new Map([[L, d]]), used: ctx.used };
            const op = weighted(this.rng, [
              [5, 'sum'],
              [2, 'min'],
              [2, 'max'],
            ] as const) as ReduceOp;
            const lead = this.withLetter(inner, ty, L);
            const sparse = pats.filter((x) => x.dims[0] === d || x.dims[1] === d);
            const body =
              sparse.length > 0 && chance(this.rng, 0.5)
                ? this.reduction(inner, ty, 1)
                : lead && bin(pick(this.rng, ['*', '+'] as const), lead, this.expr(inner, ty, 1));
            if (!body || !mentions(body, L)) return undefined;
            return this.wrap(ctx, ty, { k: 'red', op, idx: L, dim: d, implicit: false, body });
          }),
        );
      }
      case 'bool': {
        const v = this.newTemp('bool', [pick(this.rng, [rowDim, colDim])]);
        return one(
          v,
          this.assign(v, (ctx) => (chance(this.rng, 0.6) ? this.boolReduction(ctx) : undefined) ?? this.cond(ctx, 2)),
        );
      }
      case 'densify': {
        const srcs = this.sparseVals().filter((x) => x.ty === ty);
        if (srcs.length === 0) return undefined;
        const src = pick(this.rng, srcs);
        const p = pats.find((x) => x.pattern === src.pattern)!;
        const v = this.newTemp(ty, p.dims as Dim[]);
        return one(
          v,
          this.assign(v, (ctx) => this.wrap(ctx, ty, ref(src.name, ['i', 'j'])), src.pattern),
        );
      }
      case 'again': {
        const olds = [...this.vals.values()].filter(
          (x) => !this.p.params.includes(x) && !x.pattern && x.ty === ty && x.dims.length > 0,
        );
        if (olds.length === 0) return undefined;
        const v = pick(this.rng, olds);
        return one(
          v,
          this.assign(v, (ctx) => this.wrap(ctx, ty, this.access(v, ctx) ?? this.expr(ctx, ty, 2))),
        );
      }
      case 'repeat':
        return this.loop();
    }
    return undefined;
  }

  /** A value before the loop and a repeat that updates it (a Jacobi-style step, or a min-plus relaxation until stable). */
  private loop(): { stmts: Stmt[]; defines: Val[] } | undefined {
    const ty = this.ty;
    const { rowDim, colDim } = this.p;
    const square = rowDim === colDim;
    const v = this.newTemp(ty, [rowDim]);
    const init = this.assign(v, (ctx) => this.expr(ctx, ty, 2));
    if (!init) return undefined;
    const pat = this.sparseVals().find((x) => x.ty === ty);
    const relax = square && pat !== undefined && chance(this.rng, 0.45);
    const countParam = this.p.params.find((x) => x.name === 'reps');
    const count: Loop['count'] =
      !relax && countParam && chance(this.rng, 0.4)
        ? { param: 'reps' }
        : { lit: relax ? 2 + this.rng.int(MAX_TRIPS - 1) : 1 + this.rng.int(3) };
    let step: Assign | undefined;
    let until: Loop['until'];
    if (relax) {
      // Bellman-Ford (or its max form): exact, so every backend takes the same trips.
      const [outer, inner] = chance(this.rng, 0.7) ? (['min', 'min'] as const) : (['max', 'max'] as const);
      step = this.assign(v, (ctx) => {
        const L = this.fresh(ctx);
        const body = bin('+', ref(pat.name, ['i', L]), ref(v.name, [L]));
        return bin(outer, ref(v.name, ['i']), {
          k: 'red',
          op: inner,
          idx: L,
          dim: colDim,
          implicit: false,
          body,
        });
      });
      until = {
        name: v.name,
        ...(isFloat(ty) && chance(this.rng, 0.4) ? { within: pick(this.rng, ['0', '0.5', '1e-6']) } : {}),
      };
    } else {
      step = this.assign(v, (ctx) => {
        const self = ref(v.name, ['i']);
        const core =
          square && pat && chance(this.rng, 0.7)
            ? this.driven(ctx, ty, 1, pat.pattern!, 'i', 'row', (_inner, L) => ref(v.name, [L]))
            : bin(pick(this.rng, ['+', '*', 'min', 'max'] as const), self, this.expr(ctx, ty, 1));
        // Float steps are damped (as PageRank's d) or squashed, so that values stay where the tolerance holds.
        if (isFloat(ty))
          return chance(this.rng, 0.5)
            ? bin('*', lit('0.5'), this.wrap(ctx, ty, core))
            : { k: 'un', op: pick(this.rng, ['tanh', 'sigmoid'] as const), a: this.wrap(ctx, ty, core) };
        return ty === 'i64' ? bin('/', this.wrap(ctx, ty, core), lit('4')) : this.wrap(ctx, ty, core);
      });
    }
    if (!step) return undefined;
    const body: Stmt[] = [step];
    const defines = [v];
    if ('lit' in count && chance(this.rng, 0.3)) {
      const u = this.newTemp(ty, [rowDim]);
      const after = this.assign(u, (ctx) => this.wrap(ctx, ty, ref(v.name, ['i'])));
      if (after) {
        body.push(after);
        defines.push(u);
      }
    }
    const loop: Loop = { k: 'repeat', count, ...(until ? { until } : {}), body };
    if (!chance(this.rng, 0.2)) return { stmts: [init, loop], defines };
    // Nested: each outer trip changes the value, then runs the inner loop (a convergence loop entered again).
    const perturb = this.assign(v, (ctx) => {
      const e = bin(pick(this.rng, ['+', '-', 'min', 'max'] as const), ref(v.name, ['i']), this.expr(ctx, ty, 1));
      return isFloat(ty) ? bin('*', lit('0.5'), e) : e;
    });
    if (!perturb) return { stmts: [init, loop], defines };
    return { stmts: [init, { k: 'repeat', count: { lit: 1 + this.rng.int(3) }, body: [perturb, loop] }], defines };
  }

  /** Adds one statement (a few tries of templates); false where none fits. */
  step(first: boolean): boolean {
    for (let tries = 0; tries < 8; tries++) {
      const name = weighted(this.rng, [
        [first ? 1 : 2, 'elementwise'],
        [4, 'spmv'],
        [2, 'spmv-t'],
        [3, 'spmm'],
        [2.5, 'sparse'],
        [1, 'contraction'],
        [1.2, 'scalar'],
        [1, 'bool'],
        [0.5, 'densify'],
        [first ? 0 : 1, 'again'],
        [1.6, 'repeat'],
      ] as const);
      const t = this.template(name);
      if (!t) continue;
      const env = new Map(this.check.env);
      const c = new Checker(env, this.check.extent);
      for (const s of t.stmts) c.stmt(s, () => MAX_TRIPS);
      if (c.problems.length > 0) continue;
      for (const [k, i] of env) this.check.env.set(k, i);
      for (const v of t.defines) {
        this.vals.set(v.name, v);
        if (!this.assigned.includes(v.name)) this.assigned.push(v.name);
      }
      this.body.push(...t.stmts);
      return true;
    }
    return false;
  }
}

/** Program `f<id>`: its parameters, then one to six templates of statements; the last value assigned is a result. */
export function generate(rng: Rng, id: number): Program {
  const ty = weighted(rng, [
    [4, 'f32'],
    [2, 'f64'],
    [2, 'i32'],
    [1.5, 'i64'],
  ] as const) as Num;
  const square = chance(rng, 0.5);
  const rowDim: Dim = square ? 'n' : 'm';
  const colDim: Dim = 'n';
  const other = (): Num =>
    pick(
      rng,
      NUMS.filter((t) => t !== ty),
    );
  const sparse = (name: string, t: Num): Val => {
    const format = pick(rng, FORMATS);
    return { name, ty: t, dims: [rowDim, colDim], pattern: `${name}:${format}`, format };
  };
  const params: Val[] = [sparse('A', chance(rng, 0.1) ? other() : ty)];
  if (chance(rng, 0.2)) params.push(sparse('G', ty));
  params.push({ name: 'x', ty, dims: [colDim] }, { name: 'w', ty, dims: [rowDim] });
  if (chance(rng, 0.6)) params.push({ name: 'B', ty, dims: [colDim, 'k'] });
  if (chance(rng, 0.45)) params.push({ name: 'Q', ty, dims: [rowDim, 'k'] });
  if (chance(rng, 0.3)) params.push({ name: 'W', ty, dims: ['k', 'k'] });
  if (chance(rng, 0.2)) params.push({ name: 'P', ty, dims: [colDim, rowDim] });
  if (chance(rng, 0.4)) params.push({ name: 's', ty, dims: [] });
  if (chance(rng, 0.25)) params.push({ name: 'reps', ty: 'i32', dims: [] });
  if (chance(rng, 0.15)) params.push({ name: 'z', ty: other(), dims: [rowDim] });
  if (chance(rng, 0.1)) params.push({ name: 'f', ty: 'bool', dims: [rowDim] });
  const p: Program = { name: `f${id}`, ty, rowDim, colDim, params, results: [], assigned: [], body: [] };
  const g = new Generator(rng, p);
  const n = weighted(rng, [
    [1, 1],
    [3, 2],
    [3, 3],
    [2, 4],
    [1, 5],
    [1, 6],
  ] as const);
  for (let s = 0; s < n; s++) if (!g.step(s === 0) && s === 0) g.step(true);
  if (g.assigned.length === 0) {
    // Nothing fitted (rare): a plain copy keeps the program well formed.
    g.body.push({ k: 'assign', lhs: 't0', idx: ['i'], ty, rhs: ref('x', ['i']) });
    g.vals.set('t0', { name: 't0', ty, dims: [colDim], result: true });
    g.assigned.push('t0');
  }
  const last = g.assigned[g.assigned.length - 1]!;
  p.assigned = g.assigned.map((name) => g.vals.get(name)!);
  p.results = p.assigned.filter((v) => v.name === last || v.result);
  p.body = g.body;
  return p;
}
