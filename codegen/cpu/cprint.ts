/**
 * The C dialect of the native CPU target and its printers of loop-IR
 * expressions and statements. The arithmetic is the wasm emitter's
 * (codegen/wasm/emit.ts header) so that, where the order of operations is
 * the same, results equal the wasm backend's bit for bit: every operand is
 * converted to its node's element type, f32 computes in float (no FMA
 * contraction: the library is built with -ffp-contract=off), min/max keep
 * NaN and order -0 below +0 as wasm's f32.min does, exp, log, tanh, pow and
 * sigmoid compute in double as the interpreter does, integer division
 * truncates and a zero divisor gives 0. (A float converted to an integer is
 * a C cast; wasm saturates out-of-range values.)
 */
import type { LElem, LStmt } from '../../ir/loops.js';
import { CExprPrinter, isFloat, NATIVE_BOOL, type CDialect, type LLoad } from '../c/expr.js';
import { cConst, cType, FuncNames } from '../cuda/cprint.js';

const suffix = (t: LElem): string => (t === 'f32' ? 'f32' : t === 'f64' ? 'f64' : t === 'i64' ? 'i64' : 'i32');

export const C_DIALECT: CDialect = {
  constant: cConst,
  bool: NATIVE_BOOL,
  same: (from, to) => cType(from) === cType(to),
  convert: (s, t) => `((${cType(t)})${s})`,
  idiv: (a, b, t) => `dy_idiv_${suffix(t)}(${a}, ${b})`,
  unsigned: (t) => (t === 'i64' ? 'unsigned long long' : 'unsigned'),
  // Both arms as arguments, so both are read: gcc 12.2 at -O3 -march=native if-converted `c ? 1 : K[...]` over a
  // row of 3 into masked loads and wrote 0 into 2 of 72 elements (found by a differential fuzzer; its loop in plain
  // C is wrong too, right with the loads hoisted or -fno-tree-loop-if-convert).
  select: (c, a, b, t) => `dy_sel_${suffix(t)}(${c}, ${a}, ${b})`,
  helper: (fn, t, args) => `dy_${fn}_${suffix(t)}(${args.join(', ')})`,
  mathIn: (fn, t) => fn === 'sqrt' && isFloat(t),
  math: (fn, t, args) =>
    fn === 'sigmoid' || fn === 'pow'
      ? `dy_${fn}(${args.join(', ')})`
      : fn === 'sqrt' && t === 'f32'
        ? `sqrtf(${args.join(', ')})`
        : `${fn}(${args.join(', ')})`,
};

/**
 * The helpers the dialect calls, once per library. relu keeps x where its sign is clear or it is a NaN and
 * gives +0 elsewhere, as `x > 0 ? x : (x != x ? x : 0)` does (the same bits for all 2^32 f32 inputs), in
 * integer operations on the bits: gcc 12's straight-line vectoriser takes no select, and a relu on a column
 * block's accumulators (gcn's relu(A @ T1)) left the whole block scalar, 13x slower than without the relu
 * (docs/PERFORMANCE.md, *The examples against numpy and scipy*).
 */
export const C_HELPERS = `static inline int dy_idiv_i32(int a, int b) { return b == 0 ? 0 : b == -1 ? (int)(0u - (unsigned)a) : a / b; }
static inline long long dy_idiv_i64(long long a, long long b) { return b == 0 ? 0LL : b == -1 ? (long long)(0ull - (unsigned long long)a) : a / b; }
static inline float dy_min_f32(float a, float b) { return (a != a || b != b) ? a + b : a < b ? a : b < a ? b : (signbit(a) ? a : b); }
static inline float dy_max_f32(float a, float b) { return (a != a || b != b) ? a + b : a > b ? a : b > a ? b : (signbit(a) ? b : a); }
static inline float dy_relu_f32(float x) {
  int32_t b;
  memcpy(&b, &x, sizeof b);
  b &= ~(b >> 31) | ((int32_t)(0x7f800000 - (b & 0x7fffffff)) >> 31);
  memcpy(&x, &b, sizeof x);
  return x;
}
static inline float dy_abs_f32(float x) { return fabsf(x); }
static inline double dy_min_f64(double a, double b) { return (a != a || b != b) ? a + b : a < b ? a : b < a ? b : (signbit(a) ? a : b); }
static inline double dy_max_f64(double a, double b) { return (a != a || b != b) ? a + b : a > b ? a : b > a ? b : (signbit(a) ? b : a); }
static inline double dy_relu_f64(double x) {
  int64_t b;
  memcpy(&b, &x, sizeof b);
  b &= ~(b >> 63) | ((int64_t)(0x7ff0000000000000LL - (b & 0x7fffffffffffffffLL)) >> 63);
  memcpy(&x, &b, sizeof x);
  return x;
}
static inline double dy_abs_f64(double x) { return fabs(x); }
static inline int dy_min_i32(int a, int b) { return a < b ? a : b; }
static inline int dy_max_i32(int a, int b) { return a > b ? a : b; }
static inline int dy_relu_i32(int x) { return x > 0 ? x : 0; }
static inline int dy_abs_i32(int x) { return x >= 0 ? x : (int)(0u - (unsigned)x); }
static inline long long dy_min_i64(long long a, long long b) { return a < b ? a : b; }
static inline long long dy_max_i64(long long a, long long b) { return a > b ? a : b; }
static inline long long dy_relu_i64(long long x) { return x > 0 ? x : 0; }
static inline long long dy_abs_i64(long long x) { return x >= 0 ? x : (long long)(0ull - (unsigned long long)x); }
static inline double dy_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline float dy_sel_f32(int c, float a, float b) { return c ? a : b; }
static inline double dy_sel_f64(int c, double a, double b) { return c ? a : b; }
static inline int dy_sel_i32(int c, int a, int b) { return c ? a : b; }
static inline long long dy_sel_i64(int c, long long a, long long b) { return c ? a : b; }
static inline double dy_pow(double x, double y) { return y != y || ((x == 1.0 || x == -1.0) && isinf(y)) ? NAN : pow(x, y); }
`;

/** Expressions of one LoopFunc; `rename` substitutes C text for a variable (the strip-mined column loop's lanes). */
export class CPrinter extends CExprPrinter {
  constructor(
    readonly names: FuncNames,
    private readonly rename: ReadonlyMap<string, string> = new Map(),
  ) {
    super(C_DIALECT);
  }

  with(rename: ReadonlyMap<string, string>): CPrinter {
    return new CPrinter(this.names, new Map([...this.rename, ...rename]));
  }

  varElem(name: string): LElem {
    const t = this.names.vars.get(name);
    if (t === undefined) throw new Error(`native cpu emitter: ${this.names.f.name}: unknown variable '${name}'`);
    return t;
  }

  bufElem(buf: string): LElem {
    return this.names.buf(buf).elem;
  }

  var(name: string): string {
    return this.rename.get(name) ?? this.names.v(name);
  }

  load(e: LLoad): string {
    return `${this.names.buf(e.buf).c}[${this.as(e.index, 'index')}]`;
  }
}

export type For = Extract<LStmt, { k: 'for' }>;

/** Prints statements; `forHook` may print a loop its own way (the strip-mined column loop). */
export class CStmtPrinter {
  constructor(
    public p: CPrinter,
    private readonly forHook?: (s: For, ind: string, me: CStmtPrinter) => string[] | undefined,
    /** Shared by every printer of one function, so that fresh names never repeat. */
    private readonly counter = { n: 0 },
  ) {}

  fresh(prefix: string): string {
    return `dy_${prefix}${this.counter.n++}`;
  }

  /** The same printer over another expression printer (renamed variables), sharing fresh names. */
  over(p: CPrinter): CStmtPrinter {
    return new CStmtPrinter(p, this.forHook, this.counter);
  }

  block(ss: readonly LStmt[], ind: string): string[] {
    return ss.flatMap((s) => this.stmt(s, ind));
  }

  stmt(s: LStmt, ind: string): string[] {
    const p = this.p;
    switch (s.k) {
      case 'for':
        return this.forHook?.(s, ind, this) ?? this.forStmt(s, ind);
      case 'let':
        if (!p.names.used.has(s.var)) return [];
        return [`${ind}${cType(s.type)} ${p.var(s.var)} = ${p.as(s.value, s.type)};`];
      case 'set':
        return [`${ind}${p.var(s.var)} = ${p.as(s.value, p.names.vars.get(s.var)!)};`];
      case 'store': {
        const b = p.names.buf(s.buf);
        const value = b.elem === 'bool' ? `(${p.as(s.value, 'bool')} ? 1 : 0)` : p.as(s.value, b.elem);
        return [`${ind}${b.c}[${p.as(s.index, 'index')}] = ${value};`];
      }
      case 'if': {
        const out = [`${ind}if (${p.truthy(s.cond)}) {`, ...this.block(s.then, `${ind}  `)];
        if (s.else) out.push(`${ind}} else {`, ...this.block(s.else, `${ind}  `));
        out.push(`${ind}}`);
        return out;
      }
    }
  }

  forStmt(s: For, ind: string, lo?: string, hi?: string): string[] {
    const p = this.p;
    const v = p.var(s.var);
    const end = this.fresh('end');
    return [
      `${ind}for (int ${v} = ${lo ?? p.as(s.lo, 'index')}, ${end} = ${hi ?? p.as(s.hi, 'index')}; ${v} < ${end}; ++${v}) {`,
      ...this.block(s.body, `${ind}  `),
      `${ind}}`,
    ];
  }
}
