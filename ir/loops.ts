/**
 * The kernel-level loop IR (docs/ARCHITECTURE.md): one small loop nest per
 * tensor op, over flat buffers. Dense tensors are row-major buffers indexed
 * by explicit arithmetic; a sparse operand is reached only through the
 * buffers of one layout (rowPtr/colIdx = CSR, colPtr/rowIdx = CSC) and a
 * values buffer aligned with that layout. The wasm, CUDA, HLS and C emitters
 * print this IR; none of them re-derives loops from index notation.
 *
 * Arithmetic nodes carry their element type so that an emitter never has to
 * infer one (integer division, literal widths, casts of dims to values).
 */

/** Element types of buffers and scalar values; `index` is a position or size (i32 in every emitter). */
export type LElem = 'f32' | 'f64' | 'i32' | 'i64' | 'bool' | 'index';

export type BufferRole = 'dense' | 'values' | 'rowPtr' | 'colIdx' | 'colPtr' | 'rowIdx' | 'scalar';

export interface LBuffer {
  name: string;
  elem: LElem;
  role: BufferRole;
  /** The graph-IR value the buffer holds (part of). */
  of: string;
  /** Sparse buffers: the layout they belong to; values in this layout's entry order. */
  layout?: 'csr' | 'csc';
}

/** `idiv` truncates toward zero and yields 0 for a zero divisor (the interpreter's rule). */
export type LBinOp = '+' | '-' | '*' | '/' | 'idiv' | '<' | '<=' | '>' | '>=' | '==' | '!=' | '&&' | '||';
export type LUnOp = 'neg' | 'not';
export type LFunc = 'relu' | 'exp' | 'log' | 'sqrt' | 'abs' | 'sigmoid' | 'tanh' | 'min' | 'max' | 'pow';

export type LExpr =
  | { k: 'const'; value: number; type: LElem }
  /** A loop variable, a local, or a size (dim symbol). */
  | { k: 'var'; name: string }
  | { k: 'load'; buf: string; index: LExpr }
  | { k: 'bin'; op: LBinOp; lhs: LExpr; rhs: LExpr; type: LElem }
  | { k: 'un'; op: LUnOp; arg: LExpr; type: LElem }
  | { k: 'call'; fn: LFunc; args: LExpr[]; type: LElem }
  | { k: 'select'; cond: LExpr; then: LExpr; else: LExpr; type: LElem }
  | { k: 'cast'; to: LElem; arg: LExpr };

export type LStmt =
  /** Iterates var over [lo, hi). `parallel`: iterations are independent (the schedules split this loop). */
  | { k: 'for'; var: string; lo: LExpr; hi: LExpr; parallel: boolean; body: LStmt[] }
  | { k: 'let'; var: string; type: LElem; value: LExpr }
  /** Updates a local declared by `let` (accumulators, search results). */
  | { k: 'set'; var: string; value: LExpr }
  | { k: 'store'; buf: string; index: LExpr; value: LExpr }
  | { k: 'if'; cond: LExpr; then: LStmt[]; else?: LStmt[] };

export interface LoopFunc {
  /** Id of the tensor op it implements. */
  op: string;
  /** Kernel and op, for symbols in emitted code. */
  name: string;
  /** The value the op computes, and the buffer it is written to. */
  result: string;
  out: string;
  buffers: LBuffer[];
  /** Dim symbols and nnz(X) the body refers to or the caller must size the output by. */
  sizes: string[];
  body: LStmt[];
  /** Schedule variants the cost model knows for this op. */
  schedules: string[];
}

export const lconst = (value: number, type: LElem): LExpr => ({ k: 'const', value, type });
export const lvar = (name: string): LExpr => ({ k: 'var', name });
export const lload = (buf: string, index: LExpr): LExpr => ({ k: 'load', buf, index });
export const ladd = (lhs: LExpr, rhs: LExpr): LExpr => ({ k: 'bin', op: '+', lhs, rhs, type: 'index' });
export const lmul = (lhs: LExpr, rhs: LExpr): LExpr => ({ k: 'bin', op: '*', lhs, rhs, type: 'index' });
