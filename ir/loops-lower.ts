/**
 * Lowering of one typed tensor op to its loop nest (ir/loops.ts). The loop
 * structure is the reference interpreter's (interp/interpret.ts), made
 * explicit so that every emitter prints the same loops:
 *   - a dense result: nested loops over its indices, the outermost parallel;
 *   - a sparse result: a parallel loop over the rows (columns, for CSC) of its
 *     pattern source P and an inner loop over that row's entries p, writing
 *     result values aligned with P;
 *   - a reduction: a local accumulator set to the identity, folded over
 *       * the entries of its sparse driver D grouped by D's index bound
 *         outside (CSR rowPtr when that is the row, CSC colPtr when it is the
 *         column), or all of D's entries when both of D's indices are reduced,
 *       * then loops over its remaining (dense) indices, innermost;
 *   - a sparse read sharing the pattern root and indices of an iteration
 *     around it reads that iteration's entry p (aligned read);
 *   - a dense result reading a sparse operand at its own positions (densify)
 *     searches the row's entries; a missing entry reads 0.
 * Nothing is hoisted out of loops. Floating-point operations happen in the
 * interpreter's order, so an executor in float64 reproduces it bit for bit.
 */
import { reduceIdentity, walkExpr, type Expr } from './expr.js';
import { kernelFacts, type OpInfo } from './facts.js';
import { resolveDtypes, type ValueInfo } from './infer.js';
import {
  lconst,
  ladd,
  lload,
  lmul,
  lvar,
  type LBinOp,
  type LBuffer,
  type LElem,
  type LExpr,
  type LStmt,
  type LoopFunc,
} from './loops.js';
import { tensorOps, type Kernel } from './module.js';
import { isIntDtype, type Dim, type Dtype } from './types.js';

type Load = Extract<Expr, { k: 'load' }>;
type Reduce = Extract<Expr, { k: 'reduce' }>;
type Layout = 'csr' | 'csc';

/** An op the lowering cannot express; never lowered silently. */
export class LowerError extends Error {}

/** A sparse iteration in scope: entry variable `p` walks `load`'s entries in `layout` order. */
interface Active {
  load: Load;
  p: string;
  layout: Layout;
}

const LOCAL_NAME = /^(acc|p|q|v|r)\d+$/;

class OpLowering {
  private readonly buffers = new Map<string, LBuffer>();
  private readonly sizes = new Set<string>();
  private readonly counters = new Map<string, number>();
  private readonly dtypes: Map<Expr, Dtype>;
  /** Names index variables take in the loop IR (renamed where they would clash with a size or a value). */
  private readonly ivNames = new Map<string, string>();
  private readonly taken: Set<string>;

  constructor(
    private readonly kernel: string,
    private readonly info: OpInfo,
  ) {
    const env = (n: string): ValueInfo | undefined => info.operands.get(n);
    this.dtypes = resolveDtypes(info.op.expr, env, info.type.dtype);
    this.taken = new Set<string>([info.op.result, ...info.operands.keys()]);
    for (const v of [...info.operands.values()].map((o) => o.type).concat(info.type))
      for (const d of v.shape) if (d.kind === 'sym') this.taken.add(d.name);
  }

  private fail(msg: string): never {
    throw new LowerError(
      `lower-kernels: kernel ${this.kernel}, op ${this.info.op.id} (%${this.info.op.result}): ${msg}`,
    );
  }

  /** A new local, never the name of a value or size of the op (a parameter may be called `acc0`). */
  private fresh(prefix: string): string {
    for (;;) {
      const n = this.counters.get(prefix) ?? 0;
      this.counters.set(prefix, n + 1);
      const name = `${prefix}${n}`;
      if (!this.taken.has(name)) return name;
    }
  }

  iv(name: string): string {
    let v = this.ivNames.get(name);
    if (v === undefined) {
      v = name;
      while (this.taken.has(v) || LOCAL_NAME.test(v)) v += '_';
      this.ivNames.set(name, v);
    }
    return v;
  }

  private typeOf(name: string): ValueInfo['type'] {
    const t =
      name === this.info.op.result && !this.info.operands.has(name)
        ? this.info.type
        : this.info.operands.get(name)?.type;
    if (!t) this.fail(`'${name}' has no type`);
    return t;
  }

  private rootOf(name: string): string {
    return this.info.operands.get(name)?.root ?? name;
  }

  private dim(d: Dim): LExpr {
    if (d.kind === 'lit') return lconst(d.value, 'index');
    this.sizes.add(d.name);
    return lvar(d.name);
  }

  private addBuffer(b: LBuffer): string {
    if (!this.buffers.has(b.name)) this.buffers.set(b.name, b);
    return b.name;
  }

  private denseBuffer(name: string): string {
    const t = this.typeOf(name);
    return this.addBuffer({ name, elem: t.dtype, role: t.shape.length === 0 ? 'scalar' : 'dense', of: name });
  }

  /** The pointer, index and values buffers of sparse `name` in `layout`. */
  private sparse(name: string, layout: Layout): { ptr: string; idx: string; vals: string } {
    const csr = layout === 'csr';
    const ptr = this.addBuffer({
      name: `${name}.${csr ? 'rowPtr' : 'colPtr'}`,
      elem: 'index',
      role: csr ? 'rowPtr' : 'colPtr',
      of: name,
      layout,
    });
    const idx = this.addBuffer({
      name: `${name}.${csr ? 'colIdx' : 'rowIdx'}`,
      elem: 'index',
      role: csr ? 'colIdx' : 'rowIdx',
      of: name,
      layout,
    });
    return { ptr, idx, vals: this.values(name, layout) };
  }

  private values(name: string, layout: Layout): string {
    return this.addBuffer({
      name: `${name}.${layout === 'csr' ? 'vals' : 'cscVals'}`,
      elem: this.typeOf(name).dtype,
      role: 'values',
      of: name,
      layout,
    });
  }

  /** The layout a value is stored in natively: CSC for csc, CSR otherwise (coo entries are row-sorted). */
  private nativeLayout(name: string): Layout {
    return this.typeOf(name).format === 'csc' ? 'csc' : 'csr';
  }

  /** Row-major offset of `idx` into dense `name`. */
  private flat(name: string, idx: readonly string[]): LExpr {
    const shape = this.typeOf(name).shape;
    let off: LExpr = lvar(this.iv(idx[0]!));
    for (let p = 1; p < idx.length; p++) off = ladd(lmul(off, this.dim(shape[p]!)), lvar(this.iv(idx[p]!)));
    return off;
  }

  /**
   * Opens the entry loop of sparse `name` grouped by `key` (the bound row in
   * CSR, column in CSC); returns the loop, its innermost body and entry var.
   */
  private entryLoop(
    name: string,
    layout: Layout,
    key: LExpr,
    other: string,
    parallel = false,
  ): { loop: LStmt; body: LStmt[]; p: string } {
    const b = this.sparse(name, layout);
    const p = this.fresh('p');
    const body: LStmt[] = [{ k: 'let', var: this.iv(other), type: 'index', value: lload(b.idx, lvar(p)) }];
    const loop: LStmt = {
      k: 'for',
      var: p,
      lo: lload(b.ptr, key),
      hi: lload(b.ptr, ladd(key, lconst(1, 'index'))),
      parallel,
      body,
    };
    return { loop, body, p };
  }

  /** Lowers e; statements it needs first (reductions, searches) are appended to `pre`. */
  expr(e: Expr, active: readonly Active[], pre: LStmt[]): LExpr {
    const type = this.dtypes.get(e)!;
    switch (e.k) {
      case 'const':
        return lconst(e.value, type);
      case 'dim':
        this.sizes.add(e.name);
        return { k: 'cast', to: type, arg: lvar(e.name) };
      case 'load':
        return this.load(e, active, pre);
      case 'neg':
        return { k: 'un', op: 'neg', arg: this.expr(e.arg, active, pre), type };
      case 'not':
        return { k: 'un', op: 'not', arg: this.expr(e.arg, active, pre), type };
      case 'bin': {
        const op: LBinOp = e.op === '/' && isIntDtype(type) ? 'idiv' : e.op;
        return { k: 'bin', op, lhs: this.expr(e.lhs, active, pre), rhs: this.expr(e.rhs, active, pre), type };
      }
      case 'select':
        return {
          k: 'select',
          cond: this.expr(e.cond, active, pre),
          then: this.expr(e.then, active, pre),
          else: this.expr(e.else, active, pre),
          type,
        };
      case 'call':
        return { k: 'call', fn: e.fn, args: e.args.map((a) => this.expr(a, active, pre)), type };
      case 'reduce':
        return this.reduce(e, active, pre);
    }
  }

  private load(e: Load, active: readonly Active[], pre: LStmt[]): LExpr {
    const t = this.typeOf(e.tensor);
    if (e.idx.length === 0) return lload(this.denseBuffer(e.tensor), lconst(0, 'index'));
    if (t.format === 'dense') return lload(this.denseBuffer(e.tensor), this.flat(e.tensor, e.idx));
    for (let a = active.length - 1; a >= 0; a--) {
      const it = active[a]!;
      if (it.load.idx.join(',') === e.idx.join(',') && this.rootOf(it.load.tensor) === this.rootOf(e.tensor))
        return lload(this.values(e.tensor, it.layout), lvar(it.p));
    }
    if (this.info.type.format !== 'dense')
      this.fail(
        `sparse '${e.tensor}[${e.idx.join(', ')}]' is neither the pattern source, aligned with it, nor a reduction driver`,
      );
    // Densify: search the bound row (column, for CSC) for the other index; missing entries read 0.
    const layout = this.nativeLayout(e.tensor);
    const [row, col] = [e.idx[0]!, e.idx[1]!];
    const [key, other] = layout === 'csr' ? [row, col] : [col, row];
    const b = this.sparse(e.tensor, layout);
    const v = this.fresh('v');
    const q = this.fresh('q');
    pre.push({ k: 'let', var: v, type: t.dtype, value: lconst(0, t.dtype) });
    const found: LStmt = {
      k: 'if',
      cond: { k: 'bin', op: '==', lhs: lload(b.idx, lvar(q)), rhs: lvar(this.iv(other)), type: 'bool' },
      then: [{ k: 'set', var: v, value: lload(b.vals, lvar(q)) }],
    };
    const k = lvar(this.iv(key));
    pre.push({
      k: 'for',
      var: q,
      lo: lload(b.ptr, k),
      hi: lload(b.ptr, ladd(k, lconst(1, 'index'))),
      parallel: false,
      body: [found],
    });
    return lvar(v);
  }

  private reduce(e: Reduce, active: readonly Active[], pre: LStmt[]): LExpr {
    const type = this.dtypes.get(e)!;
    const acc = this.fresh('acc');
    pre.push({ k: 'let', var: acc, type, value: lconst(reduceIdentity(e.op), type) });
    const driverName = this.info.sparsity.drivers.get(e);
    let d: Load | undefined;
    if (driverName !== undefined)
      walkExpr(e.body, (n) => {
        if (!d && n.k === 'load' && n.tensor === driverName && n.idx.some((i) => e.idx.includes(i))) d = n;
      });
    if (driverName !== undefined && !d) this.fail(`the driver '${driverName}' of ${e.op}() is not read in its body`);
    let inner = pre;
    let innerActive = active;
    if (d) {
      const [row, col] = [d.idx[0]!, d.idx[1]!];
      const rowReduced = e.idx.includes(row);
      const colReduced = e.idx.includes(col);
      let layout: Layout;
      let key: LExpr;
      if (rowReduced && colReduced) {
        // All entries: walk the driver's native layout, as the interpreter walks its entry list.
        layout = this.nativeLayout(d.tensor);
        const outer = layout === 'csr' ? row : col;
        const shape = this.typeOf(d.tensor).shape;
        const body: LStmt[] = [];
        inner.push({
          k: 'for',
          var: this.iv(outer),
          lo: lconst(0, 'index'),
          hi: this.dim(shape[layout === 'csr' ? 0 : 1]!),
          parallel: false,
          body,
        });
        inner = body;
        key = lvar(this.iv(outer));
      } else {
        layout = rowReduced ? 'csc' : 'csr';
        key = lvar(this.iv(rowReduced ? col : row));
      }
      const { loop, body, p } = this.entryLoop(d.tensor, layout, key, layout === 'csr' ? col : row);
      inner.push(loop);
      inner = body;
      innerActive = [...active, { load: d, p, layout }];
    }
    for (const i of e.idx) {
      if (d?.idx.includes(i)) continue;
      const body: LStmt[] = [];
      inner.push({
        k: 'for',
        var: this.iv(i),
        lo: lconst(0, 'index'),
        hi: this.dim(this.rangeOf(i, e)),
        parallel: false,
        body,
      });
      inner = body;
    }
    const x = this.expr(e.body, innerActive, inner);
    inner.push({ k: 'set', var: acc, value: fold(e.op, lvar(acc), x, type) });
    return lvar(acc);
  }

  /** Range of a reduction's dense index: the dim at its first position in a tensor access. */
  private rangeOf(i: string, e: Reduce): Dim {
    let dim: Dim | undefined;
    walkExpr(e.body, (n) => {
      if (!dim && n.k === 'load') {
        const p = n.idx.indexOf(i);
        if (p >= 0) dim = this.typeOf(n.tensor).shape[p];
      }
    });
    if (!dim) this.fail(`index '${i}' has no range`);
    return dim;
  }

  run(): LoopFunc {
    const { op, type, sparsity } = this.info;
    const readsSelf = this.info.operands.has(op.result);
    const name = `${this.kernel}_${op.id}`;
    const body: LStmt[] = [];
    let out: string;
    if (type.format !== 'dense') {
      const P = sparsity.patternSource;
      if (P === undefined) this.fail('a sparse result without a pattern source');
      const layout = this.nativeLayout(P);
      const [row, col] = [op.indices[0]!, op.indices[1]!];
      const [outer, other] = layout === 'csr' ? [row, col] : [col, row];
      const rows = this.typeOf(P).shape[layout === 'csr' ? 0 : 1]!;
      const inner = this.entryLoop(P, layout, lvar(this.iv(outer)), other);
      body.push({
        k: 'for',
        var: this.iv(outer),
        lo: lconst(0, 'index'),
        hi: this.dim(rows),
        parallel: true,
        body: [inner.loop],
      });
      const active: Active[] = [{ load: { k: 'load', tensor: P, idx: [row, col] }, p: inner.p, layout }];
      const value = this.expr(op.expr, active, inner.body);
      this.sizes.add(`nnz(${sparsity.root ?? this.rootOf(P)})`);
      out = `${op.result}.${layout === 'csr' ? 'vals' : 'cscVals'}${readsSelf ? '.next' : ''}`;
      inner.body.push({ k: 'store', buf: out, index: lvar(inner.p), value });
      this.addBuffer({ name: out, elem: type.dtype, role: 'values', of: op.result, layout });
    } else {
      out = `${op.result}${readsSelf ? '.next' : ''}`;
      let inner = body;
      op.indices.forEach((i, p) => {
        const b: LStmt[] = [];
        inner.push({
          k: 'for',
          var: this.iv(i),
          lo: lconst(0, 'index'),
          hi: this.dim(type.shape[p]!),
          parallel: p === 0,
          body: b,
        });
        inner = b;
      });
      const value = this.expr(op.expr, [], inner);
      const index = op.indices.length === 0 ? lconst(0, 'index') : this.flatResult();
      inner.push({ k: 'store', buf: out, index, value });
      this.addBuffer({
        name: out,
        elem: type.dtype,
        role: op.indices.length === 0 ? 'scalar' : 'dense',
        of: op.result,
      });
    }
    const sparseAccess = [...this.buffers.values()].some((b) => b.role === 'rowPtr' || b.role === 'colPtr');
    const schedules = op.indices.length === 0 ? ['serial'] : sparseAccess ? ['row-split', 'nnz-split'] : ['row-split'];
    return {
      op: op.id,
      name,
      result: op.result,
      out,
      buffers: [...this.buffers.values()],
      sizes: [...this.sizes].sort(),
      body,
      schedules,
    };
  }

  private flatResult(): LExpr {
    const { op, type } = this.info;
    let off: LExpr = lvar(this.iv(op.indices[0]!));
    for (let p = 1; p < op.indices.length; p++)
      off = ladd(lmul(off, this.dim(type.shape[p]!)), lvar(this.iv(op.indices[p]!)));
    return off;
  }
}

function fold(op: Reduce['op'], acc: LExpr, x: LExpr, type: LElem): LExpr {
  switch (op) {
    case 'sum':
      return { k: 'bin', op: '+', lhs: acc, rhs: x, type };
    case 'min':
    case 'max':
      return { k: 'call', fn: op, args: [acc, x], type };
    case 'any':
      return { k: 'bin', op: '||', lhs: acc, rhs: x, type };
    case 'all':
      return { k: 'bin', op: '&&', lhs: acc, rhs: x, type };
  }
}

/** The loop function of one typed tensor op. */
export function lowerOpLoops(kernel: string, info: OpInfo): LoopFunc {
  return new OpLowering(kernel, info).run();
}

/** Loop functions of every tensor op of a typed kernel, repeat bodies included, in program order. */
export function lowerKernelLoops(k: Kernel): LoopFunc[] {
  const facts = kernelFacts(k);
  return tensorOps(k.body).map((op) => lowerOpLoops(k.name, facts.ops.get(op.id)!));
}
