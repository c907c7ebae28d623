/**
 * Matrix Market writer and an atomic file write. Numbers are written in their
 * shortest round-trip form (String(x)); infinities as inf / -inf, NaN as nan,
 * negative zero as -0.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
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
    throw new RangeError(`${where()} has the value ${formatMtxNumber(x)}, which is not an integer; write it with the real field`);
  }
  return Number.isSafeInteger(x) ? formatMtxNumber(x) : BigInt(x).toString();
}

function commentLines(comment: string | undefined): string[] {
  if (comment === undefined) return [];
  return comment.split(/\r?\n/).map((line) => (line === '' ? '%' : `% ${line}`));
}

/** A `general` coordinate file of a sparse matrix, entries in the matrix's own order. */
export function formatMatrixMarketCoordinate(
  m: SparseMatrix,
  field: 'real' | 'integer' | 'pattern',
  comment?: string,
): string {
  const out = [`%%MatrixMarket matrix coordinate ${field} general`, ...commentLines(comment)];
  out.push(`${m.rows} ${m.cols} ${m.values.length}`);
  const entry = (r: number, c: number, v: number): void => {
    if (field === 'pattern') out.push(`${r + 1} ${c + 1}`);
    else if (field === 'real') out.push(`${r + 1} ${c + 1} ${formatMtxNumber(v)}`);
    else out.push(`${r + 1} ${c + 1} ${formatInteger(v, () => `entry (${r + 1},${c + 1})`)}`);
  };
  if (m.format === 'coo') {
    for (let k = 0; k < m.values.length; k++) entry(m.rowIdx[k]!, m.colIdx[k]!, m.values[k]!);
  } else if (m.format === 'csr') {
    for (let r = 0; r < m.rows; r++) {
      for (let k = m.rowPtr[r]!; k < m.rowPtr[r + 1]!; k++) entry(r, m.colIdx[k]!, m.values[k]!);
    }
  } else {
    for (let c = 0; c < m.cols; c++) {
      for (let k = m.colPtr[c]!; k < m.colPtr[c + 1]!; k++) entry(m.rowIdx[k]!, c, m.values[k]!);
    }
  }
  return `${out.join('\n')}\n`;
}

/**
 * A `general` array file of a dense tensor: rank 0 is 1 x 1, a vector of
 * length n is n x 1, a rank-2 [r, c] tensor is written column-major.
 */
export function formatMatrixMarketArray(t: DenseTensor, field: 'real' | 'integer', comment?: string): string {
  if (t.shape.length > 2) throw new RangeError(`a Matrix Market array holds rank 0, 1 or 2, got shape [${t.shape.join(', ')}]`);
  const rows = t.shape.length === 0 ? 1 : t.shape[0]!;
  const cols = t.shape.length === 2 ? t.shape[1]! : 1;
  const out = [`%%MatrixMarket matrix array ${field} general`, ...commentLines(comment), `${rows} ${cols}`];
  for (let j = 0; j < cols; j++) {
    for (let i = 0; i < rows; i++) {
      const v = t.data[i * cols + j]!;
      out.push(field === 'real' ? formatMtxNumber(v) : formatInteger(v, () => `element (${i + 1},${j + 1})`));
    }
  }
  return `${out.join('\n')}\n`;
}

/**
 * Writes `data` to `path` through a temporary file in the same directory and
 * a rename, so `path` is either left as it was or holds all of `data`; the
 * temporary file is removed on failure. InputError DY3017 when it fails.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  let created = false;
  try {
    fd = openSync(tmp, 'wx');
    created = true;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
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
    throw new InputError('DY3017', path, undefined, `cannot write the output file: ${fsReason(err)}`);
  }
}
