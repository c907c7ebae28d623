/**
 * Matrix Market reader (coordinate and array; real, integer, pattern;
 * general, symmetric, skew-symmetric). Scans the bytes directly; every
 * problem is one InputError naming the file and the 1-based line.
 */

import { readInputFile } from './files.js';
import type { MtxArray, MtxCoordinate, MtxData, MtxField, MtxSymmetry } from './mtx-data.js';
import { duplicateError, findDuplicate } from './order.js';
import { ByteCursor, NUMBER_NAN_LITERAL, NUMBER_OVERFLOW, printable } from './scan.js';

export type { MtxArray, MtxCoordinate, MtxData, MtxField, MtxSymmetry } from './mtx-data.js';

const PERCENT = 37;
/** Largest row or column count (indices are Int32). */
const MAX_DIM = 2147483647;
const HEADER_FORM =
  '"%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> <general|symmetric|skew-symmetric>"';

interface Header {
  format: 'coordinate' | 'array';
  field: MtxField;
  symmetry: MtxSymmetry;
}

interface Size {
  rows: number;
  cols: number;
  /** Coordinate: entries stored in the file. */
  nnz: number;
  line: number;
}

/** Parses the text or bytes of a Matrix Market file; `file` names it in errors. */
export function parseMatrixMarket(text: string | Uint8Array, file: string): MtxData {
  const cur = new ByteCursor(text, file);
  const header = parseHeader(cur);
  const size = parseSizeLine(cur, header);
  return header.format === 'coordinate' ? readCoordinate(cur, header, size) : readArray(cur, header, size);
}

/** Reads and parses a Matrix Market file; DY3010 when it cannot be read. */
export function readMatrixMarketFile(path: string): MtxData {
  return parseMatrixMarket(readInputFile(path), path);
}

function quote(text: string): string {
  return `"${printable(text.length > 60 ? `${text.slice(0, 60)}...` : text)}"`;
}

function splitWords(text: string): string[] {
  return text.split(/[ \t\r\v\f]+/).filter((w) => w !== '');
}

function parseHeader(cur: ByteCursor): Header {
  const text = cur.lineText();
  // Lines ended by a carriage return alone (classic Mac OS) read as one line: the header's words run on into the data.
  if (/\r./.test(text)) cur.fail('DY3001', 'the lines end in a carriage return alone; expected newlines (LF, or CRLF)');
  const words = splitWords(text);
  if (words.length === 0 || words[0]!.toLowerCase() !== '%%matrixmarket') {
    const found = cur.end === 0 ? 'an empty file' : text === '' ? 'an empty line' : quote(text);
    cur.fail(
      'DY3001',
      `expected the header ${HEADER_FORM} on the first line, found ${found} (an edge list is read from a file named .cites or .txt)`,
    );
  }
  const word = (i: number, expected: string): string => {
    const w = words[i];
    if (w === undefined) cur.fail('DY3001', `the header ends after ${quote(words.join(' '))}; expected ${expected}`);
    return w.toLowerCase();
  };

  const object = word(1, 'the object "matrix"');
  if (object === 'vector') cur.fail('DY3011', 'only "matrix" objects are supported, the header says "vector"');
  if (object !== 'matrix') cur.fail('DY3001', `unknown object ${quote(words[1]!)} in the header; expected "matrix"`);

  const format = word(2, 'the format coordinate or array');
  if (format !== 'coordinate' && format !== 'array') {
    cur.fail('DY3001', `unknown format ${quote(words[2]!)} in the header; expected coordinate or array`);
  }

  const fieldWord = word(3, 'the field real, integer or pattern');
  let field: MtxField;
  if (fieldWord === 'real' || fieldWord === 'double') field = 'real';
  else if (fieldWord === 'integer' || fieldWord === 'pattern') field = fieldWord;
  else if (fieldWord === 'complex')
    cur.fail('DY3011', 'complex matrices are not supported; expected the field real, integer or pattern');
  else cur.fail('DY3001', `unknown field ${quote(words[3]!)} in the header; expected real, double, integer or pattern`);

  const symWord = word(4, 'the symmetry general, symmetric or skew-symmetric');
  let symmetry: MtxSymmetry;
  if (symWord === 'general' || symWord === 'symmetric' || symWord === 'skew-symmetric') symmetry = symWord;
  else if (symWord === 'hermitian')
    cur.fail('DY3011', 'hermitian matrices are not supported; expected general, symmetric or skew-symmetric');
  else
    cur.fail(
      'DY3001',
      `unknown symmetry ${quote(words[4]!)} in the header; expected general, symmetric or skew-symmetric`,
    );

  if (words.length > 5)
    cur.fail('DY3001', `unexpected ${quote(words[5]!)} after the symmetry in the header; expected ${HEADER_FORM}`);
  if (format === 'array' && field === 'pattern') {
    cur.fail(
      'DY3011',
      'the pattern field is only allowed with the coordinate format; expected real or integer for an array',
    );
  }
  cur.skipLine();
  return { format, field, symmetry };
}

function parseSizeLine(cur: ByteCursor, header: Header): Size {
  const coordinate = header.format === 'coordinate';
  const expected = coordinate
    ? 'the size line "rows cols entries" (three non-negative integers)'
    : 'the size line "rows cols" (two non-negative integers) of an array matrix';
  if (!cur.nextContentLine(PERCENT, PERCENT))
    cur.fail('DY3002', `the file ends before the size line; expected ${expected}`, cur.lastLine());
  const line = cur.line;
  const text = cur.lineText();
  const words = splitWords(text);
  if (words.length !== (coordinate ? 3 : 2) || !words.every((w) => /^\d+$/.test(w))) {
    cur.fail('DY3002', `expected ${expected}, found ${quote(text)}`);
  }
  const [rows, cols, nnz] = words.map(Number) as [number, number, number | undefined];
  for (const [what, n] of [
    ['row', rows],
    ['column', cols],
  ] as const) {
    if (n > MAX_DIM)
      cur.fail(
        'DY3002',
        `the ${what} count ${words[what === 'row' ? 0 : 1]} exceeds the largest supported size ${MAX_DIM}`,
      );
  }
  if (header.symmetry !== 'general' && rows !== cols) {
    cur.fail('DY3002', `a ${header.symmetry} matrix must be square, but the size line says ${rows} x ${cols}`);
  }
  if (nnz !== undefined && nnz > rows * cols) {
    cur.fail(
      'DY3002',
      `the size line declares ${nnz} entries, more than the ${rows * cols} positions of a ${rows} x ${cols} matrix`,
    );
  }
  cur.skipLine();
  return { rows, cols, nnz: nnz ?? 0, line };
}

/** 0-based index from a 1-based token value, or the DY3004 / DY3003 error. */
function toIndex(cur: ByteCursor, v: number, what: 'row' | 'column', max: number): number {
  if (v >= 1 && v <= max) return v - 1;
  if (v !== v) cur.fail('DY3004', `expected a positive integer ${what} index, found "${cur.tokenText()}"`);
  const plural = what === 'row' ? 'rows' : 'columns';
  cur.fail(
    'DY3003',
    `${what} index ${cur.tokenText()} is out of range 1..${max} (the size line gives ${max} ${plural})`,
  );
}

/** Moves to the next token of an entry line; DY3008 when the line ends first. */
function nextToken(cur: ByteCursor, have: number, need: number, names: string): void {
  cur.skipBlanks();
  if (cur.atLineEnd()) cur.fail('DY3008', `expected ${need} tokens (${names}) on an entry line, found ${have}`);
}

/** After the last token: the line must end there; then moves past its newline. */
function endLine(cur: ByteCursor, need: number, names: string): void {
  cur.skipBlanks();
  if (!cur.atLineEnd()) {
    cur.fail(
      'DY3008',
      `expected ${need} token${need > 1 ? 's' : ''} (${names}) on an entry line, found ${need + cur.tokensFrom(cur.pos)}`,
    );
  }
  if (cur.pos < cur.end) {
    cur.pos++;
    cur.line++;
  }
}

/** Reads a value token; DY3006 for NaN, DY3008 for anything that is not a number of the field. */
function readValue(cur: ByteCursor, integer: boolean): number {
  const v = cur.readNumber();
  if (v !== v) {
    if (cur.numberStatus === NUMBER_NAN_LITERAL) {
      cur.fail('DY3006', `the value is NaN ("${cur.tokenText()}"); expected a number (inf and -inf are allowed)`);
    }
    if (cur.numberStatus === NUMBER_OVERFLOW)
      cur.fail('DY3008', `the value "${cur.tokenText()}" is beyond float64's range (write inf for an infinity)`);
    const kind = integer ? 'an integer' : 'a real number (such as 1.5, -2e-3 or inf)';
    cur.fail('DY3008', `expected ${kind} for the value, found "${cur.tokenText()}"`);
  }
  if (integer && !cur.integerLiteral) {
    cur.fail('DY3008', `expected an integer value (the header says integer), found "${cur.tokenText()}"`);
  }
  return v;
}

interface EntryArrays {
  rowIdx: Int32Array;
  colIdx: Int32Array;
  values: Float64Array;
  lines: Int32Array;
}

function readCoordinate(cur: ByteCursor, header: Header, size: Size): MtxCoordinate {
  const { rows, cols, nnz } = size;
  const { field, symmetry } = header;
  // An entry line takes at least 4 bytes ("1 1" and a newline), which bounds
  // the allocation when the size line claims more than the file can hold.
  const stored = Math.min(nnz, Math.floor((cur.end - cur.pos + 1) / 4) + 1);
  const cap = symmetry === 'general' ? stored : 2 * stored;
  const arrays: EntryArrays = {
    rowIdx: new Int32Array(cap),
    colIdx: new Int32Array(cap),
    values: new Float64Array(cap),
    lines: new Int32Array(cap),
  };
  const scan = scanEntries(cur, header, size, arrays);
  if (scan.stored < nnz) {
    cur.fail(
      'DY3005',
      `the size line (line ${size.line}) declares ${nnz} entries, but the file ends after ${scan.stored}`,
      cur.lastLine(),
    );
  }
  let { rowIdx, colIdx, values, lines } = arrays;
  const out = scan.entries;
  if (out !== cap) {
    // A view when little would be wasted (a symmetric file's diagonal), a copy otherwise.
    const copy = out < cap - (cap >> 3);
    rowIdx = copy ? rowIdx.slice(0, out) : rowIdx.subarray(0, out);
    colIdx = copy ? colIdx.slice(0, out) : colIdx.subarray(0, out);
    values = copy ? values.slice(0, out) : values.subarray(0, out);
    lines = copy ? lines.slice(0, out) : lines.subarray(0, out);
  }
  if (!scan.ordered) {
    const dup = findDuplicate(rowIdx, colIdx, rows, cols);
    if (dup !== null) throw duplicateError({ rowIdx, colIdx, lines, symmetry }, dup[0], dup[1], cur.file);
  }
  return {
    kind: 'coordinate',
    rows,
    cols,
    field,
    symmetry,
    rowIdx,
    colIdx,
    values,
    lines,
    file: cur.file,
    sizeLine: size.line,
  };
}

interface Scan {
  /** Entry lines read. */
  stored: number;
  /** Entries written, mirrors included. */
  entries: number;
  /** The entries are known to hold no repeated position. */
  ordered: boolean;
}

/** The entry lines, into `arrays` (mirrors added). Kept apart from the code around it so the JIT optimizes the loop alone. */
function scanEntries(cur: ByteCursor, header: Header, size: Size, arrays: EntryArrays): Scan {
  const { rows, cols, nnz } = size;
  const { rowIdx, colIdx, values, lines } = arrays;
  const pattern = header.field === 'pattern';
  const integer = header.field === 'integer';
  const general = header.symmetry === 'general';
  const skew = header.symmetry === 'skew-symmetric';
  const need = pattern ? 2 : 3;
  const names = pattern ? 'row column' : 'row column value';

  let k = 0;
  let out = 0;
  // Stored entries in strictly increasing column-major or row-major order, all
  // in one triangle when symmetric, cannot repeat a position: the usual case,
  // which skips the bucketing duplicate check.
  let colMajor = true;
  let rowMajor = true;
  let lower = true;
  let upper = true;
  let pr = -1;
  let pc = -1;
  while (cur.nextContentLine(PERCENT, PERCENT)) {
    const line = cur.line;
    if (k === nnz) {
      cur.fail(
        'DY3005',
        `the size line (line ${size.line}) declares ${nnz} entries, but this line holds entry ${nnz + 1}`,
      );
    }
    let r: number;
    let c: number;
    let v = 1;
    if (cur.readSimpleEntry(rows, cols, pattern, integer)) {
      r = cur.entryRow;
      c = cur.entryCol;
      v = cur.entryValue;
    } else {
      // Signs, unusual blanks, or an error to report.
      r = toIndex(cur, cur.readInteger(), 'row', rows);
      nextToken(cur, 1, need, names);
      c = toIndex(cur, cur.readInteger(), 'column', cols);
      if (!pattern) {
        nextToken(cur, 2, need, names);
        v = readValue(cur, integer);
      }
      endLine(cur, need, names);
    }

    if (!(c > pc || (c === pc && r > pr))) colMajor = false;
    if (!(r > pr || (r === pr && c > pc))) rowMajor = false;
    if (r < c) lower = false;
    else if (r > c) upper = false;
    pr = r;
    pc = c;
    rowIdx[out] = r;
    colIdx[out] = c;
    values[out] = v;
    lines[out] = line;
    out++;
    if (!general) {
      if (r !== c) {
        rowIdx[out] = c;
        colIdx[out] = r;
        values[out] = skew ? 0 - v : v;
        lines[out] = line;
        out++;
      } else if (skew) {
        cur.fail(
          'DY3003',
          `skew-symmetric matrices have a zero diagonal, so the entry (${r + 1},${c + 1}) may not be stored; expected row != column`,
          line,
        );
      }
    }
    k++;
  }
  return { stored: k, entries: out, ordered: (colMajor || rowMajor) && (general || lower || upper) };
}

function readArray(cur: ByteCursor, header: Header, size: Size): MtxArray {
  const { rows, cols } = size;
  const { symmetry } = header;
  const field = header.field === 'integer' ? 'integer' : 'real';
  const integer = field === 'integer';
  const n = rows;
  const count = symmetry === 'general' ? rows * cols : symmetry === 'symmetric' ? (n * (n + 1)) / 2 : (n * (n - 1)) / 2;
  // The count as text from integers: past 2^53 the float product is rounded (2^31-1 squared printed ...600 for ...609).
  const r = BigInt(rows);
  const exact =
    symmetry === 'general' ? r * BigInt(cols) : symmetry === 'symmetric' ? (r * (r + 1n)) / 2n : (r * (r - 1n)) / 2n;
  const declared = `a ${rows} x ${cols} ${symmetry} array of ${exact} stored values`;

  // A value line takes at least 2 bytes: bounds the allocation as above.
  const vals = new Float64Array(Math.min(count, Math.floor((cur.end - cur.pos + 1) / 2) + 1));
  const read = scanValues(cur, integer, vals, count, () => `the size line (line ${size.line}) declares ${declared}`);
  if (read < count)
    cur.fail(
      'DY3005',
      `the size line (line ${size.line}) declares ${declared}, but the file ends after ${read}`,
      cur.lastLine(),
    );

  // The file is column-major; symmetric storage holds the lower triangle by columns.
  const data = new Float64Array(rows * cols);
  let k = 0;
  if (symmetry === 'general') {
    for (let j = 0; j < cols; j++) for (let i = 0; i < rows; i++) data[i * cols + j] = vals[k++]!;
  } else {
    const skew = symmetry === 'skew-symmetric';
    for (let j = 0; j < n; j++) {
      for (let i = skew ? j + 1 : j; i < n; i++) {
        const v = vals[k++]!;
        data[i * n + j] = v;
        data[j * n + i] = skew ? 0 - v : v;
      }
    }
  }
  return { kind: 'array', rows, cols, field, symmetry, data, file: cur.file, sizeLine: size.line };
}

/** The value lines of an array file, into `vals`; returns how many were read (at most `count`). */
function scanValues(
  cur: ByteCursor,
  integer: boolean,
  vals: Float64Array,
  count: number,
  declared: () => string,
): number {
  let k = 0;
  while (cur.nextContentLine(PERCENT, PERCENT)) {
    if (k === count) cur.fail('DY3005', `${declared()}, but this line holds value ${count + 1}`);
    const v = readValue(cur, integer);
    endLine(cur, 1, 'one value per line in an array matrix');
    vals[k++] = v;
  }
  return k;
}
