/**
 * Typing rules of tensor statements, shared by the frontend checker (which
 * turns failures into diagnostics at source spans) and the infer-types pass
 * and verifier (which re-derive types from the IR text alone). One place
 * decides dtypes, index ranges and the structural-sparsity rule.
 */
import type { DiagCode, Span } from './diagnostics.js';
import { children, isCompare, isLogic, walkExpr, type Expr } from './expr.js';
import {
  dimEquals,
  dimToString,
  isFloatDtype,
  isIntDtype,
  type Dim,
  type Dtype,
  type Format,
  type TensorType,
} from './types.js';

/** What a statement may know about a value it reads. */
export interface ValueInfo {
  type: TensorType;
  /** For sparse values: the value whose stored-entry list this one shares (entry for entry). */
  root?: string;
}
export type Env = (name: string) => ValueInfo | undefined;

export class InferError extends Error {
  constructor(
    public readonly code: DiagCode,
    message: string,
    public readonly span?: Span,
  ) {
    super(message);
  }
}

/** A dtype, or a literal's "takes the dtype it meets" class. */
export type DT = { strong: Dtype } | { weak: 'int' | 'float' };

const fail = (code: DiagCode, msg: string, e?: { span?: Span }): never => {
  throw new InferError(code, msg, e?.span);
};

function show(dt: DT): string {
  return 'strong' in dt ? dt.strong : dt.weak === 'int' ? 'integer literal' : 'decimal literal';
}

function lookup(env: Env, name: string, at: Expr): ValueInfo {
  const v = env(name);
  if (!v) return fail('DY2001', `'${name}' is not defined`, at);
  return v;
}

/** Unifies the dtypes of two operands of one arithmetic or comparison node. */
export function unify(a: DT, b: DT, at: Expr): DT {
  if ('strong' in a && 'strong' in b) {
    if (a.strong !== b.strong) fail('DY2007', `operands have different dtypes: ${a.strong} and ${b.strong}`, at);
    return a;
  }
  if ('strong' in a || 'strong' in b) {
    const s = ('strong' in a ? a : b) as { strong: Dtype };
    const w = ('weak' in a ? a : b) as { weak: 'int' | 'float' };
    if (s.strong === 'bool') fail('DY2021', `a bool operand cannot meet a number`, at);
    if (w.weak === 'float' && isIntDtype(s.strong))
      fail('DY2020', `a decimal literal cannot meet an integer (${s.strong}) operand`, at);
    return s;
  }
  const wa = (a as { weak: 'int' | 'float' }).weak;
  const wb = (b as { weak: 'int' | 'float' }).weak;
  return { weak: wa === 'float' || wb === 'float' ? 'float' : 'int' };
}

const isBool = (d: DT): boolean => 'strong' in d && d.strong === 'bool';
const isNumeric = (d: DT): boolean => !isBool(d);

/** Bottom-up dtype of an expression; throws InferError on a violated rule. */
export function exprDtype(e: Expr, env: Env): DT {
  switch (e.k) {
    case 'const':
      return { weak: e.int ? 'int' : 'float' };
    case 'dim':
      return { weak: 'int' };
    case 'load':
      return { strong: lookup(env, e.tensor, e).type.dtype };
    case 'neg': {
      const d = exprDtype(e.arg, env);
      if (!isNumeric(d)) fail('DY2021', `unary '-' needs a number, found bool`, e);
      return d;
    }
    case 'not': {
      const d = exprDtype(e.arg, env);
      if (!isBool(d)) fail('DY2021', `'!' needs a bool, found ${show(d)}`, e);
      return d;
    }
    case 'bin': {
      const l = exprDtype(e.lhs, env);
      const r = exprDtype(e.rhs, env);
      if (isLogic(e.op)) {
        if (!isBool(l) || !isBool(r))
          fail('DY2021', `'${e.op}' needs bool operands, found ${show(l)} and ${show(r)}`, e);
        return { strong: 'bool' };
      }
      if (isCompare(e.op)) {
        const u = unify(l, r, e);
        if (isBool(u) && e.op !== '==' && e.op !== '!=') fail('DY2021', `'${e.op}' cannot order bools`, e);
        return { strong: 'bool' };
      }
      if (isBool(l) || isBool(r)) fail('DY2021', `'${e.op}' needs numbers, found ${show(l)} and ${show(r)}`, e);
      return unify(l, r, e);
    }
    case 'select': {
      const c = exprDtype(e.cond, env);
      if (!isBool(c)) fail('DY2021', `the condition of '?:' must be bool, found ${show(c)}`, e.cond);
      return unify(exprDtype(e.then, env), exprDtype(e.else, env), e);
    }
    case 'call': {
      const ds = e.args.map((a) => exprDtype(a, env));
      for (const d of ds) if (!isNumeric(d)) fail('DY2021', `${e.fn}() needs numbers, found bool`, e);
      let d = ds[0]!;
      for (let i = 1; i < ds.length; i++) d = unify(d, ds[i]!, e);
      const floatOnly = ['exp', 'log', 'sqrt', 'sigmoid', 'tanh', 'pow'].includes(e.fn);
      if (floatOnly) {
        if ('strong' in d && !isFloatDtype(d.strong))
          fail('DY2021', `${e.fn}() needs a floating-point operand, found ${d.strong}`, e);
        if ('weak' in d) return { weak: 'float' };
      }
      return d;
    }
    case 'reduce': {
      const d = exprDtype(e.body, env);
      if (e.op === 'any' || e.op === 'all') {
        if (!isBool(d)) fail('DY2021', `${e.op}() needs a bool body, found ${show(d)}`, e);
      } else if (!isNumeric(d)) fail('DY2021', `${e.op}() needs a numeric body, found bool`, e);
      return d;
    }
  }
}

/** Default dtype of a literal-only expression with nothing to meet. */
export function defaultDtype(d: DT): Dtype {
  return 'strong' in d ? d.strong : d.weak === 'int' ? 'i64' : 'f64';
}

/** The dtype a statement stores: the target's, unified with the right side. */
export function statementDtype(target: Dtype | undefined, e: Expr, env: Env): Dtype {
  const rhs = exprDtype(e, env);
  if (target === undefined) return defaultDtype(rhs);
  if ('strong' in rhs) {
    if (rhs.strong !== target) fail('DY2007', `the right side is ${rhs.strong} but the target is ${target}`, e);
    return target;
  }
  if (target === 'bool') fail('DY2021', `a number cannot be stored in a bool target`, e);
  if (rhs.weak === 'float' && isIntDtype(target))
    fail('DY2020', `a decimal literal cannot be stored in an integer (${target}) target`, e);
  return target;
}

const I32_MAX = 2 ** 31 - 1;

/**
 * DY2041 for an integer literal that does not fit the i32 it takes (2^31 is
 * allowed negated, as -2147483648): the backends would wrap or clamp it while
 * the reference kept it. i64 literals are within 2^53 - 1 already (DY1003).
 */
function checkLiteralRanges(e: Expr, env: Env, dtype: Dtype): void {
  let beyond = false;
  walkExpr(e, (n) => {
    if (n.k === 'const' && n.int && Math.abs(n.value) > I32_MAX) beyond = true;
  });
  if (!beyond) return;
  const dtypes = resolveDtypes(e, env, dtype);
  const visit = (n: Expr, negated: boolean): void => {
    if (n.k === 'const' && n.int && dtypes.get(n) === 'i32') {
      const v = negated ? -n.value : n.value;
      if (v > I32_MAX || v < -I32_MAX - 1)
        fail('DY2041', `the integer literal ${n.value} does not fit i32 (-2147483648..2147483647)`, n);
    }
    for (const c of children(n)) visit(c, n.k === 'neg');
  };
  visit(e, false);
}

/**
 * Concrete dtype of every node, pushing a statement's dtype down into
 * literal-only subexpressions ("integer literals take the dtype of the
 * expression they meet"). Backends need it for integer division and casts.
 */
export function resolveDtypes(e: Expr, env: Env, ctx: Dtype): Map<Expr, Dtype> {
  const out = new Map<Expr, Dtype>();
  const go = (n: Expr, want: Dtype): void => {
    const d = exprDtype(n, env);
    const mine = 'strong' in d ? d.strong : want === 'bool' ? defaultDtype(d) : want;
    out.set(n, mine);
    if (n.k === 'bin' && isCompare(n.op)) {
      const u = unify(exprDtype(n.lhs, env), exprDtype(n.rhs, env), n);
      const operand = defaultDtype(u);
      go(n.lhs, operand);
      go(n.rhs, operand);
      return;
    }
    if (n.k === 'select') {
      go(n.cond, 'bool');
      go(n.then, mine);
      go(n.else, mine);
      return;
    }
    for (const c of children(n)) go(c, mine);
  };
  go(e, ctx);
  return out;
}

/**
 * The range (dim) of every index of a statement: from the target's declared
 * shape and from every position an index occupies in a tensor access. All
 * must agree; every index must get one.
 */
export function indexRanges(
  indices: readonly string[],
  targetShape: readonly Dim[] | undefined,
  e: Expr,
  env: Env,
): Map<string, Dim> {
  const ranges = new Map<string, { dim: Dim; from: string }>();
  const note = (idx: string, dim: Dim, from: string, at?: Expr): void => {
    const prev = ranges.get(idx);
    if (!prev) ranges.set(idx, { dim, from });
    else if (!dimEquals(prev.dim, dim))
      fail(
        'DY2006',
        `index '${idx}' ranges over ${dimToString(prev.dim)} in ${prev.from} but over ${dimToString(dim)} in ${from}`,
        at,
      );
  };
  if (targetShape) indices.forEach((idx, p) => note(idx, targetShape[p]!, 'the target'));
  const bound = new Set<string>(indices);
  walkExpr(e, (n) => {
    if (n.k === 'reduce') n.idx.forEach((i) => bound.add(i));
    if (n.k !== 'load') return;
    const t = lookup(env, n.tensor, n).type;
    if (t.shape.length !== n.idx.length)
      fail('DY2003', `'${n.tensor}' has ${t.shape.length} dimension(s) but is indexed with ${n.idx.length}`, n);
    n.idx.forEach((idx, p) => note(idx, t.shape[p]!, `${n.tensor}[${n.idx.join(', ')}]`, n));
  });
  const out = new Map<string, Dim>();
  for (const idx of bound) {
    const r = ranges.get(idx);
    if (!r) fail('DY2002', `index '${idx}' has no range: it indexes no tensor`, e);
    out.set(idx, r!.dim);
  }
  return out;
}

export interface Sparsity {
  /** Format of the result: the target's, or inferred for a temporary. */
  format: Format;
  /** For a sparse result: the access whose stored entries it takes (same indices as the left side). */
  patternSource?: string;
  /** Pattern root the result shares, when sparse and in the source's format. */
  root?: string;
  /** Each reduction visited only over stored entries, with the sparse tensor that drives it. */
  drivers: Map<Expr, string>;
  /** A dense result reading sparse operands at its own positions (missing entries read as 0). */
  densify: boolean;
}

const rootOf = (env: Env, name: string): string => env(name)?.root ?? name;

/**
 * The structural-sparsity rule (docs/LANGUAGE.md): a reduction over an
 * index of a sparse operand visits only its stored entries; a sparse operand
 * indexed exactly like the left side gives the result its pattern. Any other
 * use of a sparse operand has no meaning and is rejected.
 */
export function analyzeSparsity(indices: readonly string[], target: Format | undefined, e: Expr, env: Env): Sparsity {
  const drivers = new Map<Expr, string>();
  const sources: Extract<Expr, { k: 'load' }>[] = [];
  const permuted: Extract<Expr, { k: 'load' }>[] = [];
  const lhs = indices.join(',');
  const visit = (n: Expr, reductions: Extract<Expr, { k: 'reduce' }>[]): void => {
    if (n.k === 'reduce') {
      visit(n.body, [...reductions, n]);
      return;
    }
    if (n.k === 'load') {
      const t = lookup(env, n.tensor, n).type;
      if (t.format !== 'dense') {
        if (new Set(n.idx).size !== n.idx.length)
          fail('DY2005', `sparse '${n.tensor}' cannot repeat an index (${n.tensor}[${n.idx.join(', ')}])`, n);
        const owner = [...reductions].reverse().find((r) => r.idx.some((i) => n.idx.includes(i)));
        if (owner) {
          const prev = drivers.get(owner);
          if (prev === undefined) drivers.set(owner, n.tensor);
          else if (rootOf(env, prev) !== rootOf(env, n.tensor))
            fail(
              'DY2025',
              `'${prev}' and '${n.tensor}' both drive this ${owner.op}() and have different sparsity patterns`,
              n,
            );
        } else if (n.idx.join(',') === lhs) sources.push(n);
        else if (n.idx.every((i) => indices.includes(i))) permuted.push(n);
        else
          fail(
            'DY2005',
            `sparse '${n.tensor}[${n.idx.join(', ')}]' has no meaning here: reduce over one of its indices, or index it exactly like the left side [${indices.join(', ')}]`,
            n,
          );
      }
      return;
    }
    for (const c of children(n)) visit(c, reductions);
  };
  visit(e, []);
  // Every operand that drives a reduction must share the driver's entry order.
  // A second access of the same pattern with other indices (A[i,j] + A[j,k]
  // under one min(j, k: ...)) would need a join of two entry lists: rejected,
  // the nested form min(j: A[i,j] + min(k: A[j,k] ...)) says it directly.
  for (const [red, drv] of drivers) {
    const d = loadsOfTensor(red, drv).find((l) =>
      l.idx.some((i) => (red as Extract<Expr, { k: 'reduce' }>).idx.includes(i)),
    )!;
    const check = (n: Expr): void => {
      if (n.k === 'reduce' && n !== red && drivers.has(n)) return; // a nested reduction with a driver of its own
      if (
        n.k === 'load' &&
        n !== d &&
        env(n.tensor)?.type.format !== 'dense' &&
        rootOf(env, n.tensor) === rootOf(env, drv) &&
        d.idx.join(',') !== n.idx.join(',')
      )
        fail(
          'DY2005',
          `'${n.tensor}[${n.idx.join(', ')}]' shares the pattern of '${drv}[${d.idx.join(', ')}]', which drives this ${(red as Extract<Expr, { k: 'reduce' }>).op}(), but is indexed differently; nest the reductions instead`,
          n,
        );
      children(n).forEach(check);
    };
    check(red);
  }
  const roots = new Set(sources.map((s) => rootOf(env, s.tensor)));
  if (target === 'dense') return { format: 'dense', drivers, densify: sources.length + permuted.length > 0 };
  if (permuted.length > 0) {
    const p = permuted[0]!;
    fail(
      'DY2005',
      `sparse '${p.tensor}[${p.idx.join(', ')}]' is indexed in another order than the left side [${indices.join(', ')}]; a sparse result cannot transpose its pattern (declare the result dense)`,
      p,
    );
  }
  if (roots.size > 1) {
    const [a, b] = sources.filter(
      (s, i) => sources.findIndex((t) => rootOf(env, t.tensor) === rootOf(env, s.tensor)) === i,
    );
    fail(
      'DY2025',
      `'${a!.tensor}' and '${b!.tensor}' both give the result's pattern and have different sparsity patterns`,
      b,
    );
  }
  if (sources.length === 0) {
    if (target !== undefined)
      fail(
        'DY2026',
        `the result is ${target} but no sparse operand is indexed like the left side [${indices.join(', ')}] to give its pattern`,
        e,
      );
    return { format: 'dense', drivers, densify: false };
  }
  const src = sources[0]!;
  const srcFormat = env(src.tensor)!.type.format;
  const format = target ?? srcFormat;
  return format === srcFormat
    ? { format, patternSource: src.tensor, root: rootOf(env, src.tensor), drivers, densify: false }
    : { format, patternSource: src.tensor, drivers, densify: false };
}

function loadsOfTensor(e: Expr, name: string): Extract<Expr, { k: 'load' }>[] {
  const out: Extract<Expr, { k: 'load' }>[] = [];
  walkExpr(e, (n) => {
    if (n.k === 'load' && n.tensor === name) out.push(n);
  });
  return out;
}

/** The full type of a statement's result. */
export function inferStatementType(
  indices: readonly string[],
  declared: TensorType | undefined,
  e: Expr,
  env: Env,
): { type: TensorType; sparsity: Sparsity } {
  const ranges = indexRanges(indices, declared?.shape, e, env);
  const dtype = statementDtype(declared?.dtype, e, env);
  checkLiteralRanges(e, env, dtype);
  const sparsity = analyzeSparsity(indices, declared?.format, e, env);
  const shape = indices.map((i) => ranges.get(i)!);
  if (sparsity.format !== 'dense' && shape.length !== 2) fail('DY2016', `a sparse result must have two dimensions`, e);
  return { type: { format: sparsity.format, dtype, shape }, sparsity };
}
