/**
 * Recognises which FPGA design serves a loop function, from the shape of its
 * loop nest (ir/loops.ts as lower-kernels writes it):
 *
 * - sparse-rows (Serpens SpMV, or Sextans SpMM when there is a dense column
 *   loop `k`): `for i { [for k {] let acc = id; for p in ptr[i]..ptr[i+1] {
 *   let j = idx[p]; acc = acc (+|min|max) term } out[..] = epilogue [}] }`,
 *   where the term reads only the stored value at p, dense operands at row j
 *   (`x[j]`, `B[j*K + k]`), scalars and sizes; the epilogue anything dense.
 * - gemm: a dense row x column reduction over an inner dimension (output
 *   stationary array); sddmm: a dense dot product at each stored entry.
 * - stream: one flat parallel loop of straight-line statements (elementwise).
 * - generic: anything else, printed as the loop nest itself.
 */
import type { LBuffer, LElem, LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import { walkLExpr } from '../../ir/loops-walk.js';

type For = Extract<LStmt, { k: 'for' }>;

export interface SparseRowsMatch {
  kind: 'sparse-rows';
  rowLoop: For;
  /** The dense column loop of an SpMM (absent: SpMV). */
  colLoop?: For;
  acc: { var: string; type: LElem; init: LExpr };
  combine: LExpr;
  ptr: LBuffer;
  idx: LBuffer;
  /** The values buffer the term reads (absent: a pattern-only reduction). */
  vals?: LBuffer;
  /** Dense buffers read at row j of the term (held on chip window by window). */
  windows: LBuffer[];
  jVar: string;
  pVar: string;
  store: Extract<LStmt, { k: 'store' }>;
}

/** A reduction `let acc = id; for v in 0..N { acc = acc (+|min|max) term }` over a dense inner dimension. */
export interface InnerReduction {
  acc: { var: string; type: LElem; init: LExpr };
  loop: For;
  combine: LExpr;
  term: LExpr;
}

/**
 * A dense operand of a GEMM or SDDMM term: its buffer and the index it is read at. One matrix can be both
 * operands (X X, A .* (B B^T)): each read is named by its index, not its buffer.
 */
export interface TermOperand {
  b: LBuffer;
  index: LExpr;
}

/** GEMM: `for i { for k { acc over j of term(L[i*F + j], R[j*C + k]) ; out[i*C + k] = epilogue } }`. */
export interface GemmMatch {
  kind: 'gemm';
  rowLoop: For;
  colLoop: For;
  red: InnerReduction;
  left: TermOperand[];
  right: TermOperand[];
  store: Extract<LStmt, { k: 'store' }>;
}

/** SDDMM: `for i { for p in ptr[i].. { let j = idx[p]; acc over k of term(Q[i*D + k], K[j*D + k]); out.vals[p] = epilogue } }`. */
export interface SddmmMatch {
  kind: 'sddmm';
  rowLoop: For;
  nzLoop: For;
  jVar: string;
  ptr: LBuffer;
  idx: LBuffer;
  red: InnerReduction;
  rowOps: TermOperand[];
  colOps: TermOperand[];
  /** Values buffer the epilogue reads at p (absent: none). */
  vals?: LBuffer;
  store: Extract<LStmt, { k: 'store' }>;
}

export interface StreamMatch {
  kind: 'stream';
  loop: For;
}

export interface GenericMatch {
  kind: 'generic';
}

export type DesignMatch = SparseRowsMatch | GemmMatch | SddmmMatch | StreamMatch | GenericMatch;

const isVar = (e: LExpr, name: string): boolean => e.k === 'var' && e.name === name;

function is32(e: LElem): boolean {
  return e === 'f32' || e === 'i32' || e === 'index';
}

/** `j`, or `j * K + k` with K a size and k the column loop's variable. */
function rowIndexOfJ(index: LExpr, j: string, k: string | undefined): boolean {
  if (isVar(index, j)) return k === undefined;
  if (k === undefined || index.k !== 'bin' || index.op !== '+' || !isVar(index.rhs, k)) return false;
  const m = index.lhs;
  return m.k === 'bin' && m.op === '*' && isVar(m.lhs, j) && m.rhs.k === 'var';
}

function matchSparseRows(f: LoopFunc, bufs: Map<string, LBuffer>): SparseRowsMatch | undefined {
  if (f.body.length !== 1 || f.body[0]!.k !== 'for') return undefined;
  const rowLoop = f.body[0] as For;
  if (!rowLoop.parallel || !(rowLoop.lo.k === 'const' && rowLoop.lo.value === 0) || rowLoop.hi.k !== 'var')
    return undefined;
  let inner = rowLoop.body;
  let colLoop: For | undefined;
  if (inner.length === 1 && inner[0]!.k === 'for') {
    colLoop = inner[0] as For;
    if (!(colLoop.lo.k === 'const' && colLoop.lo.value === 0) || colLoop.hi.k !== 'var') return undefined;
    inner = colLoop.body;
  }
  if (inner.length !== 3) return undefined;
  const [let0, loop, store] = inner as [LStmt, LStmt, LStmt];
  if (let0.k !== 'let' || let0.value.k !== 'const' || loop.k !== 'for' || store.k !== 'store') return undefined;
  if (!is32(let0.type)) return undefined;
  // for p in ptr[i] .. ptr[i + 1]
  const i = rowLoop.var;
  if (loop.lo.k !== 'load' || !isVar(loop.lo.index, i) || loop.hi.k !== 'load' || loop.hi.buf !== loop.lo.buf)
    return undefined;
  const ptr = bufs.get(loop.lo.buf);
  if (!ptr || ptr.role !== 'rowPtr') return undefined;
  const hiIdx = loop.hi.index;
  if (!(
    hiIdx.k === 'bin' &&
    hiIdx.op === '+' &&
    isVar(hiIdx.lhs, i) &&
    hiIdx.rhs.k === 'const' &&
    hiIdx.rhs.value === 1
  ))
    return undefined;
  if (loop.body.length !== 2) return undefined;
  const [letJ, set] = loop.body as [LStmt, LStmt];
  if (
    letJ.k !== 'let' ||
    letJ.value.k !== 'load' ||
    !isVar(letJ.value.index, loop.var) ||
    set.k !== 'set' ||
    set.var !== let0.var
  )
    return undefined;
  const idx = bufs.get(letJ.value.buf);
  if (!idx || idx.role !== 'colIdx') return undefined;
  // acc = acc + t | min(acc, t) | max(acc, t)
  const c = set.value;
  let term: LExpr | undefined;
  if (c.k === 'bin' && c.op === '+' && isVar(c.lhs, let0.var)) term = c.rhs;
  else if (c.k === 'call' && (c.fn === 'min' || c.fn === 'max') && c.args.length === 2 && isVar(c.args[0]!, let0.var))
    term = c.args[1];
  if (!term) return undefined;
  const j = letJ.var;
  const p = loop.var;
  const k = colLoop?.var;
  let vals: LBuffer | undefined;
  const windows = new Map<string, LBuffer>();
  let ok = true;
  // Recognised loads are not descended into: their indices (p, j, k, sizes) are replaced as a whole.
  const visitTerm = (e: LExpr): void => {
    if (e.k === 'var' && (e.name === i || e.name === p || e.name === let0.var)) ok = false;
    if (e.k === 'load') {
      const b = bufs.get(e.buf);
      if (!b) return void (ok = false);
      if (b.role === 'values' && isVar(e.index, p) && is32(b.elem) && (!vals || vals.name === b.name)) vals = b;
      else if (b.role === 'dense' && rowIndexOfJ(e.index, j, k) && is32(b.elem)) windows.set(b.name, b);
      else if (!(b.role === 'scalar' && e.index.k === 'const')) ok = false;
      return;
    }
    if (e.k === 'bin') {
      visitTerm(e.lhs);
      visitTerm(e.rhs);
    } else if (e.k === 'un' || e.k === 'cast') visitTerm(e.arg);
    else if (e.k === 'call') e.args.forEach(visitTerm);
    else if (e.k === 'select') {
      visitTerm(e.cond);
      visitTerm(e.then);
      visitTerm(e.else);
    }
  };
  visitTerm(term);
  if (!ok) return undefined;
  // The epilogue may read dense and scalar buffers and the accumulator, never the sparse operand.
  walkLExpr(store.value, (e) => {
    if (e.k === 'var' && (e.name === p || e.name === j)) ok = false;
    if (e.k === 'load' && bufs.get(e.buf)?.role !== 'dense' && bufs.get(e.buf)?.role !== 'scalar') ok = false;
  });
  walkLExpr(store.index, (e) => {
    if (e.k === 'load') ok = false;
  });
  if (!ok || bufs.get(store.buf)?.role !== 'dense') return undefined;
  return {
    kind: 'sparse-rows',
    rowLoop,
    ...(colLoop ? { colLoop } : {}),
    acc: { var: let0.var, type: let0.type, init: let0.value },
    combine: c,
    ptr,
    idx,
    ...(vals ? { vals } : {}),
    windows: [...windows.values()],
    jVar: j,
    pVar: p,
    store,
  };
}

/** `a * F + b` with a, b variables and F a size variable. */
function isRowMajor(e: LExpr, a: string, b: string): boolean {
  return (
    e.k === 'bin' &&
    e.op === '+' &&
    isVar(e.rhs, b) &&
    e.lhs.k === 'bin' &&
    e.lhs.op === '*' &&
    isVar(e.lhs.lhs, a) &&
    e.lhs.rhs.k === 'var'
  );
}

function innerReduction(let0: LStmt, loop: LStmt): InnerReduction | undefined {
  if (let0.k !== 'let' || let0.value.k !== 'const' || !is32(let0.type) || loop.k !== 'for' || loop.body.length !== 1)
    return undefined;
  if (!(loop.lo.k === 'const' && loop.lo.value === 0) || loop.hi.k !== 'var') return undefined;
  const set = loop.body[0]!;
  if (set.k !== 'set' || set.var !== let0.var) return undefined;
  const c = set.value;
  let term: LExpr | undefined;
  if (c.k === 'bin' && c.op === '+' && isVar(c.lhs, let0.var)) term = c.rhs;
  else if (c.k === 'call' && (c.fn === 'min' || c.fn === 'max') && c.args.length === 2 && isVar(c.args[0]!, let0.var))
    term = c.args[1];
  if (!term) return undefined;
  return { acc: { var: let0.var, type: let0.type, init: let0.value }, loop, combine: c, term };
}

/** Classifies the loads of a term: every load must satisfy one of the predicates or be a scalar. */
function termLoads(
  term: LExpr,
  bufs: Map<string, LBuffer>,
  banned: string[],
  kinds: ((b: LBuffer, index: LExpr) => boolean)[],
): TermOperand[][] | undefined {
  const out: Map<string, TermOperand>[] = kinds.map(() => new Map());
  let ok = true;
  const visit = (e: LExpr): void => {
    if (e.k === 'var' && banned.includes(e.name)) ok = false;
    if (e.k === 'load') {
      const b = bufs.get(e.buf);
      if (!b) return void (ok = false);
      const which = kinds.findIndex((f) => f(b, e.index));
      const seen = which >= 0 ? out[which]!.get(b.name) : undefined;
      // One on-chip copy per buffer and kind: a second index of the same kind has none.
      if (seen && JSON.stringify(seen.index) !== JSON.stringify(e.index)) ok = false;
      else if (which >= 0) out[which]!.set(b.name, { b, index: e.index });
      else if (!(b.role === 'scalar' && e.index.k === 'const')) ok = false;
      return;
    }
    if (e.k === 'bin') {
      visit(e.lhs);
      visit(e.rhs);
    } else if (e.k === 'un' || e.k === 'cast') visit(e.arg);
    else if (e.k === 'call') e.args.forEach(visit);
    else if (e.k === 'select') {
      visit(e.cond);
      visit(e.then);
      visit(e.else);
    }
  };
  visit(term);
  return ok ? out.map((m) => [...m.values()]) : undefined;
}

function denseEpilogue(store: LStmt, bufs: Map<string, LBuffer>, banned: string[], allowVals?: string): boolean {
  let ok = store.k === 'store';
  if (store.k !== 'store') return false;
  walkLExpr(store.value, (e) => {
    if (e.k === 'var' && banned.includes(e.name)) ok = false;
    if (e.k === 'load') {
      const r = bufs.get(e.buf)?.role;
      if (r !== 'dense' && r !== 'scalar' && !(r === 'values' && e.buf === allowVals)) ok = false;
    }
  });
  walkLExpr(store.index, (e) => {
    if (e.k === 'load') ok = false;
  });
  return ok;
}

function matchGemm(f: LoopFunc, bufs: Map<string, LBuffer>): GemmMatch | undefined {
  if (f.body.length !== 1 || f.body[0]!.k !== 'for') return undefined;
  const rowLoop = f.body[0] as For;
  if (
    !rowLoop.parallel ||
    !(rowLoop.lo.k === 'const' && rowLoop.lo.value === 0) ||
    rowLoop.hi.k !== 'var' ||
    rowLoop.body.length !== 1 ||
    rowLoop.body[0]!.k !== 'for'
  )
    return undefined;
  const colLoop = rowLoop.body[0] as For;
  if (!(colLoop.lo.k === 'const' && colLoop.lo.value === 0) || colLoop.hi.k !== 'var' || colLoop.body.length !== 3)
    return undefined;
  const [let0, loop, store] = colLoop.body as [LStmt, LStmt, LStmt];
  const red = innerReduction(let0, loop);
  if (!red || store.k !== 'store' || bufs.get(store.buf)?.role !== 'dense') return undefined;
  const [i, k, j] = [rowLoop.var, colLoop.var, red.loop.var];
  if (!isRowMajor(store.index, i, k)) return undefined;
  const loads = termLoads(
    red.term,
    bufs,
    [i, k, j, red.acc.var],
    [
      (b, x) => b.role === 'dense' && is32(b.elem) && isRowMajor(x, i, j),
      (b, x) => b.role === 'dense' && is32(b.elem) && isRowMajor(x, j, k),
    ],
  );
  if (!loads || !denseEpilogue(store, bufs, [j])) return undefined;
  return { kind: 'gemm', rowLoop, colLoop, red, left: loads[0]!, right: loads[1]!, store };
}

function matchSddmm(f: LoopFunc, bufs: Map<string, LBuffer>): SddmmMatch | undefined {
  if (f.body.length !== 1 || f.body[0]!.k !== 'for') return undefined;
  const rowLoop = f.body[0] as For;
  if (
    !rowLoop.parallel ||
    !(rowLoop.lo.k === 'const' && rowLoop.lo.value === 0) ||
    rowLoop.hi.k !== 'var' ||
    rowLoop.body.length !== 1 ||
    rowLoop.body[0]!.k !== 'for'
  )
    return undefined;
  const nz = rowLoop.body[0] as For;
  const i = rowLoop.var;
  if (nz.lo.k !== 'load' || !isVar(nz.lo.index, i) || nz.hi.k !== 'load' || nz.hi.buf !== nz.lo.buf) return undefined;
  const ptr = bufs.get(nz.lo.buf);
  if (!ptr || ptr.role !== 'rowPtr' || nz.body.length !== 4) return undefined;
  const [letJ, let0, loop, store] = nz.body as [LStmt, LStmt, LStmt, LStmt];
  if (letJ.k !== 'let' || letJ.value.k !== 'load' || !isVar(letJ.value.index, nz.var)) return undefined;
  const idx = bufs.get(letJ.value.buf);
  if (!idx || idx.role !== 'colIdx') return undefined;
  const red = innerReduction(let0, loop);
  if (!red || store.k !== 'store' || !isVar(store.index, nz.var)) return undefined;
  const out = bufs.get(store.buf);
  if (!out || out.role !== 'values' || !is32(out.elem)) return undefined;
  const [j, k, p] = [letJ.var, red.loop.var, nz.var];
  const loads = termLoads(
    red.term,
    bufs,
    [i, j, k, p, red.acc.var],
    [
      (b, x) => b.role === 'dense' && is32(b.elem) && isRowMajor(x, i, k),
      (b, x) => b.role === 'dense' && is32(b.elem) && isRowMajor(x, j, k),
    ],
  );
  if (!loads) return undefined;
  let vals: LBuffer | undefined;
  let ok = true;
  walkLExpr(store.value, (e) => {
    if (e.k === 'var' && (e.name === j || e.name === k)) ok = false;
    if (e.k !== 'load') return;
    const b = bufs.get(e.buf);
    if (b?.role === 'values') {
      if (!isVar(e.index, p) || !is32(b.elem) || (vals && vals.name !== b.name)) ok = false;
      vals = b;
    } else if (b?.role !== 'dense' && b?.role !== 'scalar') ok = false;
  });
  if (!ok) return undefined;
  return {
    kind: 'sddmm',
    rowLoop,
    nzLoop: nz,
    jVar: j,
    ptr,
    idx,
    red,
    rowOps: loads[0]!,
    colOps: loads[1]!,
    ...(vals ? { vals } : {}),
    store,
  };
}

function matchStream(f: LoopFunc): StreamMatch | undefined {
  if (f.body.length !== 1 || f.body[0]!.k !== 'for') return undefined;
  const loop = f.body[0] as For;
  if (!loop.parallel) return undefined;
  const flat = (ss: readonly LStmt[]): boolean =>
    ss.every(
      (s) => s.k === 'let' || s.k === 'store' || s.k === 'set' || (s.k === 'if' && flat(s.then) && flat(s.else ?? [])),
    );
  return flat(loop.body) ? { kind: 'stream', loop } : undefined;
}

export function matchDesign(f: LoopFunc): DesignMatch {
  const bufs = new Map(f.buffers.map((b) => [b.name, b]));
  return matchSparseRows(f, bufs) ?? matchGemm(f, bufs) ?? matchSddmm(f, bufs) ?? matchStream(f) ?? { kind: 'generic' };
}
