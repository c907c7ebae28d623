/**
 * Matrix Market writer and an atomic file write. Numbers are written in their
 * shortest round-trip form (String(x)); infinities as inf / -inf, NaN as nan,
 * negative zero as -0. Files are written in chunks (writeMatrixMarket), never
 * built as one string: an output of 2e8 values is about 2 GB of text, more
 * than a V8 string holds.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, lstatSync, openSync, realpathSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { InputError } from '../errors.js';
import type { DenseTensor, SparseMatrix } from '../tensor.js';
import { fsReason } from './files.js';

/** The text of one number as the writer prints it. */
export function formatMtxNumber(x: number): string {
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x !== x) return 'nan';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  return String(x);
}

/**
 * An integer printed exactly and without exponent: String(1e21) would be
 * "1e+21" and String(2 ** 60) "1152921504606847000".
 */
function formatInteger(x: number, where: () => string): string {
  if (!Number.isInteger(x)) {
    throw new RangeError(
      `${where()} has the value ${formatMtxNumber(x)}, which is not an integer; write it with the real field`,
    );
  }
  if (Number.isSafeInteger(x)) return formatMtxNumber(x);
  // No i64 holds 2^63: a float64 of 2^63 is INT64_MAX (an empty min's identity, or a sum near it) rounded up.
  return x === 2 ** 63 ? '9223372036854775807' : BigInt(x).toString();
}

function commentLines(comment: string | undefined): string[] {
  if (comment === undefined) return [];
  return comment.split(/\r?\n/).map((line) => (line === '' ? '%' : `% ${line}`));
}

/** Values per chunk of text: a chunk is a few hundred kilobytes, whatever the tensor's size. */
const CHUNK_VALUES = 1 << 15;

/**
 * The text of a `general` coordinate file of a sparse matrix, entries in the
 * matrix's own order, in chunks of CHUNK_VALUES entries: the file is never
 * one string, so its size is bounded by the disk, not by V8's string length.
 */
export function* matrixMarketCoordinateChunks(
  m: SparseMatrix,
  field: 'real' | 'integer' | 'pattern',
  comment?: string,
): Generator<string> {
  yield [
    `%%MatrixMarket matrix coordinate ${field} general`,
    ...commentLines(comment),
    `${m.rows} ${m.cols} ${m.values.length}`,
    '',
  ].join('\n');
  const lines: string[] = [];
  const entry = (r: number, c: number, v: number): void => {
    if (field === 'pattern') lines.push(`${r + 1} ${c + 1}`);
    else if (field === 'real') lines.push(`${r + 1} ${c + 1} ${formatMtxNumber(v)}`);
    else lines.push(`${r + 1} ${c + 1} ${formatInteger(v, () => `entry (${r + 1},${c + 1})`)}`);
  };
  const flush = (): string => {
    const text = `${lines.join('\n')}\n`;
    lines.length = 0;
    return text;
  };
  if (m.format === 'coo') {
    for (let k = 0; k < m.values.length; k++) {
      entry(m.rowIdx[k]!, m.colIdx[k]!, m.values[k]!);
      if (lines.length >= CHUNK_VALUES) yield flush();
    }
  } else if (m.format === 'csr') {
    for (let r = 0; r < m.rows; r++) {
      for (let k = m.rowPtr[r]!; k < m.rowPtr[r + 1]!; k++) entry(r, m.colIdx[k]!, m.values[k]!);
      if (lines.length >= CHUNK_VALUES) yield flush();
    }
  } else {
    for (let c = 0; c < m.cols; c++) {
      for (let k = m.colPtr[c]!; k < m.colPtr[c + 1]!; k++) entry(m.rowIdx[k]!, c, m.values[k]!);
      if (lines.length >= CHUNK_VALUES) yield flush();
    }
  }
  if (lines.length > 0) yield flush();
}

/**
 * The text of a `general` array file of a dense tensor, in chunks of
 * CHUNK_VALUES values: rank 0 is 1 x 1, a vector of length n is n x 1, a
 * rank-2 [r, c] tensor is written column-major.
 */
export function* matrixMarketArrayChunks(
  t: DenseTensor,
  field: 'real' | 'integer',
  comment?: string,
): Generator<string> {
  if (t.shape.length > 2)
    throw new RangeError(`a Matrix Market array holds rank 0, 1 or 2, got shape [${t.shape.join(', ')}]`);
  const rows = t.shape.length === 0 ? 1 : t.shape[0]!;
  const cols = t.shape.length === 2 ? t.shape[1]! : 1;
  yield [`%%MatrixMarket matrix array ${field} general`, ...commentLines(comment), `${rows} ${cols}`, ''].join('\n');
  const data = t.data;
  const lines: string[] = [];
  for (let j = 0; j < cols; j++) {
    for (let i0 = 0; i0 < rows; i0 += CHUNK_VALUES) {
      const i1 = Math.min(rows, i0 + CHUNK_VALUES);
      lines.length = i1 - i0;
      for (let i = i0; i < i1; i++) {
        const v = data[i * cols + j]!;
        lines[i - i0] = field === 'real' ? formatMtxNumber(v) : formatInteger(v, () => `element (${i + 1},${j + 1})`);
      }
      yield `${lines.join('\n')}\n`;
    }
  }
}

/** A `general` coordinate file of a sparse matrix as one string (small matrices; writeMatrixMarket streams). */
export function formatMatrixMarketCoordinate(
  m: SparseMatrix,
  field: 'real' | 'integer' | 'pattern',
  comment?: string,
): string {
  return [...matrixMarketCoordinateChunks(m, field, comment)].join('');
}

/** A `general` array file of a dense tensor as one string (small tensors; writeMatrixMarket streams). */
export function formatMatrixMarketArray(t: DenseTensor, field: 'real' | 'integer', comment?: string): string {
  return [...matrixMarketArrayChunks(t, field, comment)].join('');
}

/** Writes all of `text` at the file descriptor's position. */
export function writeAllSync(fd: number, text: string | Uint8Array): void {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

/**
 * Writes a tensor as Matrix Market text to an open file descriptor, chunk
 * by chunk (`array` for dense tensors, `coordinate` for sparse ones): memory
 * stays a few hundred kilobytes beyond the tensor, for any size.
 */
export function writeMatrixMarket(
  fd: number,
  t: DenseTensor | SparseMatrix,
  field: 'real' | 'integer',
  comment?: string,
): void {
  const chunks =
    t.format === 'dense' ? matrixMarketArrayChunks(t, field, comment) : matrixMarketCoordinateChunks(t, field, comment);
  for (const c of chunks) writeAllSync(fd, c);
}

/**
 * Where writing to `path` lands: a symbolic link's target (the rename would
 * otherwise replace the link itself with a file), else `path`. A link whose
 * target is missing is DY3017.
 */
function followLink(path: string): string {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st?.isSymbolicLink()) return path;
  try {
    return realpathSync(path);
  } catch (e) {
    throw new InputError('DY3017', path, undefined, `cannot write the output: the link leads nowhere (${fsReason(e)})`);
  }
}

/**
 * Writes `data` to `path` (or lets `data(fd)` write it) through a temporary
 * file in the same directory and a rename, so `path` is either left as it
 * was or holds all of `data`; the temporary file is removed on failure.
 * InputError DY3017 when the file system refuses; an error `data(fd)` throws
 * for another reason is passed on as it is.
 */
export function writeFileAtomic(given: string, data: string | Uint8Array | ((fd: number) => void)): void {
  const path = followLink(given);
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  let created = false;
  try {
    fd = openSync(tmp, 'wx');
    created = true;
    if (typeof data === 'function') data(fd);
    else writeAllSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (err) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // already failing; the original error is the one to report
      }
    }
    if (created) {
      try {
        unlinkSync(tmp);
      } catch {
        // nothing more can be done about it
      }
    }
    if (!isFsError(err)) throw err;
    throw new InputError('DY3017', given, undefined, `cannot write the output file: ${fsReason(err)}`);
  }
}

/** An error of a file-system call (it carries an errno code such as ENOSPC). */
export function isFsError(err: unknown): boolean {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string';
}
