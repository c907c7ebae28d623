/**
 * The programs the backend fuzzer draws (test/fuzz/backends.test.ts): their
 * syntax tree, the dype source printed from it, what an expression mentions,
 * and the bounds the generator, its checker and the inputs share.
 */

/** The largest row, column and feature counts of the inputs; the static check bounds values with them. */
export const MAX_EXTENT = { rows: 600, k: 64 };
/** Most trips of a generated loop; the static check assumes as many for a count given as an input (which is 0-3). */
export const MAX_TRIPS = 8;

export type Num = 'f32' | 'f64' | 'i32' | 'i64';
export type Ty = Num | 'bool';
export type Dim = 'm' | 'n' | 'k';
export type SparseFormat = 'csr' | 'csc' | 'coo';
export const NUMS: readonly Num[] = ['f32', 'f64', 'i32', 'i64'];
export const FORMATS: readonly SparseFormat[] = ['csr', 'csc', 'coo'];
export const isFloat = (t: Ty): boolean => t === 'f32' || t === 'f64';

export type UnaryOp =
  | 'neg'
  | 'abs'
  | 'relu'
  | 'exp'
  | 'log1'
  | 'sqrt'
  | 'sqrt1'
  | 'tanh'
  | 'sigmoid'
  | 'pow2'
  | 'pow3'
  | 'powHalf'
  | 'powInv';
export type BinaryOp = '+' | '-' | '*' | '/' | 'min' | 'max';
export type CmpOp = '<' | '<=' | '>' | '>=' | '==' | '!=';
export type ReduceOp = 'sum' | 'min' | 'max' | 'any' | 'all';

export type Node =
  | { k: 'ref'; name: string; idx: string[] }
  | { k: 'lit'; text: string; value: number }
  | { k: 'dim'; name: Dim }
  | { k: 'un'; op: UnaryOp; a: Node }
  | { k: 'bin'; op: BinaryOp; a: Node; b: Node }
  | { k: 'sel'; c: Node; a: Node; b: Node }
  | { k: 'cmp'; ty: Num; op: CmpOp; a: Node; b: Node }
  | { k: 'logic'; op: '&&' | '||'; a: Node; b: Node }
  | { k: 'not'; a: Node }
  | { k: 'red'; op: ReduceOp; idx: string; dim: Dim; implicit: boolean; body: Node };

export interface Assign {
  k: 'assign';
  lhs: string;
  idx: string[];
  ty: Ty;
  rhs: Node;
}
export interface Loop {
  k: 'repeat';
  count: { lit: number } | { param: string };
  until?: { name: string; within?: string };
  body: Stmt[];
}
export type Stmt = Assign | Loop;

/**
 * A parameter, or a temporary or result as last assigned. `pattern`: whose entries a sparse value has, in which
 * order: the sparse parameter and the format (a result declared in another format than its source is a pattern of
 * its own to the checker, DY2025). `result`: declared as a result (decided when it is made, because of that).
 */
export interface Val {
  name: string;
  ty: Ty;
  dims: Dim[];
  pattern?: string;
  format?: SparseFormat;
  result?: boolean;
}

export interface Program {
  name: string;
  ty: Num;
  rowDim: Dim;
  colDim: Dim;
  params: Val[];
  results: Val[];
  /** Every value the body assigns (results and temporaries), as last assigned. */
  assigned: Val[];
  body: Stmt[];
}

const UNARY: Record<UnaryOp, (a: string) => string> = {
  neg: (a) => `-(${a})`,
  abs: (a) => `abs(${a})`,
  relu: (a) => `relu(${a})`,
  exp: (a) => `exp(${a})`,
  // Domains kept away from the poles and branch points, where f32 and f64 inputs a rounding apart give different answers.
  log1: (a) => `log(abs(${a}) + 1)`,
  sqrt: (a) => `sqrt(abs(${a}))`,
  sqrt1: (a) => `sqrt(abs(${a}) + 1)`,
  tanh: (a) => `tanh(${a})`,
  sigmoid: (a) => `sigmoid(${a})`,
  pow2: (a) => `pow(${a}, 2)`,
  pow3: (a) => `pow(${a}, 3)`,
  powHalf: (a) => `pow(abs(${a}) + 1, 0.5)`,
  powInv: (a) => `pow(abs(${a}) + 1, -1)`,
};

function show(e: Node): string {
  switch (e.k) {
    case 'ref':
      return e.idx.length > 0 ? `${e.name}[${e.idx.join(', ')}]` : e.name;
    case 'lit':
      return e.text.startsWith('-') ? `(${e.text})` : e.text;
    case 'dim':
      return e.name;
    case 'un':
      return UNARY[e.op](show(e.a));
    case 'bin':
      return e.op === 'min' || e.op === 'max'
        ? `${e.op}(${show(e.a)}, ${show(e.b)})`
        : `(${show(e.a)} ${e.op} ${show(e.b)})`;
    case 'sel':
      return `(${show(e.c)} ? ${show(e.a)} : ${show(e.b)})`;
    case 'cmp':
    case 'logic':
      return `(${show(e.a)} ${e.op} ${show(e.b)})`;
    case 'not':
      return `!${show(e.a)}`;
    case 'red':
      return e.implicit ? show(e.body) : `${e.op}(${e.idx}: ${show(e.body)})`;
  }
}

function declaration(v: Val): string {
  if (v.dims.length === 0) return `${v.name}: ${v.ty}`;
  return `${v.name}: ${v.pattern ? v.format : 'dense'}<${v.ty}>[${v.dims.join(', ')}]`;
}

function showAssign(s: Assign): string {
  return `${s.idx.length > 0 ? `${s.lhs}[${s.idx.join(', ')}]` : s.lhs} = ${show(s.rhs)};`;
}

function showStmt(s: Stmt, ind: string): string[] {
  if (s.k === 'assign') return [`${ind}${showAssign(s)}`];
  const count = 'lit' in s.count ? String(s.count.lit) : s.count.param;
  const until = s.until ? ` until ${s.until.name} ${s.until.within ? `within ${s.until.within}` : 'stable'}` : '';
  return [`${ind}repeat ${count}${until} {`, ...s.body.flatMap((b) => showStmt(b, `${ind}  `)), `${ind}}`];
}

export function source(p: Program): string {
  const lines = p.body.flatMap((s) => showStmt(s, '  '));
  return `kernel ${p.name}(${p.params.map(declaration).join(', ')}) -> (${p.results.map(declaration).join(', ')}) {\n${lines.join('\n')}\n}\n`;
}

/** Whether `letter` indexes a read anywhere in `e`. */
export function mentions(e: Node, letter: string): boolean {
  switch (e.k) {
    case 'ref':
      return e.idx.includes(letter);
    case 'lit':
    case 'dim':
      return false;
    case 'un':
    case 'not':
      return mentions(e.a, letter);
    case 'bin':
    case 'cmp':
    case 'logic':
      return mentions(e.a, letter) || mentions(e.b, letter);
    case 'sel':
      return mentions(e.c, letter) || mentions(e.a, letter) || mentions(e.b, letter);
    case 'red':
      return mentions(e.body, letter);
  }
}

/** Whether a tensor or scalar is read where the expression takes its value (not only inside conditions). */
export function readsValue(e: Node): boolean {
  switch (e.k) {
    case 'ref':
      return true;
    case 'un':
      return readsValue(e.a);
    case 'bin':
    case 'sel':
      return readsValue(e.a) || readsValue(e.b);
    case 'red':
      return (e.op === 'sum' || e.op === 'min' || e.op === 'max') && readsValue(e.body);
    default:
      return false;
  }
}

/** Whether the sum over `letter` of `body` may be printed as `body` alone (an implicit sum). */
export function implicitOk(body: Node, letter: string): boolean {
  // An implicit sum runs over the smallest subexpression holding every occurrence of its index: the body itself only
  // where both operands mention it (or it is one read).
  if (body.k === 'ref') return body.idx.includes(letter);
  return body.k === 'bin' && mentions(body.a, letter) && mentions(body.b, letter);
}

export const ref = (name: string, idx: string[]): Node => ({ k: 'ref', name, idx });
export const bin = (op: BinaryOp, a: Node, b: Node): Node => ({ k: 'bin', op, a, b });
export const lit = (text: string): Node => ({ k: 'lit', text, value: Number(text.replace('inf', 'Infinity')) });
