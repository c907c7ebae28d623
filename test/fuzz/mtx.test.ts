/**
 * Fuzzing the data readers with mutated Matrix Market files and edge lists
 * (fixed seeds): header corruptions, size-line edits, index edits (0, -1,
 * huge, non-integer), value edits (nan, text, empty), dropped, duplicated and
 * swapped lines, line-ending and whitespace changes, truncation and random
 * character noise. Every mutant must parse or throw an InputError (never
 * another exception), and:
 *   - an InputError reads `fuzz.mtx:LINE: error DY30xx: ...` with a catalogue
 *     code and a line inside the file;
 *   - a parsed result is well formed (shapes, index ranges, no NaN, no
 *     repeated position, pattern values 1), and converts to CSR/CSC/COO (and
 *     dense when small) without any other exception;
 *   - parsing the text and parsing its UTF-8 bytes agree;
 *   - for mutants that are still strictly well formed, the result equals an
 *     independent, simple reading of the file, and mutants that a simple
 *     reading finds invalid are rejected.
 */
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATA_ERROR_CODES, InputError } from '../../runtime/errors.js';
import { toCoo, toCsc, toCsr, toDense } from '../../runtime/io/convert.js';
import { parseEdgeList } from '../../runtime/io/edgelist.js';
import type { MtxData } from '../../runtime/io/mtx-data.js';
import { parseMatrixMarket } from '../../runtime/io/mtx-read.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { chance, describeError, FUZZ_SCALE, FUZZ_SEED_OFFSET, Failures, pick, Rng, splice, weighted } from './util.js';

const MTX_CASES = Math.round(4000 * FUZZ_SCALE);
const EDGE_CASES = Math.round(2000 * FUZZ_SCALE);
/** Convert to dense only below this many cells. */
const MAX_DENSE_CELLS = 1 << 16;

const MATRIX_DIR = resolve(REPO_ROOT, '../shared/data/matrices');

// ------------------------------------------------------------------ seeds

const H = (format: string, field: string, symmetry: string): string =>
  `%%MatrixMarket matrix ${format} ${field} ${symmetry}`;

const MTX_SEEDS: Record<string, string> = {
  'real-general':
    [
      H('coordinate', 'real', 'general'),
      '% a comment',
      '4 3 5',
      '1 1 1.5',
      '2 3 -2',
      '4 1 3e-2',
      '3 2 0',
      '4 3 7',
    ].join('\n') + '\n',
  'integer-symmetric':
    [H('coordinate', 'integer', 'symmetric'), '4 4 4', '1 1 2', '2 1 -1', '3 2 5', '4 4 9'].join('\n') + '\n',
  'pattern-general': [H('coordinate', 'pattern', 'general'), '3 5 4', '1 5', '2 2', '3 1', '3 4'].join('\n') + '\n',
  'real-skew': [H('coordinate', 'real', 'skew-symmetric'), '3 3 2', '2 1 1.25', '3 1 -4'].join('\n') + '\n',
  'pattern-symmetric':
    [H('coordinate', 'pattern', 'symmetric'), '%', '5 5 4', '2 1', '3 1', '5 4', '4 4'].join('\n') + '\n',
  'array-general': [H('array', 'real', 'general'), '3 2', '1', '2.5', '-3', '4', '0', '6e1'].join('\n') + '\n',
  'array-symmetric': [H('array', 'real', 'symmetric'), '3 3', '1', '2', '3', '4', '5', '6'].join('\n') + '\n',
  'array-integer-skew': [H('array', 'integer', 'skew-symmetric'), '3 3', '1', '2', '3'].join('\n') + '\n',
  vector: [H('array', 'real', 'general'), '4 1', '1', '-1', '0.5', 'inf'].join('\n') + '\n',
  empty: [H('coordinate', 'real', 'general'), '0 0 0'].join('\n') + '\n',
  'one-by-one': [H('coordinate', 'real', 'general'), '1 1 1', '1 1 -0'].join('\n') + '\n',
};

const EDGE_SEEDS: Record<string, string> = {
  small: ['# a graph', '1 2', '2 3', '3 1', '10 2', '2 10'].join('\n') + '\n',
  sparse: ['% sparse ids', '100000 7', '7 3000000000', '3000000000 100000', '', '5 5'].join('\n') + '\n',
  tabs: ['0\t1', '1\t2', '2\t0', '0\t1'].join('\n') + '\n',
};

function realSeeds(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ['karate.mtx', 'lp_afiro.mtx', 'ash219.mtx']) {
    const p = join(MATRIX_DIR, f);
    if (existsSync(p)) out[f] = readFileSync(p, 'utf8');
  }
  return out;
}

function realEdgeSeed(): Record<string, string> {
  const p = join(MATRIX_DIR, 'cora.cites');
  if (!existsSync(p)) return {};
  return { 'cora-head': readFileSync(p, 'utf8').split('\n').slice(0, 40).join('\n') + '\n' };
}

// ------------------------------------------------------------------ mutation

const HEADER_WORDS = [
  '%%MatrixMarket',
  '%%matrixmarket',
  '%MatrixMarket',
  'matrix',
  'vector',
  'coordinate',
  'array',
  'Coordinate',
  'coordinat',
  'real',
  'double',
  'integer',
  'pattern',
  'complex',
  'REAL',
  'general',
  'symmetric',
  'skew-symmetric',
  'hermitian',
  'Symmetric',
  '',
  'x',
  '%%',
];
const BAD_INDICES = [
  '0',
  '-1',
  '2147483648',
  '2147483647',
  '99999999999999999999',
  '1.5',
  '1e0',
  '1.0',
  'x',
  '',
  '+1',
  '01',
  '0x1',
  '-0',
  '1e400',
  'NaN',
  '\u0661',
];
const BAD_VALUES = [
  'nan',
  'NaN',
  '-nan',
  '+nan',
  'abc',
  '',
  'inf',
  '-inf',
  'Infinity',
  '-Infinity',
  '1e999',
  '-1e999',
  '1e-999',
  '1,5',
  '--1',
  '.',
  '1.',
  '.5',
  '+.5e-3',
  '0x10',
  '1e',
  '1e+',
  '1_0',
  '1 2',
  '\u00a0',
];
const SIZE_EDITS = [
  '0',
  '-1',
  '1',
  '2',
  '3',
  '2147483647',
  '2147483648',
  '99999999999999999999',
  '1.5',
  '1e3',
  'abc',
  '',
  '3 3',
  '4294967297',
];
const NOISE = [
  ' ',
  '\t',
  '\r',
  '\n',
  '\r\n',
  '\v',
  '\f',
  '\u0000',
  '%',
  '#',
  '-',
  '+',
  '.',
  'e',
  '1',
  '9',
  'a',
  '\u00e9',
  '\ufeff',
  '\u2028',
  '\ud83d\ude00',
];

type Mutator = (text: string, rng: Rng) => string | undefined;

const lines = (t: string): string[] => t.split('\n');
const unlines = (ls: readonly string[]): string => ls.join('\n');

/** Lines that are neither the header (0) nor comments nor blank. */
function contentLines(ls: readonly string[], skipHeader: boolean): number[] {
  return ls.flatMap((l, i) => ((skipHeader && i === 0) || /^\s*(%|#|$)/.test(l) ? [] : [i]));
}

function editWord(line: string, rng: Rng, pickWord: (i: number, words: string[]) => string | undefined): string {
  const words = line.trim().split(/\s+/);
  const i = rng.int(words.length);
  const w = pickWord(i, words);
  if (w === undefined) return line;
  words[i] = w;
  return words.join(' ');
}

function lineMutator(
  sel: (ls: string[]) => number[],
  edit: (line: string, rng: Rng, index: number) => string | undefined,
): Mutator {
  return (t, rng) => {
    const ls = lines(t);
    const at = sel(ls);
    if (at.length === 0) return undefined;
    const i = pick(rng, at);
    const out = edit(ls[i]!, rng, i);
    if (out === undefined) return undefined;
    ls[i] = out;
    return unlines(ls);
  };
}

const firstContent = (ls: string[]): number[] => contentLines(ls, true).slice(0, 1);
const entryLines = (ls: string[]): number[] => contentLines(ls, true).slice(1);

const generic: Record<string, Mutator> = {
  'drop-line': (t, rng) => {
    const ls = lines(t);
    ls.splice(rng.int(ls.length), 1);
    return unlines(ls);
  },
  'duplicate-line': (t, rng) => {
    const ls = lines(t);
    const i = rng.int(ls.length);
    ls.splice(i, 0, ls[i]!);
    return unlines(ls);
  },
  'swap-lines': (t, rng) => {
    const ls = lines(t);
    const a = rng.int(ls.length);
    const b = rng.int(ls.length);
    [ls[a], ls[b]] = [ls[b]!, ls[a]!];
    return unlines(ls);
  },
  'insert-blank-or-comment': (t, rng) => {
    const ls = lines(t);
    ls.splice(rng.int(ls.length + 1), 0, pick(rng, ['', '   ', '% comment', '%', '# hash', '\t']));
    return unlines(ls);
  },
  'extra-token': lineMutator(
    (ls) => contentLines(ls, false),
    (l, rng) => `${l} ${pick(rng, ['1', 'x', '0', '1.5', '%c'])}`,
  ),
  'drop-token': lineMutator(
    (ls) => contentLines(ls, false),
    (l, rng) => {
      const w = l.trim().split(/\s+/);
      w.splice(rng.int(w.length), 1);
      return w.join(' ');
    },
  ),
  crlf: (t) => t.replace(/\n/g, '\r\n'),
  'cr-only': (t) => t.replace(/\n/g, '\r'),
  'tabs-and-spaces': (t, rng) => t.replace(/ /g, () => pick(rng, [' ', '\t', '  ', ' \t '])),
  'leading-trailing-space': lineMutator(
    (ls) => ls.map((_, i) => i),
    (l, rng) => (chance(rng, 0.5) ? `  ${l}` : `${l}  `),
  ),
  'no-final-newline': (t) => t.replace(/\n+$/, ''),
  truncate: (t, rng) => t.slice(0, rng.int(t.length + 1)),
  'insert-char': (t, rng) => splice(t, rng.int(t.length + 1), 0, pick(rng, NOISE)),
  'delete-char': (t, rng) => (t.length === 0 ? undefined : deleteChar(t, rng.int(t.length))),
  'replace-char': (t, rng) => (t.length === 0 ? undefined : replaceChar(t, rng.int(t.length), pick(rng, NOISE))),
};

function deleteChar(t: string, at: number): string {
  return t.slice(0, at) + t.slice(at + 1);
}

function replaceChar(t: string, at: number, c: string): string {
  return t.slice(0, at) + c + t.slice(at + 1);
}

const mtxSpecific: Record<string, Mutator> = {
  'header-word': (t, rng) => {
    const ls = lines(t);
    ls[0] = editWord(ls[0]!, rng, () => pick(rng, HEADER_WORDS));
    return unlines(ls);
  },
  'header-drop-or-add-word': (t, rng) => {
    const ls = lines(t);
    const w = ls[0]!.split(' ');
    if (chance(rng, 0.5)) w.splice(rng.int(w.length), 1);
    else w.splice(rng.int(w.length + 1), 0, pick(rng, HEADER_WORDS));
    ls[0] = w.join(' ');
    return unlines(ls);
  },
  'header-case': (t, rng) => {
    const ls = lines(t);
    ls[0] = chance(rng, 0.5) ? ls[0]!.toUpperCase() : ls[0]!.replace(/\b\w/g, (c) => c.toUpperCase());
    return unlines(ls);
  },
  'header-gone': (t, rng) => {
    const ls = lines(t);
    if (chance(rng, 0.5)) ls.shift();
    else ls[0] = pick(rng, ['', '% comment', '%%MatrixMarket', '%%MatrixMarket matrix']);
    return unlines(ls);
  },
  'size-line': lineMutator(firstContent, (l, rng) => editWord(l, rng, () => pick(rng, SIZE_EDITS))),
  'size-line-off-by-one': lineMutator(firstContent, (l, rng) =>
    editWord(l, rng, (_i, w) => {
      const v = Number(w[_i]);
      return Number.isFinite(v) ? String(v + pick(rng, [-1, 1, 2])) : undefined;
    }),
  ),
  'entry-index': lineMutator(entryLines, (l, rng) => {
    const w = l.trim().split(/\s+/);
    const i = rng.int(Math.min(2, w.length));
    w[i] = chance(rng, 0.7) ? pick(rng, BAD_INDICES) : String(1 + rng.int(12));
    return w.join(' ');
  }),
  'entry-value': lineMutator(entryLines, (l, rng) => {
    const w = l.trim().split(/\s+/);
    w[w.length - 1] = pick(rng, BAD_VALUES);
    return w.join(' ');
  }),
};

const edgeSpecific: Record<string, Mutator> = {
  'edge-id': lineMutator(
    (ls) => contentLines(ls, false),
    (l, rng) => {
      const w = l.trim().split(/\s+/);
      w[rng.int(Math.min(2, w.length))] = pick(rng, [
        '-1',
        '0',
        '9007199254740991',
        '9007199254740992',
        '18446744073709551616',
        '1.5',
        '1e3',
        'x',
        '',
        '+3',
        '007',
        '4294967296',
        '2147483648',
        String(rng.int(50)),
      ]);
      return w.join(' ');
    },
  ),
  'single-column': lineMutator(
    (ls) => contentLines(ls, false),
    (l) => l.trim().split(/\s+/)[0] ?? '',
  ),
};

function mutator(
  table: Record<string, Mutator>,
  specific: Record<string, Mutator>,
): (readonly [number, [string, Mutator]])[] {
  return [
    ...Object.entries(table).map((e) => [1, e] as const),
    ...Object.entries(specific).map((e) => [3, e] as const),
  ];
}

const MTX_MUTATORS = mutator(generic, mtxSpecific);
const EDGE_MUTATORS = mutator(generic, edgeSpecific);

function mutate(
  text: string,
  rng: Rng,
  table: (readonly [number, [string, Mutator]])[],
): { text: string; applied: string[] } {
  const n = weighted(rng, [
    [6, 1],
    [3, 2],
    [1, 3],
  ]);
  const applied: string[] = [];
  let t = text;
  for (let tries = 0; applied.length < n && tries < 20; tries++) {
    const [name, m] = weighted(rng, table);
    const out = m(t, rng);
    if (out === undefined || out === t) continue;
    applied.push(name);
    t = out;
  }
  return { text: t, applied };
}

// ------------------------------------------------------- a simple reading

type Simple = { ok: true; data: MtxData } | { ok: false; why: string } | undefined;

const INDEX_RE = /^[1-9]\d{0,5}$/;
const REAL_RE = /^-?(\d{1,6}(\.\d{1,6})?(e-?\d{1,2})?|inf)$/;
const INT_RE = /^-?\d{1,6}$/;
const num = (w: string): number => (w === 'inf' ? Infinity : w === '-inf' ? -Infinity : Number(w));

/**
 * A deliberately simple reading of strictly formed Matrix Market text: one
 * lower-case header, '%' comment lines, single-space separated tokens, small
 * numbers. Returns undefined when the text is outside that subset (then only
 * the general checks apply), else the expected data or the reason the file is
 * invalid.
 */
function simpleMtx(text: string): Simple {
  if (!/^[\x20-\x7e\n]*$/.test(text)) return undefined;
  const ls = text.split('\n');
  if (ls[ls.length - 1] === '') ls.pop();
  const head =
    /^%%MatrixMarket matrix (coordinate|array) (real|integer|pattern) (general|symmetric|skew-symmetric)$/.exec(
      ls[0] ?? '',
    );
  if (!head) return undefined;
  const [, format, field, symmetry] = head as unknown as [
    string,
    'coordinate' | 'array',
    'real' | 'integer' | 'pattern',
    'general' | 'symmetric' | 'skew-symmetric',
  ];
  if (format === 'array' && field === 'pattern') return undefined;
  const body = ls.slice(1).filter((l) => !l.startsWith('%'));
  if (ls.slice(1).some((l) => l === '' || /^ | $| {2}/.test(l))) return undefined;
  const size = body[0];
  if (size === undefined) return undefined;
  const sw = size.split(' ');
  if (!sw.every((w) => /^\d{1,4}$/.test(w))) return undefined;
  const valueRe = field === 'integer' ? INT_RE : REAL_RE;
  const entries = body.slice(1);
  if (format === 'coordinate') {
    if (sw.length !== 3) return undefined;
    const [rows, cols, nnz] = sw.map(Number) as [number, number, number];
    const perLine = field === 'pattern' ? 2 : 3;
    for (const e of entries) {
      const w = e.split(' ');
      if (
        w.length !== perLine ||
        !INDEX_RE.test(w[0]!) ||
        !INDEX_RE.test(w[1]!) ||
        (perLine === 3 && !valueRe.test(w[2]!))
      )
        return undefined;
    }
    if (symmetry !== 'general' && rows !== cols) return { ok: false, why: 'not square' };
    if (nnz > rows * cols) return { ok: false, why: 'too many entries for the shape' };
    if (entries.length !== nnz) return { ok: false, why: `entry count ${entries.length} != ${nnz}` };
    const ri: number[] = [];
    const ci: number[] = [];
    const vs: number[] = [];
    const seen = new Set<number>();
    for (const e of entries) {
      const w = e.split(' ');
      const r = Number(w[0]) - 1;
      const c = Number(w[1]) - 1;
      const v = field === 'pattern' ? 1 : num(w[2]!);
      if (r >= rows || c >= cols) return { ok: false, why: 'index out of range' };
      if (symmetry === 'skew-symmetric' && r === c) return { ok: false, why: 'skew diagonal' };
      const put = (a: number, b: number, x: number): boolean => {
        if (seen.has(a * cols + b)) return false;
        seen.add(a * cols + b);
        ri.push(a);
        ci.push(b);
        vs.push(x);
        return true;
      };
      if (!put(r, c, v)) return { ok: false, why: 'duplicate' };
      if (symmetry !== 'general' && r !== c && !put(c, r, symmetry === 'skew-symmetric' ? -v : v))
        return { ok: false, why: 'duplicate (mirror)' };
    }
    return {
      ok: true,
      data: {
        kind: 'coordinate',
        rows,
        cols,
        field,
        symmetry,
        rowIdx: Int32Array.from(ri),
        colIdx: Int32Array.from(ci),
        values: Float64Array.from(vs),
        lines: new Int32Array(0),
      },
    };
  }
  if (sw.length !== 2) return undefined;
  const [rows, cols] = sw.map(Number) as [number, number];
  for (const e of entries) if (!valueRe.test(e)) return undefined;
  if (symmetry !== 'general' && rows !== cols) return { ok: false, why: 'not square' };
  const positions: [number, number][] = [];
  for (let c = 0; c < cols; c++)
    for (let r = symmetry === 'general' ? 0 : symmetry === 'symmetric' ? c : c + 1; r < rows; r++)
      positions.push([r, c]);
  if (entries.length !== positions.length)
    return { ok: false, why: `value count ${entries.length} != ${positions.length}` };
  const data = new Float64Array(rows * cols);
  positions.forEach(([r, c], k) => {
    const v = num(entries[k]!);
    data[r * cols + c] = v;
    if (symmetry === 'symmetric') data[c * cols + r] = v;
    if (symmetry === 'skew-symmetric') data[c * cols + r] = -v;
  });
  return { ok: true, data: { kind: 'array', rows, cols, field: field as 'real' | 'integer', symmetry, data } };
}

/** A simple reading of strict edge lists: `a b` per line, '#'/'%' comments, small ids. */
function simpleEdges(text: string): { n: number; pairs: [number, number][] } | undefined {
  if (!/^[\x20-\x7e\n\t]*$/.test(text)) return undefined;
  const raw: [number, number][] = [];
  for (const l of text.split('\n')) {
    if (l === '' || l.startsWith('#') || l.startsWith('%')) continue;
    const m = /^(\d{1,12})[ \t]+(\d{1,12})$/.exec(l);
    if (!m) return undefined;
    raw.push([Number(m[1]), Number(m[2])]);
  }
  const ids = [...new Set(raw.flat())].sort((a, b) => a - b);
  const num = new Map(ids.map((id, i) => [id, i]));
  const keys = new Set<string>();
  const pairs: [number, number][] = [];
  for (const [a, b] of raw) {
    const p: [number, number] = [num.get(a)!, num.get(b)!];
    if (keys.has(p.join())) continue;
    keys.add(p.join());
    pairs.push(p);
  }
  pairs.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  return { n: ids.length, pairs };
}

// ------------------------------------------------------------------ checks

function entriesOf(d: MtxData): string {
  if (d.kind === 'array') return JSON.stringify([d.kind, d.rows, d.cols, d.field, d.symmetry, [...d.data].map(String)]);
  const es = [...d.values].map((v, k) => [d.rowIdx[k], d.colIdx[k], String(v)]);
  return JSON.stringify([d.kind, d.rows, d.cols, d.field, d.symmetry, es]);
}

/** Structural checks of a parse result; returns a problem or undefined. */
function wellFormed(d: MtxData, text: string): string | undefined {
  const okDim = (x: number): boolean => Number.isSafeInteger(x) && x >= 0 && x <= 2147483647;
  if (!okDim(d.rows) || !okDim(d.cols)) return `bad shape ${d.rows} x ${d.cols}`;
  if (d.kind === 'array') {
    if (d.data.length !== d.rows * d.cols) return `array holds ${d.data.length} values for ${d.rows} x ${d.cols}`;
    if (d.data.some((v) => Number.isNaN(v))) return 'array holds NaN';
    if (d.field === 'integer' && d.data.some((v) => Number.isFinite(v) && !Number.isInteger(v)))
      return 'integer array holds a fraction';
    return undefined;
  }
  const n = d.values.length;
  if (d.rowIdx.length !== n || d.colIdx.length !== n || d.lines.length !== n)
    return 'entry arrays of different lengths';
  const lineCount = text.split(/\r\n|\r|\n/).length;
  const seen = new Set<number>();
  for (let k = 0; k < n; k++) {
    const r = d.rowIdx[k]!;
    const c = d.colIdx[k]!;
    if (r < 0 || r >= d.rows || c < 0 || c >= d.cols) return `entry ${k} at (${r},${c}) outside ${d.rows} x ${d.cols}`;
    const v = d.values[k]!;
    if (Number.isNaN(v)) return `entry ${k} is NaN`;
    if (d.field === 'pattern' && v !== 1) return `pattern entry ${k} is ${v}`;
    if (d.field === 'integer' && Number.isFinite(v) && !Number.isInteger(v)) return `integer entry ${k} is ${v}`;
    if (d.lines[k]! < 1 || d.lines[k]! > lineCount) return `entry ${k} from line ${d.lines[k]} of ${lineCount}`;
    const key = r * d.cols + c;
    if (seen.has(key)) return `position (${r},${c}) stored twice`;
    seen.add(key);
  }
  return undefined;
}

function checkConversions(d: MtxData): string | undefined {
  if (d.rows > 1_000_000 || d.cols > 1_000_000) return undefined; // CSR/CSC need O(rows)/O(cols) by design
  try {
    const csr = toCsr(d);
    for (let r = 0; r < csr.rows; r++) {
      if (csr.rowPtr[r]! > csr.rowPtr[r + 1]!) return 'CSR rowPtr decreases';
      for (let e = csr.rowPtr[r]! + 1; e < csr.rowPtr[r + 1]!; e++)
        if (csr.colIdx[e - 1]! >= csr.colIdx[e]!) return 'CSR columns not ascending';
    }
    if (csr.rowPtr[csr.rows] !== csr.values.length) return 'CSR rowPtr does not end at nnz';
    const csc = toCsc(d);
    const coo = toCoo(d);
    if (csc.values.length !== csr.values.length || coo.values.length !== csr.values.length)
      return 'CSR/CSC/COO disagree on nnz';
    if (d.rows * d.cols <= MAX_DENSE_CELLS) {
      const dense = toDense(d);
      if (dense.data.length !== d.rows * d.cols) return 'dense has the wrong size';
    }
  } catch (e) {
    if (e instanceof InputError) return undefined; // e.g. duplicates found at conversion
    return `conversion threw ${describeError(e)}`;
  }
  return undefined;
}

/** Checks an InputError's shape: `fuzz.mtx:LINE: error DY30xx: detail` with a line inside the file. */
function errorShape(e: InputError, file: string, text: string): string | undefined {
  if (!(e.code in DATA_ERROR_CODES)) return `unknown code ${e.code}`;
  if (e.file !== file) return `error names '${e.file}', not '${file}'`;
  const lineCount = text.split(/\r\n|\r|\n/).length;
  if (e.line !== undefined && (!Number.isInteger(e.line) || e.line < 1 || e.line > lineCount + 1))
    return `line ${e.line} outside 1..${lineCount + 1}`;
  const want = `${e.file}${e.line !== undefined ? `:${e.line}` : ''}: error ${e.code}: ${e.detail}`;
  if (e.message !== want)
    return `message ${JSON.stringify(e.message)} is not of the form file:line: error CODE: detail`;
  if (e.detail.length === 0 || /\n/.test(e.detail)) return 'empty or multi-line detail';
  return undefined;
}

type Outcome = { ok: true; data: MtxData } | { ok: false; error: InputError };

function attempt(
  parse: () => MtxData,
  failures: Failures,
  stage: string,
  where: string,
  text: string,
): Outcome | undefined {
  try {
    return { ok: true, data: parse() };
  } catch (e) {
    if (e instanceof InputError) return { ok: false, error: e };
    failures.add({ stage, where, problem: describeError(e), input: text });
    return undefined;
  }
}

interface Stats {
  cases: number;
  parsed: number;
  rejected: number;
  oracle: number;
}

function fuzzReader(
  kind: 'mtx' | 'edges',
  seeds: Record<string, string>,
  cases: number,
  seed: number,
): { failures: Failures; stats: Stats } {
  const rng = new Rng(seed);
  const failures = new Failures();
  const stats: Stats = { cases: 0, parsed: 0, rejected: 0, oracle: 0 };
  const file = kind === 'mtx' ? 'fuzz.mtx' : 'fuzz.txt';
  const parse = kind === 'mtx' ? parseMatrixMarket : parseEdgeList;
  const names = Object.keys(seeds);
  for (let c = 0; c < cases; c++) {
    const seedName = names[c % names.length]!;
    const { text, applied } = mutate(seeds[seedName]!, rng, kind === 'mtx' ? MTX_MUTATORS : EDGE_MUTATORS);
    const where = `seed ${seed} case ${c} (${seedName}: ${applied.join(', ')})`;
    stats.cases++;
    const fromText = attempt(() => parse(text, file), failures, `parse ${kind} (text)`, where, text);
    const fromBytes = attempt(
      () => parse(Buffer.from(text, 'utf8'), file),
      failures,
      `parse ${kind} (bytes)`,
      where,
      text,
    );
    if (!fromText || !fromBytes) continue;
    // Text and bytes agree.
    const sig = (o: Outcome): string => (o.ok ? entriesOf(o.data) : `${o.error.code}@${o.error.line}`);
    if (sig(fromText) !== sig(fromBytes))
      failures.add({
        stage: `${kind}: text and bytes disagree`,
        where,
        problem: `text: ${sig(fromText).slice(0, 200)} / bytes: ${sig(fromBytes).slice(0, 200)}`,
        input: text,
      });
    if (!fromText.ok) {
      stats.rejected++;
      const bad = errorShape(fromText.error, file, text);
      if (bad)
        failures.add({
          stage: `${kind}: error shape`,
          where,
          problem: `${bad}: ${fromText.error.message}`,
          input: text,
        });
    } else {
      stats.parsed++;
      const bad = wellFormed(fromText.data, text) ?? checkConversions(fromText.data);
      if (bad) failures.add({ stage: `${kind}: result`, where, problem: bad, input: text });
    }
    // A simple, independent reading of strictly formed files.
    if (kind === 'mtx') {
      const want = simpleMtx(text);
      if (want === undefined) continue;
      stats.oracle++;
      if (want.ok && !fromText.ok)
        failures.add({ stage: 'mtx: valid file rejected', where, problem: fromText.error.message, input: text });
      else if (!want.ok && fromText.ok)
        failures.add({ stage: 'mtx: invalid file accepted', where, problem: want.why, input: text });
      else if (want.ok && fromText.ok && entriesOf(want.data) !== entriesOf(fromText.data))
        failures.add({
          stage: 'mtx: wrong data',
          where,
          problem: `expected ${entriesOf(want.data).slice(0, 300)} got ${entriesOf(fromText.data).slice(0, 300)}`,
          input: text,
        });
    } else {
      const want = simpleEdges(text);
      if (want === undefined) continue;
      stats.oracle++;
      if (!fromText.ok)
        failures.add({ stage: 'edges: valid file rejected', where, problem: fromText.error.message, input: text });
      else {
        const d = fromText.data as Extract<MtxData, { kind: 'coordinate' }>;
        const got = { n: d.rows, pairs: [...d.rowIdx].map((r, k) => [r, d.colIdx[k]!]) };
        if (d.cols !== d.rows || JSON.stringify(got) !== JSON.stringify(want))
          failures.add({
            stage: 'edges: wrong data',
            where,
            problem: `expected ${JSON.stringify(want).slice(0, 300)} got ${JSON.stringify(got).slice(0, 300)}`,
            input: text,
          });
      }
    }
  }
  return { failures, stats };
}

function expectClean(name: string, res: { failures: Failures; stats: Stats }): void {
  console.log(`${name}: ${JSON.stringify(res.stats)}`);
  expect(res.failures.report(), res.failures.report().join('\n\n')).toEqual([]);
}

describe('fuzz: mutated Matrix Market files and edge lists', () => {
  it(`${MTX_CASES} mutants of small Matrix Market files parse or throw InputError`, () => {
    const res = fuzzReader('mtx', { ...MTX_SEEDS, ...realSeeds() }, MTX_CASES, 0x3a7101 + FUZZ_SEED_OFFSET);
    expectClean('mtx', res);
    // Both outcomes, and the oracle, must actually be exercised.
    expect(res.stats.parsed).toBeGreaterThan(MTX_CASES / 10);
    expect(res.stats.rejected).toBeGreaterThan(MTX_CASES / 4);
    expect(res.stats.oracle).toBeGreaterThan(MTX_CASES / 20);
  });

  it(`${EDGE_CASES} mutants of edge lists parse or throw InputError`, () => {
    const res = fuzzReader('edges', { ...EDGE_SEEDS, ...realEdgeSeed() }, EDGE_CASES, 0x3a7102 + FUZZ_SEED_OFFSET);
    expectClean('edges', res);
    expect(res.stats.parsed).toBeGreaterThan(EDGE_CASES / 10);
    expect(res.stats.rejected).toBeGreaterThan(EDGE_CASES / 10);
  });

  // Regression (was a crash): a 4-line coordinate file that declares 2147483647 columns (a size
  // the reader accepts) with two entries out of row order makes
  // parseMatrixMarket's duplicate check (order.ts findDuplicate) allocate
  // Int32Array(cols).fill(-1) and a counting sort over rows: about 8 GB and
  // 40 s on this machine for a 60-byte file, instead of an answer in
  // milliseconds (or a clear "too large" InputError). Run in a child process
  // with a 2 GB address-space limit so that it fails fast (RangeError: Array
  // buffer allocation failed) instead of thrashing.
  it('a tiny file declaring 2147483647 columns parses within 2 GB (the duplicate check is O(nnz) in memory)', () => {
    const script = [
      `import { parseMatrixMarket } from ${JSON.stringify(pathToFileURL(resolve(REPO_ROOT, 'dist/runtime/io/mtx-read.js')).href)};`,
      `import { InputError } from ${JSON.stringify(pathToFileURL(resolve(REPO_ROOT, 'dist/runtime/errors.js')).href)};`,
      `const text = '%%MatrixMarket matrix coordinate real general\\n4 2147483647 2\\n2 1 1.5\\n1 1 -2\\n';`,
      `try { parseMatrixMarket(text, 'huge.mtx'); } catch (e) { if (!(e instanceof InputError)) { console.error(String(e)); process.exit(3); } }`,
    ].join('\n');
    const r = spawnSync(
      'bash',
      ['-c', 'ulimit -v 2000000 && exec "$0" --input-type=module -e "$1"', process.execPath, script],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('the unmutated seeds parse and match the simple reading', () => {
    for (const [name, text] of Object.entries(MTX_SEEDS)) {
      const want = simpleMtx(text);
      expect(want?.ok, name).toBe(true);
      expect(entriesOf(parseMatrixMarket(text, name)), name).toBe(want?.ok ? entriesOf(want.data) : '');
    }
    for (const [name, text] of Object.entries(EDGE_SEEDS)) expect(() => parseEdgeList(text, name), name).not.toThrow();
  });
});
