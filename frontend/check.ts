/**
 * The checker: resolves names in the AST, makes implicit sums explicit, types
 * every statement with the shared rules of ir/infer.ts, and lowers the
 * program to graph IR (one `stmt` op per statement). All problems become
 * diagnostics at source spans; checking goes on after an error, skipping only
 * what depends on the broken statement.
 */
import { makeDiagnostic, type DiagCode, type Diagnostic, type Span } from '../ir/diagnostics.js';
import { funcArity, isReduceOp, type Expr, type FuncName } from '../ir/expr.js';
import { InferError, inferStatementType, type ValueInfo } from '../ir/infer.js';
import type { Kernel, Module, Op, RepeatCount, TensorOp, Until, ValueDecl } from '../ir/module.js';
import { isDtype, isFloatDtype, isFormat, isIntDtype, type Dim, type TensorType } from '../ir/types.js';
import type { AstAssign, AstDecl, AstExpr, AstKernel, AstProgram, AstRepeat, AstStmt } from './ast.js';
import { confinedSums, insertImplicitSums } from './implicit-sum.js';

class Abort extends Error {}

interface Slot {
  kind: 'param' | 'result' | 'temp';
  /** Known type; undefined for a temporary not yet assigned or whose statement failed. */
  info: ValueInfo | undefined;
  defined: boolean;
  declSpan?: Span;
}

class KernelChecker {
  private readonly slots = new Map<string, Slot>();
  private readonly dims = new Set<string>();
  private readonly assignedAnywhere = new Set<string>();
  private nextId = 0;

  constructor(
    private readonly k: AstKernel,
    private readonly diags: Diagnostic[],
  ) {}

  private error(code: DiagCode, msg: string, span: Span): void {
    this.diags.push(makeDiagnostic(code, msg, span));
  }
  private abort(code: DiagCode, msg: string, span: Span): never {
    this.error(code, msg, span);
    throw new Abort();
  }

  check(): Kernel | undefined {
    const before = this.diags.length;
    const params = this.decls(this.k.params, 'param');
    // Dims as written, so a parameter whose type is wrong otherwise (an unknown dtype, say: its own error) still
    // binds its dims, and one mistake is one error rather than a second DY2022 for every result sized by them.
    const symDims = (d: AstDecl): string[] =>
      d.type.kind === 'tensor' ? d.type.dims.flatMap((x) => (x.kind === 'sym' ? [x.name] : [])) : [];
    for (const p of this.k.params) for (const name of symDims(p)) this.dims.add(name);
    const results = this.decls(this.k.results, 'result');
    for (const r of this.k.results) {
      for (const name of new Set(symDims(r)))
        if (!this.dims.has(name))
          this.error(
            'DY2022',
            `result '${r.name}' has dim '${name}', which no parameter binds, so its size is unknown`,
            r.type.span,
          );
    }
    for (const [name, s] of this.slots) {
      if (this.dims.has(name)) this.error('DY2008', `'${name}' names both a value and a dim`, s.declSpan!);
    }
    this.collectAssigned(this.k.body);
    const body = this.stmts(this.k.body);
    for (const r of this.k.results) {
      if (!this.assignedAnywhere.has(r.name)) this.error('DY2004', `result '${r.name}' is never assigned`, r.span);
    }
    if (this.diags.slice(before).some((d) => d.severity === 'error')) return undefined;
    return { name: this.k.name, params, results, body, span: this.k.nameSpan };
  }

  private decls(ds: readonly AstDecl[], kind: 'param' | 'result'): ValueDecl[] {
    const out: ValueDecl[] = [];
    for (const d of ds) {
      if (this.slots.has(d.name)) {
        this.error('DY2008', `'${d.name}' is declared twice`, d.span);
        continue;
      }
      const type = this.declType(d);
      this.slots.set(d.name, { kind, info: type ? { type } : undefined, defined: kind === 'param', declSpan: d.span });
      if (type) out.push({ name: d.name, type, span: d.span });
    }
    return out;
  }

  private declType(d: AstDecl): TensorType | undefined {
    const t = d.type;
    if (!isDtype(t.dtype)) {
      this.error('DY2011', `unknown dtype '${t.dtype}': expected f32, f64, i32, i64 or bool`, t.dtypeSpan);
      return undefined;
    }
    if (t.kind === 'scalar') return { format: 'dense', dtype: t.dtype, shape: [] };
    if (!isFormat(t.format)) {
      this.error('DY2010', `unknown format '${t.format}': expected dense, csr, csc or coo`, t.formatSpan);
      return undefined;
    }
    if (t.format !== 'dense' && t.dims.length !== 2) {
      this.error('DY2016', `${t.format} tensor '${d.name}' must have two dimensions, not ${t.dims.length}`, t.span);
      return undefined;
    }
    if (t.dims.length === 0) {
      this.error(
        'DY2016',
        `tensor '${d.name}' needs at least one dimension; write '${d.name}: ${t.dtype}' for a scalar`,
        t.span,
      );
      return undefined;
    }
    const shape: Dim[] = t.dims.map((x) =>
      x.kind === 'sym' ? { kind: 'sym', name: x.name } : { kind: 'lit', value: x.value },
    );
    return { format: t.format, dtype: t.dtype, shape };
  }

  private collectAssigned(ss: readonly AstStmt[]): void {
    for (const s of ss) {
      if (s.kind === 'repeat') this.collectAssigned(s.body);
      else this.assignedAnywhere.add(s.target);
    }
  }

  private id(): string {
    return `op${this.nextId++}`;
  }

  private stmts(ss: readonly AstStmt[]): Op[] {
    const out: Op[] = [];
    for (const s of ss) {
      try {
        out.push(s.kind === 'repeat' ? this.repeat(s) : this.assign(s));
      } catch (e) {
        if (!(e instanceof Abort)) throw e;
        if (s.kind === 'assign') this.poison(s.target);
      }
    }
    return out;
  }

  /** Whether a name is a value's: a parameter, a result, or a temporary (not one whose first assignment failed). */
  private namesValue(name: string): boolean {
    const slot = this.slots.get(name);
    return slot !== undefined && !(slot.kind === 'temp' && slot.info === undefined);
  }

  private poison(name: string): void {
    const slot = this.slots.get(name);
    if (slot && slot.kind !== 'param') slot.defined = true;
    if (slot && slot.kind === 'temp') slot.info = undefined;
    // A temporary whose first assignment failed: later uses are silent (its own error was reported), not 'used
    // before it is assigned' nor 'has no value before the loop'. A dim's name is no temporary: its uses stay checked.
    if (!slot && !this.dims.has(name)) this.slots.set(name, { kind: 'temp', info: undefined, defined: true });
  }

  private repeat(s: Extract<AstStmt, { kind: 'repeat' }>): Op {
    let count: RepeatCount;
    const id = this.id();
    if (s.count.kind === 'lit') {
      if (!Number.isSafeInteger(s.count.value) || s.count.value < 0)
        this.error('DY2015', `repeat count must be a non-negative integer`, s.count.span);
      count = { kind: 'lit', value: s.count.value };
    } else {
      const slot = this.slots.get(s.count.name);
      const t = slot?.info?.type;
      if (!slot || slot.kind !== 'param' || !t || t.shape.length !== 0 || !isIntDtype(t.dtype))
        this.error(
          'DY2015',
          `repeat count '${s.count.name}' must be an integer literal or an i32/i64 scalar parameter`,
          s.count.span,
        );
      count = { kind: 'param', name: s.count.name };
    }
    const before = s.until ? this.slots.get(s.until.name) : undefined;
    const definedBefore = before !== undefined && before.kind !== 'param' && before.defined;
    const body = this.stmts(s.body);
    const until = s.until ? this.until(s.until, s.body, definedBefore) : undefined;
    return { kind: 'repeat', id, count, ...(until ? { until } : {}), body, attrs: {}, span: s.span };
  }

  /** The stop test: a dense value assigned both before the loop and in its body (DY2034-DY2038). */
  private until(
    u: NonNullable<AstRepeat['until']>,
    body: readonly AstStmt[],
    definedBefore: boolean,
  ): Until | undefined {
    const inBody = new Set<string>();
    const collect = (ss: readonly AstStmt[]): void => {
      for (const x of ss) {
        if (x.kind === 'repeat') collect(x.body);
        else inBody.add(x.target);
      }
    };
    collect(body);
    const before = this.diags.length;
    if (!inBody.has(u.name))
      this.error(
        'DY2034',
        `'until ${u.name}': the loop body never assigns '${u.name}', so it cannot change`,
        u.nameSpan,
      );
    else if (!definedBefore && this.slots.get(u.name)?.kind !== 'param')
      // A parameter has its value before the loop; assigning it in the body is DY2009, reported there.
      this.error(
        'DY2035',
        `'until ${u.name}': '${u.name}' has no value before the loop to compare the first trip with; assign it before 'repeat'`,
        u.nameSpan,
      );
    const t = this.slots.get(u.name)?.info?.type;
    if (this.diags.length === before && t) {
      if (t.format !== 'dense')
        this.error(
          'DY2038',
          `'until ${u.name}': '${u.name}' is ${t.format}; only dense values and scalars can be watched`,
          u.nameSpan,
        );
      else if (u.within && !isFloatDtype(t.dtype))
        this.error(
          'DY2037',
          `'within' needs a floating-point value; '${u.name}' is ${t.dtype}: use 'until ${u.name} stable'`,
          u.nameSpan,
        );
    }
    if (u.within && !(Number.isFinite(u.within.value) && u.within.value >= 0))
      this.error('DY2036', `the tolerance after 'within' must be a finite number >= 0`, u.within.span);
    return u.within ? { value: u.name, within: u.within.value } : { value: u.name };
  }

  private assign(s: AstAssign): TensorOp {
    const id = this.id();
    let slot = this.slots.get(s.target);
    if (slot?.kind === 'param') this.abort('DY2009', `cannot assign to parameter '${s.target}'`, s.targetSpan);
    if (this.dims.has(s.target))
      this.abort('DY2008', `'${s.target}' is a dim symbol and cannot be assigned`, s.targetSpan);
    const seen = new Set<string>();
    for (const i of s.indices) {
      if (seen.has(i.name)) this.abort('DY2018', `index '${i.name}' appears twice on the left side`, i.span);
      seen.add(i.name);
      // As on the right side: one name, one meaning in a statement (y[n] = n would make n both).
      if (this.namesValue(i.name) || this.dims.has(i.name))
        this.abort(
          'DY2008',
          `'${i.name}' is used as an index but names a ${this.dims.has(i.name) ? 'dim' : 'value'}`,
          i.span,
        );
    }
    const lowered = this.expr(
      s.expr,
      s.indices.map((i) => i.name),
      [],
    );
    const lhs = new Set(s.indices.map((i) => i.name));
    this.warnConfinedSums(lowered, lhs, s.span);
    const expr = insertImplicitSums(lowered, lhs);
    const declared = slot?.info?.type;
    if (declared && declared.shape.length !== s.indices.length)
      this.abort(
        'DY2003',
        `'${s.target}' has ${declared.shape.length} dimension(s) but is assigned with ${s.indices.length} index(es)`,
        s.targetSpan,
      );
    let type: TensorType;
    let info: ValueInfo;
    try {
      const r = inferStatementType(
        s.indices.map((i) => i.name),
        declared,
        expr,
        (n) => this.slots.get(n)?.info,
      );
      type = r.type;
      info = r.sparsity.root !== undefined ? { type, root: r.sparsity.root } : { type };
    } catch (e) {
      if (e instanceof InferError) this.abort(e.code, e.message, e.span ?? s.span);
      throw e;
    }
    if (!slot) {
      slot = { kind: 'temp', info: undefined, defined: false };
      this.slots.set(s.target, slot);
    }
    slot.info = info;
    slot.defined = true;
    return {
      kind: 'stmt',
      id,
      result: s.target,
      indices: s.indices.map((i) => i.name),
      expr,
      type: slot.kind === 'result' ? type : undefined,
      attrs: {},
      span: s.span,
    };
  }

  /**
   * DY2040 (a warning): an implicit sum whose index occurs in only one
   * operand of a product, e.g. `A[i, j] * x[k]` typed for `A[i, j] * x[j]`,
   * which sums A over j and x over k separately. Explicit sums are taken as
   * meant, and so is a sum alone (`y[i] = A[i, j]`, a row sum) or scaled by
   * values without indices (`d * A[i, j]`).
   */
  private warnConfinedSums(e: Expr, lhs: ReadonlySet<string>, stmtSpan: Span): void {
    const text = (l: { tensor: string; idx: string[] }): string => `${l.tensor}[${l.idx.join(', ')}]`;
    for (const c of confinedSums(e, lhs)) {
      if (c.confined.length === 1) {
        const { index, load } = c.confined[0]!;
        const rest = c.others.map(text).join(' * ');
        this.diags.push(
          makeDiagnostic(
            'DY2040',
            `index '${index}' is summed over but occurs only in ${text(load)}, so ${text(load)} is summed over ${index} on its own and the sum multiplies ${rest}; did you mean ${index} in another operand as well? (write sum(${index}: ...) if this is meant)`,
            load.span ?? stmtSpan,
            'warning',
          ),
        );
      } else {
        const names = c.confined.map((x) => x.index);
        const list = `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
        this.diags.push(
          makeDiagnostic(
            'DY2040',
            `indices ${list} are each summed over but occur in only one operand (${c.confined.map((x) => `${x.index} in ${text(x.load)}`).join(', ')}), so each operand is summed on its own before the product; did you mean one index that the operands share? (write the sums explicitly if this is meant)`,
            c.product.span ?? stmtSpan,
            'warning',
          ),
        );
      }
    }
  }

  /** Lowers an expression; `scope` holds the left-side indices and enclosing reduction indices. */
  private expr(e: AstExpr, lhs: readonly string[], reductions: readonly string[]): Expr {
    const span = e.span;
    switch (e.kind) {
      case 'num':
        return { k: 'const', value: e.value, int: e.isInt, span };
      case 'access': {
        const slot = this.value(e.name, e.nameSpan);
        if (slot.info && slot.info.type.shape.length === 0)
          this.abort('DY2031', `'${e.name}' is a scalar and takes no indices`, e.span);
        const seen = new Set<string>();
        for (const i of e.indices) {
          if (seen.has(i.name) && slot.info?.type.format !== 'dense')
            this.abort('DY2032', `index '${i.name}' appears twice in one access of sparse '${e.name}'`, i.span);
          seen.add(i.name);
          if (this.namesValue(i.name) || this.dims.has(i.name))
            this.abort(
              'DY2008',
              `'${i.name}' is used as an index but names a ${this.dims.has(i.name) ? 'dim' : 'value'}`,
              i.span,
            );
        }
        return { k: 'load', tensor: e.name, idx: e.indices.map((i) => i.name), span };
      }
      case 'ident': {
        if (this.slots.has(e.name)) {
          const slot = this.value(e.name, e.span);
          if (slot.info && slot.info.type.shape.length > 0)
            this.abort(
              'DY2031',
              `'${e.name}' is a tensor with ${slot.info.type.shape.length} dimension(s); index it like ${e.name}[...]`,
              e.span,
            );
          return { k: 'load', tensor: e.name, idx: [], span };
        }
        if (this.dims.has(e.name)) return { k: 'dim', name: e.name, span };
        if (lhs.includes(e.name) || reductions.includes(e.name))
          this.abort('DY2024', `index '${e.name}' cannot be used as a value`, e.span);
        return this.abort('DY2001', `'${e.name}' is not defined`, e.span);
      }
      case 'unary': {
        const arg = this.expr(e.operand, lhs, reductions);
        if (e.op === '-' && arg.k === 'const') return { ...arg, value: -arg.value, span };
        return e.op === '-' ? { k: 'neg', arg, span } : { k: 'not', arg, span };
      }
      case 'binary':
        return {
          k: 'bin',
          op: e.op,
          lhs: this.expr(e.lhs, lhs, reductions),
          rhs: this.expr(e.rhs, lhs, reductions),
          span,
        };
      case 'ternary':
        return {
          k: 'select',
          cond: this.expr(e.cond, lhs, reductions),
          then: this.expr(e.then, lhs, reductions),
          else: this.expr(e.else, lhs, reductions),
          span,
        };
      case 'call': {
        const arity = funcArity(e.fn);
        if (arity === undefined) {
          if (isReduceOp(e.fn))
            this.abort('DY2012', `${e.fn}() reduces over indices: write ${e.fn}(j: expr)`, e.fnSpan);
          this.abort(
            'DY2013',
            `unknown function '${e.fn}': expected relu, exp, log, sqrt, abs, sigmoid, tanh, min, max or pow`,
            e.fnSpan,
          );
        }
        if (e.args.length !== arity)
          this.abort(
            'DY2012',
            `${e.fn}() takes ${arity} argument${arity === 1 ? '' : 's'}, found ${e.args.length}`,
            e.span,
          );
        return { k: 'call', fn: e.fn as FuncName, args: e.args.map((a) => this.expr(a, lhs, reductions)), span };
      }
      case 'reduce': {
        if (!isReduceOp(e.op))
          this.abort('DY2027', `'${e.op}' is not a reduction: expected sum, min, max, any or all`, e.opSpan);
        const seen = new Set<string>();
        for (const i of e.indices) {
          if (lhs.includes(i.name) || reductions.includes(i.name) || seen.has(i.name))
            this.abort('DY2023', `reduction index '${i.name}' is already in scope`, i.span);
          if (this.namesValue(i.name) || this.dims.has(i.name))
            this.abort(
              'DY2008',
              `'${i.name}' is used as an index but names a ${this.dims.has(i.name) ? 'dim' : 'value'}`,
              i.span,
            );
          seen.add(i.name);
        }
        const idx = e.indices.map((i) => i.name);
        const body = this.expr(e.body, lhs, [...reductions, ...idx]);
        for (const i of e.indices) {
          if (!occurs(body, i.name))
            this.abort('DY2029', `reduction index '${i.name}' does not occur in the body`, i.span);
        }
        return { k: 'reduce', op: e.op, idx, body, span };
      }
    }
  }

  private value(name: string, span: Span): Slot {
    const slot = this.slots.get(name);
    if (!slot && !this.assignedAnywhere.has(name)) return this.abort('DY2001', `'${name}' is not defined`, span);
    if (!slot || !slot.defined) return this.abort('DY2014', `'${name}' is used before it is assigned`, span);
    if (!slot.info) throw new Abort(); // its own statement already failed
    return slot;
  }
}

function occurs(e: Expr, idx: string): boolean {
  switch (e.k) {
    case 'load':
      return e.idx.includes(idx);
    case 'const':
    case 'dim':
      return false;
    case 'neg':
    case 'not':
      return occurs(e.arg, idx);
    case 'bin':
      return occurs(e.lhs, idx) || occurs(e.rhs, idx);
    case 'select':
      return occurs(e.cond, idx) || occurs(e.then, idx) || occurs(e.else, idx);
    case 'call':
      return e.args.some((a) => occurs(a, idx));
    case 'reduce':
      return occurs(e.body, idx);
  }
}

/** Checks a parsed program and lowers it to graph IR (undefined if any error). */
export function checkProgram(p: AstProgram): { module: Module | undefined; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const kernels: Kernel[] = [];
  const names = new Map<string, Span>();
  for (const k of p.kernels) {
    const twice = names.has(k.name);
    if (twice) diagnostics.push(makeDiagnostic('DY2017', `kernel '${k.name}' is defined twice`, k.nameSpan));
    else names.set(k.name, k.nameSpan);
    // A second definition's body is checked too (its errors are the user's as much as the first's), not kept.
    const out = new KernelChecker(k, diagnostics).check();
    if (out && !twice) kernels.push(out);
  }
  if (p.kernels.length === 0)
    diagnostics.push(
      makeDiagnostic('DY2033', `the program defines no kernel`, {
        file: p.file,
        line: 1,
        col: 1,
        endLine: 1,
        endCol: 1,
        offset: 0,
        end: 0,
      }),
    );
  const failed = diagnostics.some((d) => d.severity === 'error');
  // In source order: the checker finds some errors out of it (a result never assigned is found at the kernel's end,
  // an until's after its body). Stable, so errors at one place keep the order they were found in.
  diagnostics.sort((a, b) => a.span.line - b.span.line || a.span.col - b.span.col);
  return { module: failed ? undefined : { kernels }, diagnostics };
}
