/**
 * Fuzzing the compiler with mutated programs (fixed seeds, so every run is
 * the same): the example programs and a few seeds covering the other
 * formats, dtypes and operators are mutated at the character level
 * (deletions, insertions, duplications, swaps) and at the token level
 * (identifiers, operators, formats, dtypes, dims, indices, numbers,
 * statements). Every mutant must end in success or diagnostics; never any
 * other exception. For each mutant that compiles:
 *   - its diagnostics have no errors, and formatting them works;
 *   - the IR text round-trips: print(parse(print(m))) === print(m), both
 *     for the checker's output and after the default pipeline;
 *   - the default pipeline runs (or reports diagnostics);
 *   - for a subset, the reference interpreter runs on tiny generated inputs
 *     and may throw InputError only; outputs have the declared shapes, and
 *     the result equals interpreting the module after infer-types alone
 *     (classification and fusion must not change what a kernel computes).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import { DiagnosticError, formatDiagnostics, type Diagnostic } from '../../ir/diagnostics.js';
import type { Kernel, Module, Op } from '../../ir/module.js';
import { printModule } from '../../ir/printer.js';
import { parseModule } from '../../ir/text-parser.js';
import type { Dim } from '../../ir/types.js';
import { interpretKernel } from '../../interp/interpret.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import { InputError } from '../../runtime/errors.js';
import { toCoo, toCsc, toCsr } from '../../runtime/io/convert.js';
import type { MtxCoordinate } from '../../runtime/io/mtx-data.js';
import type { Tensor } from '../../runtime/tensor.js';
import { EXAMPLES } from '../helpers/cli.js';
import {
  chance,
  classify,
  FUZZ_SCALE,
  FUZZ_SEED_OFFSET,
  describeError,
  Failures,
  pick,
  Rng,
  splice,
  weighted,
} from './util.js';

/** Mutants per seed group (two groups: examples, extra seeds). */
const CASES_EXAMPLES = Math.round(3000 * FUZZ_SCALE);
const CASES_EXTRA = Math.round(1500 * FUZZ_SCALE);
/** Mutants longer than this are clipped (duplications could grow them). */
const MAX_SOURCE = 6000;
/** Interpret every Nth compiling mutant (all of them when small enough). */
const INTERPRET_EVERY = 2;
/** Skip interpretation when a kernel would run more statement executions than this. */
const MAX_TRIPS = 2000;
/** Skip interpretation when a tensor would hold more elements than this. */
const MAX_ELEMENTS = 4096;

const EXTRA_SEEDS: Record<string, string> = {
  'mix.dy': `kernel mix(A: csc<f64>[n, m], B: coo<f64>[n, m], v: dense<f64>[m], s: f64, t: i32) -> (y: dense<f64>[n], z: dense<bool>[n]) {
  y[i] = sum(j: A[i, j] * v[j]) + s * max(j: B[i, j]);
  z[i] = any(j: A[i, j] > s) || !(y[i] <= 0);
  repeat t { y[i] = y[i] > 0 ? sqrt(abs(y[i])) : pow(y[i], 2) - 1e-6; }
}
`,
  'ints.dy': `// literal dims and integers; two kernels
kernel ints(M: dense<i32>[3, k], w: dense<i32>[k]) -> (r: dense<i32>[3], q: dense<i32>[3]) {
  r[i] = M[i, j] * w[j];
  q[i] = min(r[i], 7) + max(j: M[i, j]);
}
kernel two(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) {
  t[i] = tanh(x[i]) + sigmoid(x[i]) + log(1 + exp(x[i]));
  y[i] = all(j: A[i, j] >= 0) ? A[i, j] * t[j] : -inf;
}
`,
  'sddmm.dy': `kernel sd(A: csr<f32>[n, n], Q: dense<f32>[n, d], K: dense<f32>[n, d]) -> (S: csr<f32>[n, n], c: dense<f32>[d]) {
  S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]);
  c[k] = sum(i: Q[i, k]) / n;
}
`,
};

function exampleSeeds(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(EXAMPLES)
    .filter((x) => x.endsWith('.dy'))
    .sort())
    out[f] = readFileSync(join(EXAMPLES, f), 'utf8');
  return out;
}

// ------------------------------------------------------------------ mutation

const FORMATS = ['dense', 'csr', 'csc', 'coo'];
const DTYPES = ['f32', 'f64', 'i32', 'i64', 'bool'];
const FUNCS = ['relu', 'exp', 'log', 'sqrt', 'abs', 'sigmoid', 'tanh', 'min', 'max', 'pow', 'sum', 'any', 'all'];
const KEYWORDS = ['kernel', 'repeat', 'inf'];
const OPERATORS = [
  '+',
  '-',
  '*',
  '/',
  '<',
  '<=',
  '>',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '!',
  '?',
  ':',
  '=',
  '->',
  ',',
  ';',
];
const NUMBERS = [
  '0',
  '1',
  '2',
  '3',
  '16',
  '-1',
  '0.5',
  '1e-6',
  '1e400',
  '1e-400',
  '2147483648',
  '99999999999',
  '99999999999999999999999',
  '00',
  '1.',
  '.5',
  'inf',
];
const ODD_NAMES = [
  'x',
  'foo',
  '_',
  'i',
  'j',
  'k',
  'n',
  'm',
  'A',
  'r0',
  'kernel',
  'repeat',
  'sum',
  'f32',
  'csr',
  'inf',
  'a'.repeat(40),
  'constructor',
  '__proto__',
  'toString',
];
const INSERT_CHARS = [
  ...'[](){};:,=+-*/<>!?&|#.0123456789 \n\tabcijknxyzA_e$@"\'\\',
  '\r',
  '\u0000',
  '\u00e9',
  '\u03bb',
  '\ud83d\ude00',
  '\u200b',
  '\uffff',
];

interface Tok {
  text: string;
  kind: 'ident' | 'num' | 'op' | 'space' | 'comment' | 'other';
}

const TOKEN_RE =
  /[A-Za-z_][A-Za-z0-9_]*|(?:\d+\.\d+|\.\d+|\d+)(?:[eE][+-]?\d+)?|->|<=|>=|==|!=|&&|\|\||(?:#|\/\/)[^\n]*|\s+|[\s\S]/g;

function tokens(src: string): Tok[] {
  const out: Tok[] = [];
  for (const m of src.matchAll(TOKEN_RE)) {
    const t = m[0];
    const kind: Tok['kind'] = /^[A-Za-z_]/.test(t)
      ? 'ident'
      : /^[\d.]/.test(t) && t !== '.'
        ? 'num'
        : /^\s/.test(t)
          ? 'space'
          : /^(#|\/\/)/.test(t)
            ? 'comment'
            : OPERATORS.includes(t)
              ? 'op'
              : 'other';
    out.push({ text: t, kind });
  }
  return out;
}

const join_ = (ts: readonly Tok[]): string => ts.map((t) => t.text).join('');

/** Indices of tokens satisfying `p`. */
function where(ts: readonly Tok[], p: (t: Tok, i: number) => boolean): number[] {
  const out: number[] = [];
  ts.forEach((t, i) => {
    if (p(t, i)) out.push(i);
  });
  return out;
}

/** Whether token i sits inside [...] (depth of square brackets before it > 0). */
function bracketDepths(ts: readonly Tok[]): number[] {
  let d = 0;
  return ts.map((t) => {
    if (t.text === '[') return ++d;
    if (t.text === ']') return d-- > 0 ? d + 1 : 0;
    return d;
  });
}

/** Statement lines: lines holding an assignment and ending with ';' (possibly inside a repeat). */
function statementLines(lines: readonly string[]): number[] {
  return lines.flatMap((l, i) => (/=/.test(l) && /;\s*}?\s*$/.test(l) && !/^\s*kernel\b/.test(l) ? [i] : []));
}

type Mutator = (src: string, rng: Rng) => string | undefined;

const charMutators: Record<string, Mutator> = {
  'delete-char': (s, rng) =>
    s.length === 0 ? undefined : deleteAt(s, rng.int(s.length), 1 + (chance(rng, 0.2) ? rng.int(8) : 0)),
  'insert-char': (s, rng) => splice(s, rng.int(s.length + 1), 0, pick(rng, INSERT_CHARS)),
  'replace-char': (s, rng) => (s.length === 0 ? undefined : replaceAt(s, rng.int(s.length), pick(rng, INSERT_CHARS))),
  'duplicate-span': (s, rng) => {
    if (s.length === 0) return undefined;
    const a = rng.int(s.length);
    const b = Math.min(s.length, a + 1 + rng.int(24));
    return splice(s, b, b, s.slice(a, b));
  },
  'swap-chars': (s, rng) => {
    if (s.length < 2) return undefined;
    const a = rng.int(s.length - 1);
    return s.slice(0, a) + s[a + 1] + s[a] + s.slice(a + 2);
  },
  truncate: (s, rng) => s.slice(0, rng.int(s.length + 1)),
};

function deleteAt(s: string, at: number, n: number): string {
  return s.slice(0, at) + s.slice(at + n);
}

function replaceAt(s: string, at: number, c: string): string {
  return s.slice(0, at) + c + s.slice(at + 1);
}

function tokenMutator(
  select: (t: Tok, i: number, ts: Tok[]) => boolean,
  replace: (t: Tok, rng: Rng, ts: Tok[]) => string,
): Mutator {
  return (s, rng) => {
    const ts = tokens(s);
    const at = where(ts, (t, i) => select(t, i, ts));
    if (at.length === 0) return undefined;
    const i = pick(rng, at);
    ts[i] = { ...ts[i]!, text: replace(ts[i]!, rng, ts) };
    return join_(ts);
  };
}

const identsOf = (ts: readonly Tok[]): string[] => [
  ...new Set(ts.filter((t) => t.kind === 'ident').map((t) => t.text)),
];

const tokenMutators: Record<string, Mutator> = {
  'swap-identifiers': (s, rng) => {
    const ts = tokens(s);
    const at = where(ts, (t) => t.kind === 'ident');
    if (at.length < 2) return undefined;
    const a = pick(rng, at);
    const b = pick(rng, at);
    const ta = ts[a]!.text;
    ts[a] = { ...ts[a]!, text: ts[b]!.text };
    ts[b] = { ...ts[b]!, text: ta };
    return join_(ts);
  },
  'rename-identifier': tokenMutator(
    (t) => t.kind === 'ident',
    (_t, rng, ts) => (chance(rng, 0.5) ? pick(rng, identsOf(ts)) : pick(rng, [...ODD_NAMES, ...FUNCS, ...KEYWORDS])),
  ),
  'rename-everywhere': (s, rng) => {
    const ts = tokens(s);
    const names = identsOf(ts).filter((n) => !FORMATS.includes(n) && !DTYPES.includes(n) && !KEYWORDS.includes(n));
    if (names.length === 0) return undefined;
    const from = pick(rng, names);
    const to = chance(rng, 0.5) ? pick(rng, names) : pick(rng, ODD_NAMES);
    return join_(ts.map((t) => (t.kind === 'ident' && t.text === from ? { ...t, text: to } : t)));
  },
  operator: tokenMutator(
    (t) => t.kind === 'op',
    (_t, rng) => pick(rng, OPERATORS),
  ),
  format: tokenMutator(
    (t) => FORMATS.includes(t.text),
    (_t, rng) => (chance(rng, 0.85) ? pick(rng, FORMATS) : pick(rng, ['sparse', 'CSR', 'dense2', 'f32'])),
  ),
  dtype: tokenMutator(
    (t) => DTYPES.includes(t.text),
    (_t, rng) => (chance(rng, 0.85) ? pick(rng, DTYPES) : pick(rng, ['f16', 'int', 'F32', 'csr'])),
  ),
  dim: (s, rng) => {
    // A dim inside a declaration's brackets: `format<dtype>[ ... ]`.
    const ts = tokens(s);
    const inDecl = new Set<number>();
    for (let i = 0; i < ts.length; i++) {
      if (ts[i]!.text === '>' && ts[i + 1]?.text === '[')
        for (let j = i + 2; j < ts.length && ts[j]!.text !== ']'; j++) inDecl.add(j);
    }
    const at = [...inDecl].filter((i) => ts[i]!.kind === 'ident' || ts[i]!.kind === 'num');
    if (at.length === 0) return undefined;
    const i = pick(rng, at);
    const r = rng.int(4);
    const text =
      r === 0
        ? pick(rng, ['0', '1', '2', '3', '7', '64', '99999999999', '2147483648', '1.5', '-1'])
        : r === 1
          ? pick(rng, ['m', 'n', 'k', 'd', 'f', 'h', 'c', 'q'])
          : r === 2
            ? `${ts[i]!.text}, ${pick(rng, ['n', 'm', '2'])}`
            : '';
    ts[i] = { ...ts[i]!, text };
    return join_(ts);
  },
  index: (s, rng) => {
    // An index variable inside a statement's brackets (not a declaration).
    const ts = tokens(s);
    const depth = bracketDepths(ts);
    const at = where(ts, (t, i) => t.kind === 'ident' && depth[i]! > 0 && /^[a-z]$/.test(t.text));
    if (at.length === 0) return undefined;
    const i = pick(rng, at);
    const r = rng.int(4);
    const text =
      r === 0
        ? pick(rng, ['i', 'j', 'k', 'c', 'q'])
        : r === 1
          ? `${ts[i]!.text}, ${pick(rng, ['i', 'j', 'k'])}`
          : r === 2
            ? pick(rng, ['0', '1', 'n', 'i + 1', 'A'])
            : '';
    ts[i] = { ...ts[i]!, text };
    return join_(ts);
  },
  number: tokenMutator(
    (t) => t.kind === 'num',
    (_t, rng) => pick(rng, NUMBERS),
  ),
  'insert-number': tokenMutator(
    (t) => t.kind === 'ident',
    (t, rng) => `${t.text} ${pick(rng, ['+', '*', '-', '/'])} ${pick(rng, NUMBERS)}`,
  ),
  'delete-token': (s, rng) => {
    const ts = tokens(s);
    const at = where(ts, (t) => t.kind !== 'space' && t.kind !== 'comment');
    if (at.length === 0) return undefined;
    ts.splice(pick(rng, at), 1);
    return join_(ts);
  },
  'duplicate-token': (s, rng) => {
    const ts = tokens(s);
    const at = where(ts, (t) => t.kind !== 'space' && t.kind !== 'comment');
    if (at.length === 0) return undefined;
    const i = pick(rng, at);
    ts.splice(i, 0, ts[i]!);
    return join_(ts);
  },
  'swap-tokens': (s, rng) => {
    const ts = tokens(s);
    const at = where(ts, (t) => t.kind !== 'space' && t.kind !== 'comment');
    if (at.length < 2) return undefined;
    const a = pick(rng, at);
    const b = pick(rng, at);
    [ts[a], ts[b]] = [ts[b]!, ts[a]!];
    return join_(ts);
  },
  'wrap-function': tokenMutator(
    (t) => t.kind === 'ident',
    (t, rng, ts) => {
      const f = pick(rng, FUNCS);
      const arity2 = ['min', 'max', 'pow'].includes(f) && chance(rng, 0.5);
      const isTensor = ts.some((u, i) => u === t && ts[i + 1]?.text === '[');
      if (isTensor) return `${f}(${t.text}`; // leaves the bracket unbalanced on purpose half the time
      return arity2 ? `${f}(${t.text}, 2)` : `${f}(${t.text})`;
    },
  ),
  'explicit-reduction': (s, rng) => {
    // `= expr;` -> `= sum(j: expr);` (or another reduction / index).
    const lines = s.split('\n');
    const at = statementLines(lines);
    if (at.length === 0) return undefined;
    const li = pick(rng, at);
    lines[li] = lines[li]!.replace(
      /=(.*);/,
      (_m, e: string) =>
        `= ${pick(rng, ['sum', 'min', 'max', 'any', 'all'])}(${pick(rng, ['j', 'k', 'i', 'j, k', 'z'])}: ${e.trim()});`,
    );
    return lines.join('\n');
  },
  'delete-statement': (s, rng) => {
    const lines = s.split('\n');
    const at = statementLines(lines);
    if (at.length === 0) return undefined;
    lines.splice(pick(rng, at), 1);
    return lines.join('\n');
  },
  'duplicate-statement': (s, rng) => {
    const lines = s.split('\n');
    const at = statementLines(lines);
    if (at.length === 0) return undefined;
    const i = pick(rng, at);
    lines.splice(i + rng.int(2), 0, lines[i]!);
    return lines.join('\n');
  },
  'swap-statements': (s, rng) => {
    const lines = s.split('\n');
    const at = statementLines(lines);
    if (at.length < 2) return undefined;
    const a = pick(rng, at);
    const b = pick(rng, at);
    [lines[a], lines[b]] = [lines[b]!, lines[a]!];
    return lines.join('\n');
  },
  'wrap-repeat': (s, rng) => {
    const lines = s.split('\n');
    const at = statementLines(lines);
    if (at.length === 0) return undefined;
    const i = pick(rng, at);
    lines[i] =
      `repeat ${pick(rng, ['0', '1', '2', '3', 'd', 'n', 't', '-1', '1.5', '1000000000'])} { ${lines[i]!.trim()} }`;
    return lines.join('\n');
  },
  'delete-line': (s, rng) => {
    const lines = s.split('\n');
    if (lines.length === 0) return undefined;
    lines.splice(rng.int(lines.length), 1);
    return lines.join('\n');
  },
  'duplicate-kernel': (s, rng) =>
    chance(rng, 0.5) ? `${s}\n${s}` : `${s}\n${s.replace(/kernel\s+(\w+)/, 'kernel $1_2')}`,
};

const ALL_MUTATORS: (readonly [number, [string, Mutator]])[] = [
  ...Object.entries(charMutators).map((e) => [1, e] as const),
  ...Object.entries(tokenMutators).map((e) => [2, e] as const),
];

function mutate(src: string, rng: Rng): { text: string; applied: string[] } {
  const applied: string[] = [];
  let text = src;
  const n = weighted(rng, [
    [6, 1],
    [3, 2],
    [1, 3],
  ]);
  for (let tries = 0; applied.length < n && tries < 20; tries++) {
    const [name, m] = weighted(rng, ALL_MUTATORS);
    const out = m(text, rng);
    if (out === undefined || out === text) continue;
    applied.push(name);
    text = out.length > MAX_SOURCE ? out.slice(0, MAX_SOURCE) : out;
  }
  return { text, applied };
}

// ------------------------------------------------------- interpreter inputs

function maxTrips(ops: readonly Op[], scalars: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const op of ops) {
    if (op.kind !== 'repeat') n += 1;
    else {
      const count = op.count.kind === 'lit' ? op.count.value : (scalars.get(op.count.name) ?? 0);
      n += Math.max(0, count) * maxTrips(op.body, scalars) + 1;
    }
    if (n > MAX_TRIPS) return n;
  }
  return n;
}

function randomValue(rng: Rng, dtype: string): number {
  if (dtype === 'bool') return rng.int(2);
  if (dtype === 'i32' || dtype === 'i64') return rng.int(7) - 2;
  return chance(rng, 0.03) ? pick(rng, [0, Infinity, -Infinity, 1e300]) : Math.round(rng.uniform(-2, 2) * 64) / 64;
}

/** Tiny inputs for a kernel, or undefined when they would not be tiny. `skew` gives one input a wrong size on purpose. */
function tinyInputs(
  k: Kernel,
  rng: Rng,
  skew: boolean,
): { tensors: Map<string, Tensor>; scalars: Map<string, number> } | undefined {
  const dims = new Map<string, number>();
  const sizeOf = (d: Dim): number => {
    if (d.kind === 'lit') return d.value;
    let v = dims.get(d.name);
    if (v === undefined) dims.set(d.name, (v = chance(rng, 0.08) ? 0 : 1 + rng.int(4)));
    return v;
  };
  const tensors = new Map<string, Tensor>();
  const scalars = new Map<string, number>();
  const skewed = skew ? rng.int(Math.max(1, k.params.length)) : -1;
  for (const [pi, p] of k.params.entries()) {
    const t = p.type;
    if (t.shape.length === 0) {
      const int = t.dtype !== 'f32' && t.dtype !== 'f64';
      scalars.set(
        p.name,
        int ? (t.dtype === 'bool' ? rng.int(2) : rng.int(4)) : Math.round(rng.uniform(0, 1) * 100) / 100,
      );
      continue;
    }
    const shape = t.shape.map(sizeOf);
    if (pi === skewed && shape.length > 0) shape[rng.int(shape.length)]! += 1;
    if (
      shape.some((x) => !Number.isSafeInteger(x) || x < 0 || x > MAX_ELEMENTS) ||
      shape.reduce((a, b) => a * b, 1) > MAX_ELEMENTS
    )
      return undefined;
    if (t.format === 'dense') {
      const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
      for (let i = 0; i < data.length; i++) data[i] = randomValue(rng, t.dtype);
      tensors.set(p.name, { format: 'dense', shape, data });
      continue;
    }
    if (shape.length !== 2) return undefined;
    const [rows, cols] = shape as [number, number];
    const ri: number[] = [];
    const ci: number[] = [];
    const vs: number[] = [];
    const density = pick(rng, [0, 0.3, 0.6, 1]);
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++)
        if (rng.next() < density) {
          ri.push(r);
          ci.push(c);
          vs.push(randomValue(rng, t.dtype));
        }
    const m: MtxCoordinate = {
      kind: 'coordinate',
      rows,
      cols,
      field: 'real',
      symmetry: 'general',
      rowIdx: Int32Array.from(ri),
      colIdx: Int32Array.from(ci),
      values: Float64Array.from(vs),
      lines: new Int32Array(ri.length),
      file: `<${p.name}>`,
    };
    tensors.set(p.name, t.format === 'csr' ? toCsr(m) : t.format === 'csc' ? toCsc(m) : toCoo(m));
  }
  return { tensors, scalars };
}

function tensorShape(t: Tensor): number[] {
  return t.format === 'dense' ? t.shape : [t.rows, t.cols];
}

function denseValues(t: Tensor): number[] {
  if (t.format === 'dense') return [...t.data];
  // Sparse: compare as (row, col, value) triples in row-major order.
  const triples: [number, number, number][] = [];
  if (t.format === 'csr')
    for (let r = 0; r < t.rows; r++)
      for (let e = t.rowPtr[r]!; e < t.rowPtr[r + 1]!; e++) triples.push([r, t.colIdx[e]!, t.values[e]!]);
  else if (t.format === 'csc')
    for (let c = 0; c < t.cols; c++)
      for (let e = t.colPtr[c]!; e < t.colPtr[c + 1]!; e++) triples.push([t.rowIdx[e]!, c, t.values[e]!]);
  else for (let e = 0; e < t.values.length; e++) triples.push([t.rowIdx[e]!, t.colIdx[e]!, t.values[e]!]);
  triples.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return triples.flat();
}

function close(a: number, b: number): boolean {
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

// --------------------------------------------------------------- the checks

interface Stats {
  cases: number;
  compiled: number;
  pipelined: number;
  interpreted: number;
  interpretedOk: number;
  inputErrors: number;
  /** Crashes of the known zero-trip-repeat bug (see the it.fails test below), counted, not failed. */
}

function roundTrip(m: Module, what: string, failures: Failures, where: string, source: string): void {
  let once: string;
  try {
    once = printModule(m);
  } catch (e) {
    failures.add({ stage: `print (${what})`, where, problem: describeError(e), input: source });
    return;
  }
  try {
    const twice = printModule(parseModule(once, 'fuzz.ir'));
    if (twice !== once)
      failures.add({
        stage: `round-trip (${what})`,
        where,
        problem: 'print(parse(print(m))) !== print(m)',
        input: `${source}\n--- IR ---\n${once}\n--- again ---\n${twice}`,
      });
  } catch (e) {
    failures.add({
      stage: `round-trip (${what})`,
      where,
      problem: describeError(e),
      input: `${source}\n--- IR ---\n${once}`,
    });
  }
}

function checkDiagnostics(ds: readonly Diagnostic[], source: string, failures: Failures, where: string): void {
  for (const d of ds) {
    const ok =
      /^DY[125]\d{3}$/.test(d.code) &&
      d.span.file === 'fuzz.dy' &&
      Number.isInteger(d.span.line) &&
      d.span.line >= 1 &&
      d.span.col >= 1 &&
      d.span.offset >= 0 &&
      d.span.offset <= source.length &&
      d.message.length > 0;
    if (!ok)
      failures.add({
        stage: 'diagnostic shape',
        where,
        problem: `bad diagnostic ${JSON.stringify({ code: d.code, span: d.span, message: d.message })}`,
        input: source,
      });
  }
  try {
    formatDiagnostics(ds, source);
  } catch (e) {
    failures.add({ stage: 'format diagnostics', where, problem: describeError(e), input: source });
  }
}

function interpretCheck(
  typed: Module,
  optimised: Module,
  rng: Rng,
  failures: Failures,
  where: string,
  source: string,
  stats: Stats,
): void {
  for (const k of optimised.kernels.slice(0, 2)) {
    const skew = chance(rng, 0.12);
    const inputs = tinyInputs(k, rng, skew);
    if (!inputs || maxTrips(k.body, inputs.scalars) > MAX_TRIPS) continue;
    stats.interpreted++;
    let out: ReturnType<typeof interpretKernel>;
    try {
      out = interpretKernel(k, inputs);
    } catch (e) {
      if (e instanceof InputError) {
        stats.inputErrors++;
        continue;
      }
      failures.add({
        stage: 'interpret',
        where: `${where} kernel ${k.name}`,
        problem: describeError(e),
        input: source,
      });
      continue;
    }
    stats.interpretedOk++;
    for (const r of k.results) {
      const t = out.outputs.get(r.name);
      const want = r.type.shape.map((d) => (d.kind === 'lit' ? d.value : out.dims.get(d.name)));
      if (!t) failures.add({ stage: 'interpret result', where, problem: `result '${r.name}' missing`, input: source });
      else if (
        JSON.stringify(tensorShape(t)) !== JSON.stringify(want) ||
        (r.type.format !== t.format && !(r.type.shape.length === 0 && t.format === 'dense'))
      )
        failures.add({
          stage: 'interpret result',
          where,
          problem: `result '${r.name}' is ${t.format} ${JSON.stringify(tensorShape(t))}, declared ${r.type.format} ${JSON.stringify(want)}`,
          input: source,
        });
    }
    // The same kernel before classification and fusion must compute the same values.
    const before = typed.kernels.find((x) => x.name === k.name);
    if (!before) continue;
    let ref: ReturnType<typeof interpretKernel>;
    try {
      ref = interpretKernel(before, inputs);
    } catch (e) {
      failures.add({
        stage: 'interpret (after infer-types only)',
        where,
        problem: `threw where the optimised module did not: ${describeError(e)}`,
        input: source,
      });
      continue;
    }
    for (const r of k.results) {
      const a = denseValues(out.outputs.get(r.name)!);
      const b = ref.outputs.has(r.name) ? denseValues(ref.outputs.get(r.name)!) : [];
      if (a.length !== b.length || a.some((x, i) => !close(x, b[i]!)))
        failures.add({
          stage: 'pipeline changes results',
          where: `${where} kernel ${k.name} result ${r.name}`,
          problem: `after the default pipeline ${JSON.stringify(a.slice(0, 12))} but after infer-types only ${JSON.stringify(b.slice(0, 12))}`,
          input: source,
        });
    }
  }
}

function fuzzGroup(seeds: Record<string, string>, cases: number, seed: number): { failures: Failures; stats: Stats } {
  const rng = new Rng(seed);
  const failures = new Failures();
  const stats: Stats = { cases: 0, compiled: 0, pipelined: 0, interpreted: 0, interpretedOk: 0, inputErrors: 0 };
  const names = Object.keys(seeds);
  let compiledSeen = 0;
  for (let c = 0; c < cases; c++) {
    const seedName = names[c % names.length]!;
    const { text: source, applied } = mutate(seeds[seedName]!, rng);
    const where = `seed ${seed} case ${c} (${seedName}: ${applied.join(', ')})`;
    stats.cases++;
    let r: ReturnType<typeof compileSource>;
    try {
      r = compileSource(source, 'fuzz.dy');
    } catch (e) {
      if (classify(e) !== 'diagnostics')
        failures.add({ stage: 'compile', where, problem: describeError(e), input: source });
      continue;
    }
    checkDiagnostics(r.diagnostics, source, failures, where);
    const errors = r.diagnostics.filter((d) => d.severity === 'error');
    if (!r.module) {
      if (errors.length === 0)
        failures.add({ stage: 'compile', where, problem: 'no module and no error diagnostic', input: source });
      continue;
    }
    if (errors.length > 0)
      failures.add({
        stage: 'compile',
        where,
        problem: `a module together with errors: ${errors[0]!.code} ${errors[0]!.message}`,
        input: source,
      });
    stats.compiled++;
    roundTrip(r.module, 'checker output', failures, where, source);
    let optimised: Module;
    let typed: Module;
    try {
      typed = runPipeline(r.module, { passes: ['infer-types'] });
      optimised = runPipeline(r.module, { passes: DEFAULT_PIPELINE });
    } catch (e) {
      // A program the checker accepted should not fail verification in a pass.
      failures.add({
        stage: classify(e) === 'diagnostics' ? 'pipeline diagnostics on a checked program' : 'pipeline',
        where,
        problem: describeError(e),
        input: source,
      });
      continue;
    }
    stats.pipelined++;
    roundTrip(optimised, 'after the default pipeline', failures, where, source);
    if (compiledSeen++ % INTERPRET_EVERY === 0) interpretCheck(typed, optimised, rng, failures, where, source, stats);
  }
  return { failures, stats };
}

function expectClean(name: string, res: { failures: Failures; stats: Stats }): void {
  // Printed so the counts show in the test log.
  console.log(`${name}: ${JSON.stringify(res.stats)}`);
  expect(res.failures.report(), res.failures.report().join('\n\n')).toEqual([]);
}

describe('fuzz: mutated programs', () => {
  it(`${CASES_EXAMPLES} mutants of the example programs end in success or diagnostics`, () => {
    const res = fuzzGroup(exampleSeeds(), CASES_EXAMPLES, 0x5eed01 + FUZZ_SEED_OFFSET);
    expectClean('examples', res);
    // The mutations must leave enough programs compiling to exercise the later stages.
    expect(res.stats.compiled).toBeGreaterThan(CASES_EXAMPLES / 10);
    expect(res.stats.interpretedOk).toBeGreaterThan(30);
  });

  it(`${CASES_EXTRA} mutants of programs using the other formats, dtypes and operators`, () => {
    const res = fuzzGroup(EXTRA_SEEDS, CASES_EXTRA, 0x5eed02 + FUZZ_SEED_OFFSET);
    expectClean('extra seeds', res);
    expect(res.stats.compiled).toBeGreaterThan(CASES_EXTRA / 10);
  });

  it('the unmutated seeds compile, run the pipeline and round-trip', () => {
    for (const [name, src] of Object.entries({ ...exampleSeeds(), ...EXTRA_SEEDS })) {
      const r = compileSource(src, name);
      expect(
        r.diagnostics.map((d) => `${d.code} ${d.message}`),
        name,
      ).toEqual([]);
      const m = runPipeline(r.module!, { passes: DEFAULT_PIPELINE });
      const text = printModule(m);
      expect(printModule(parseModule(text))).toBe(text);
    }
  });

  // Regression (was a crash): a temporary assigned only inside a repeat that runs zero times (a
  // literal `repeat 0`, which the checker accepts, or `repeat c` with c = 0)
  // and read after the loop crashes the interpreter with a TypeError
  // ("Cannot read properties of undefined (reading 'data')", or 'pattern' for
  // a sparse temporary) instead of a diagnostic or an InputError. From the
  // CLI: `dype run z.dy --input x=@ones --param n=3` exits 70 with a stack
  // trace; it is now an InputError (DY3015).
  it('a temporary assigned only in a zero-trip repeat is a diagnostic or an InputError', () => {
    const programs = [
      'kernel k(x: dense<f32>[n]) -> (y: dense<f32>[n]) {\n  repeat 0 { t[i] = x[i] * 2; }\n  y[i] = t[i];\n}\n',
      'kernel k(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) {\n  repeat 0 { E[i, j] = A[i, j] * 2; }\n  y[i] = E[i, j] * x[j];\n}\n',
      'kernel k(x: dense<f32>[n], c: i32) -> (y: dense<f32>[n]) {\n  repeat c { t[i] = x[i] * 2; }\n  y[i] = t[i];\n}\n',
    ];
    const A = toCsr({
      kind: 'coordinate',
      rows: 2,
      cols: 2,
      field: 'real',
      symmetry: 'general',
      rowIdx: Int32Array.of(0),
      colIdx: Int32Array.of(1),
      values: Float64Array.of(1),
      lines: Int32Array.of(3),
    });
    for (const src of programs) {
      const r = compileSource(src, 'z.dy');
      if (!r.module) continue; // rejected by the checker: fine
      const k = runPipeline(r.module, { passes: DEFAULT_PIPELINE }).kernels[0]!;
      const tensors = new Map<string, Tensor>([['x', { format: 'dense', shape: [2], data: Float64Array.of(1, 2) }]]);
      if (k.params.some((p) => p.name === 'A')) tensors.set('A', A);
      const scalars = new Map(k.params.some((p) => p.name === 'c') ? [['c', 0]] : []);
      expect(() => interpretKernel(k, { tensors, scalars })).toThrow(InputError);
    }
  });

  it('a thrown DiagnosticError counts as diagnostics (sanity of the classifier)', () => {
    expect(classify(new DiagnosticError([]))).toBe('diagnostics');
    expect(classify(new InputError('DY3001', 'f', 1, 'x'))).toBe('input-error');
    expect(classify(new TypeError('x'))).toBe('other');
  });
});
