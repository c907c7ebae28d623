/**
 * Vectors of columns per lane for the SpMM-shaped loops of the warp
 * schedules (GE-SpMM/Sputnik style): a lane owns V consecutive columns of a
 * column loop (codegen/c/columns.ts), keeps V accumulators in registers,
 * walks the row's entries once for all of them, and reads each dense row
 * it gathers, and writes each output row, as one 16-byte vector (float4,
 * double2) where the index is a row of the dense width plus the column.
 * Everything else in the body is printed once per column, renamed. The
 * launch runs such a kernel only when V divides the width and every vector
 * buffer is 16-byte aligned (runtime/catalogue/gpu.ts denseVector).
 */
import type { LElem, LExpr, LStmt } from '../../ir/loops.js';
import { DENSE_VECTOR } from '../../runtime/catalogue/gpu.js';
import { mentions } from '../c/columns.js';
import { StmtPrinter, type ExprPrinter } from './cprint.js';
import { loads } from './nest.js';

const COMPONENTS = ['x', 'y', 'z', 'w'] as const;

/** The vector widths a schedule tries, widest first (DENSE_VECTOR's, above 1). */
export const VECTOR_WIDTHS: readonly number[] = [...new Set(Object.values(DENSE_VECTOR))]
  .filter((v) => v > 1)
  .sort((a, b) => b - a);

/** Host C of the test that a pointer is 16-byte aligned (a vector kernel's precondition). */
export const aligned16 = (ptr: string): string => `(reinterpret_cast<uintptr_t>(${ptr}) & 15u) == 0`;

/** CUDA's 16-byte vector of V elements of type t, if there is one. */
export function vectorType(t: LElem, v: number): string | undefined {
  if (t === 'f32' && v === 4) return 'float4';
  if (t === 'f64' && v === 2) return 'double2';
  return undefined;
}

const same = (a: LExpr, b: LExpr): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Whether f is a factor of the product e (or e itself). */
function hasFactor(e: LExpr, f: LExpr): boolean {
  if (same(e, f)) return true;
  return e.k === 'bin' && e.op === '*' && (hasFactor(e.lhs, f) || hasFactor(e.rhs, f));
}

/**
 * Whether an index is X + col with X a multiple of the column loop's width
 * (a product with it as a factor) that reads none of `varying`: then the V
 * columns from a multiple of V are one aligned vector when V divides the width.
 */
function vectorIndex(index: LExpr, col: string, width: LExpr, varying: ReadonlySet<string>): boolean {
  if (index.k !== 'bin' || index.op !== '+') return false;
  const isCol = (e: LExpr): boolean => e.k === 'var' && e.name === col;
  const x = isCol(index.rhs) ? index.lhs : isCol(index.lhs) ? index.rhs : undefined;
  return x !== undefined && !mentions(x, varying) && hasFactor(x, width);
}

/** One lane's V columns: the C names each column's copy of a replicated variable takes, and the vectors in scope. */
export class ColumnJam {
  /** Per column u, IR variable to C text: the column, the accumulators and the lets that read them. */
  readonly renames: Map<string, string>[];
  /** IR variables that differ between the columns. */
  readonly vars: Set<string>;

  constructor(
    readonly v: number,
    /** The column loop's variable and its end (the dense width). */
    readonly col: string,
    readonly width: LExpr,
    /** C name of the lane's first column. */
    first: string,
  ) {
    this.vars = new Set([col]);
    this.renames = Array.from({ length: v }, (_, u) => new Map([[col, u === 0 ? first : `(${first} + ${u})`]]));
  }

  /** A variable declared per column: column u's copy is `dy_<name>_<u>` (the dy_ prefix is the emitter's alone). */
  replicate(irVar: string, cname: string): void {
    this.vars.add(irVar);
    this.renames.forEach((m, u) => m.set(irVar, `dy_${cname}_${u}`));
  }

  /**
   * Marks the locals of `body` that differ between the columns: those whose value reads a column-varying
   * variable, and those a varying value is assigned to (a nested reduction's accumulator, declared from a
   * constant, is each column's own). False where the body cannot be printed once per column: a loop bound or
   * a condition that differs between the columns.
   */
  spread(body: readonly LStmt[]): boolean {
    for (let grew = true; grew;) {
      grew = false;
      const mark = (v: string, e: LExpr): void => {
        if (!this.vars.has(v) && mentions(e, this.vars)) {
          this.vars.add(v);
          grew = true;
        }
      };
      const walk = (ss: readonly LStmt[]): boolean =>
        ss.every((s) => {
          switch (s.k) {
            case 'let':
            case 'set':
              mark(s.var, s.value);
              return true;
            case 'store':
              return true;
            case 'for':
              return !mentions(s.lo, this.vars) && !mentions(s.hi, this.vars) && walk(s.body);
            case 'if':
              return !mentions(s.cond, this.vars) && walk(s.then) && walk(s.else ?? []);
          }
        });
      if (!walk(body)) return false;
    }
    return true;
  }

  /** Whether the statement differs between the columns. */
  touches(s: Extract<LStmt, { k: 'let' | 'set' | 'store' }>): boolean {
    if (s.k === 'let') return this.vars.has(s.var) || mentions(s.value, this.vars);
    if (s.k === 'set') return this.vars.has(s.var) || mentions(s.value, this.vars);
    return mentions(s.index, this.vars) || mentions(s.value, this.vars);
  }

  vectorIndex(index: LExpr): boolean {
    return vectorIndex(index, this.col, this.width, this.vars);
  }

  /** The component of vector `name` that column u reads. */
  component(name: string, u: number): string {
    return `${name}.${COMPONENTS[u]!}`;
  }
}

/** What jamStatement needs of the printer it prints for. */
export interface JamContext {
  jam: ColumnJam;
  /** The printer in effect (its renames and load hooks: shared-memory entries). */
  p: ExprPrinter;
  fresh: (prefix: string) => string;
  /** Buffers the op writes: never read as vectors. */
  written: ReadonlySet<string>;
  /** Collects the buffers read or written as vectors (the launch checks their alignment). */
  vectorBufs: Set<string>;
  /** The condition a store here is made under ('' for none). */
  storeGuard: string;
  /** Prints the statement as it would be without the jam, with printer q. */
  plain: (q: ExprPrinter, s: LStmt, ind: string) => string[];
}

/** The context of a statement printer (its renames, fresh names and base rules) for jamStatement. */
export function jamContext(
  sp: StmtPrinter,
  jam: ColumnJam,
  written: ReadonlySet<string>,
  vectorBufs: Set<string>,
  storeGuard: string,
): JamContext {
  return {
    jam,
    p: sp.p,
    fresh: (x) => sp.fresh(x),
    written,
    vectorBufs,
    storeGuard,
    plain: (q, x, i) => sp.baseStmt(q, x, i),
  };
}

/**
 * A statement of a vector column loop, once per column: its vector loads first (each declared once, each column
 * reading its component), a store as one vector where its index allows, else a copy per column, renamed.
 */
export function jamStatement(
  ctx: JamContext,
  s: Extract<LStmt, { k: 'let' | 'set' | 'store' }>,
  ind: string,
): string[] {
  const { jam, p: base } = ctx;
  if (s.k === 'let') jam.replicate(s.var, base.var(s.var));
  const first = base.with(jam.renames[0]!);
  const out: string[] = [];
  const vectors = new Map<string, string>();
  for (const e of s.k === 'store' ? [s.index, s.value] : [s.value]) {
    for (const l of loads(e)) {
      const key = JSON.stringify(l);
      const vt = vectorType(base.bufElem(l.buf), jam.v);
      if (vectors.has(key) || vt === undefined || ctx.written.has(l.buf) || !jam.vectorIndex(l.index)) continue;
      const name = ctx.fresh('v');
      vectors.set(key, name);
      ctx.vectorBufs.add(l.buf);
      out.push(
        `${ind}const ${vt} ${name} = *reinterpret_cast<const ${vt}*>(&${base.names.buf(l.buf).c}[${first.index(l.index)}]);`,
      );
    }
  }
  const copies = jam.renames.map((r, u) =>
    base.over(r, (l) => {
      const name = vectors.get(JSON.stringify(l));
      return name === undefined ? undefined : jam.component(name, u);
    }),
  );
  const vt = s.k === 'store' ? vectorType(base.bufElem(s.buf), jam.v) : undefined;
  if (s.k === 'store' && vt !== undefined && jam.vectorIndex(s.index)) {
    ctx.vectorBufs.add(s.buf);
    const values = copies.map((q) => q.as(s.value, base.bufElem(s.buf)));
    const target = `*reinterpret_cast<${vt}*>(&${base.names.buf(s.buf).c}[${first.index(s.index)}])`;
    const line = `${target} = make_${vt}(${values.join(', ')});`;
    out.push(`${ind}${ctx.storeGuard === '' ? line : `if (${ctx.storeGuard}) ${line}`}`);
    return out;
  }
  for (const q of copies) out.push(...ctx.plain(q, s, ind));
  return out;
}

/** A statement printer whose column-varying statements are jammed (jamStatement): merge-path's fold, adaptive-rows' long rows. */
export class JamPrinter extends StmtPrinter {
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
