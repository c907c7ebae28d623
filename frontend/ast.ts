/**
 * The AST produced by the parser: the source program as written, every node
 * with its span. Names are unresolved strings; the checker resolves them and
 * lowers the program to the graph IR.
 */
import type { Span } from '../ir/diagnostics.js';

export interface AstProgram {
  file: string;
  kernels: AstKernel[];
}

export interface AstKernel {
  name: string;
  nameSpan: Span;
  params: AstDecl[];
  results: AstDecl[];
  body: AstStmt[];
  span: Span;
}

export interface AstDecl {
  name: string;
  span: Span;
  type: AstType;
}

/** Format and dtype are raw identifiers; the checker validates them (DY2010, DY2011). */
export type AstType =
  | { kind: 'tensor'; format: string; formatSpan: Span; dtype: string; dtypeSpan: Span; dims: AstDim[]; span: Span }
  | { kind: 'scalar'; dtype: string; dtypeSpan: Span; span: Span };

export type AstDim = { kind: 'sym'; name: string; span: Span } | { kind: 'lit'; value: number; span: Span };

export interface AstIndex {
  name: string;
  span: Span;
}

export type AstStmt = AstAssign | AstRepeat;

/** `T[i, k] = expr;` or, for a scalar, `s = expr;` (indices empty). */
export interface AstAssign {
  kind: 'assign';
  target: string;
  targetSpan: Span;
  indices: AstIndex[];
  expr: AstExpr;
  span: Span;
}

export interface AstRepeat {
  kind: 'repeat';
  count: { kind: 'lit'; value: number; span: Span } | { kind: 'name'; name: string; span: Span };
  /** `until NAME stable` (within undefined) or `until NAME within TOL`: stop once NAME stops changing. */
  until?: { name: string; nameSpan: Span; within?: { value: number; span: Span }; span: Span };
  body: AstStmt[];
  span: Span;
}

export type BinaryOp = '+' | '-' | '*' | '/' | '<' | '<=' | '>' | '>=' | '==' | '!=' | '&&' | '||';
export type UnaryOp = '-' | '!';

export type AstExpr =
  /** `isInt` is true for literals written without '.', exponent or `inf`. */
  | { kind: 'num'; value: number; text: string; isInt: boolean; span: Span }
  | { kind: 'access'; name: string; nameSpan: Span; indices: AstIndex[]; span: Span }
  /** A bare identifier: a scalar parameter, a dim symbol, or (an error) an index. */
  | { kind: 'ident'; name: string; span: Span }
  | { kind: 'unary'; op: UnaryOp; operand: AstExpr; span: Span }
  | { kind: 'binary'; op: BinaryOp; lhs: AstExpr; rhs: AstExpr; span: Span }
  | { kind: 'ternary'; cond: AstExpr; then: AstExpr; else: AstExpr; span: Span }
  /** `f(a, b)`: functions and two-argument min/max. */
  | { kind: 'call'; fn: string; fnSpan: Span; args: AstExpr[]; span: Span }
  /** `op(i, j: body)`: op is whatever identifier was written; the checker validates it (DY2027). */
  | { kind: 'reduce'; op: string; opSpan: Span; indices: AstIndex[]; body: AstExpr; span: Span };
