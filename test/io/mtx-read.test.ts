import { describe, expect, it } from 'vitest';
import { parseMatrixMarket, type MtxArray, type MtxCoordinate } from '../../runtime/io/mtx-read.js';

function coord(text: string | Uint8Array): MtxCoordinate {
  const m = parseMatrixMarket(text, 'test.mtx');
  if (m.kind !== 'coordinate') throw new Error('expected coordinate data');
  return m;
}

function array(text: string): MtxArray {
  const m = parseMatrixMarket(text, 'test.mtx');
  if (m.kind !== 'array') throw new Error('expected array data');
  return m;
}

/** Entries as [row, col, value, line] tuples in the order the reader gives them. */
function entries(m: MtxCoordinate): [number, number, number, number][] {
  return Array.from(m.values, (v, k) => [m.rowIdx[k]!, m.colIdx[k]!, v, m.lines[k]!]);
}

describe('Matrix Market coordinate files', () => {
  it('real general: 1-based indices become 0-based, lines recorded', () => {
    const m = coord('%%MatrixMarket matrix coordinate real general\n% a comment\n3 4 3\n1 1 1.5\n3 4 -2e3\n2 1 0.25\n');
    expect(m).toMatchObject({
      kind: 'coordinate',
      rows: 3,
      cols: 4,
      field: 'real',
      symmetry: 'general',
      file: 'test.mtx',
    });
    expect(entries(m)).toEqual([
      [0, 0, 1.5, 4],
      [2, 3, -2000, 5],
      [1, 0, 0.25, 6],
    ]);
  });

  it('integer general', () => {
    const m = coord('%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 7\n2 1 -3\n');
    expect(m.field).toBe('integer');
    expect(entries(m)).toEqual([
      [0, 1, 7, 3],
      [1, 0, -3, 4],
    ]);
  });

  it('pattern entries read as 1', () => {
    const m = coord('%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 2\n');
    expect(m.field).toBe('pattern');
    expect(entries(m)).toEqual([
      [0, 2, 1, 3],
      [1, 1, 1, 4],
    ]);
  });

  it('"double" is read as the real field', () => {
    expect(coord('%%MatrixMarket matrix coordinate double general\n1 1 1\n1 1 2.5\n').field).toBe('real');
  });

  it('symmetric: off-diagonal entries are mirrored, the diagonal is not', () => {
    const m = coord('%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n2 1 5\n3 2 6\n');
    expect(m.symmetry).toBe('symmetric');
    expect(entries(m)).toEqual([
      [0, 0, 4, 3],
      [1, 0, 5, 4],
      [0, 1, 5, 4],
      [2, 1, 6, 5],
      [1, 2, 6, 5],
    ]);
  });

  it('symmetric pattern', () => {
    const m = coord('%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n');
    expect(entries(m)).toEqual([
      [1, 0, 1, 3],
      [0, 1, 1, 3],
    ]);
  });

  it('skew-symmetric: mirror entries are negated', () => {
    const m = coord('%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 5\n3 1 -1.5\n');
    expect(entries(m)).toEqual([
      [1, 0, 5, 3],
      [0, 1, -5, 3],
      [2, 0, -1.5, 4],
      [0, 2, 1.5, 4],
    ]);
  });

  it('upper-triangle storage of a symmetric matrix is accepted too', () => {
    const m = coord('%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n1 2 9\n');
    expect(entries(m)).toEqual([
      [0, 1, 9, 3],
      [1, 0, 9, 3],
    ]);
  });

  it('explicit zeros are kept as entries, with their sign', () => {
    const m = coord('%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 0\n2 2 -0.0\n1 2 0e5\n');
    expect(m.values.length).toBe(3);
    expect(Object.is(m.values[0], 0)).toBe(true);
    expect(Object.is(m.values[1], -0)).toBe(true);
    expect(Object.is(m.values[2], 0)).toBe(true);
  });

  it('inf and -inf are allowed values', () => {
    const m = coord('%%MatrixMarket matrix coordinate real general\n1 3 3\n1 1 inf\n1 2 -Infinity\n1 3 +INF\n');
    expect(Array.from(m.values)).toEqual([Infinity, -Infinity, Infinity]);
  });

  it('header words are case-insensitive; blank lines, comments, tabs, CRLF and a final line without newline are fine', () => {
    const text =
      '%%matrixmarket MATRIX Coordinate REAL General\r\n%%GraphBLAS type float\r\n\r\n% comment\r\n  2\t2   2  \r\n\r\n1\t1\t.5\r\n% between\r\n   2 2 5.\r\n\r\n';
    const m = coord(text);
    expect(entries(m)).toEqual([
      [0, 0, 0.5, 7],
      [1, 1, 5, 9],
    ]);
  });

  it('accepts a Buffer or a Uint8Array, and skips a UTF-8 byte order mark', () => {
    const text = '%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 3\n';
    expect(entries(coord(Buffer.from(text)))).toEqual([[0, 0, 3, 3]]);
    const bytes = new TextEncoder().encode(`\uFEFF${text}`);
    const m = parseMatrixMarket(bytes, 'bom.mtx');
    expect(m.kind === 'coordinate' && Array.from(m.values)).toEqual([3]);
  });

  it('an empty matrix', () => {
    const m = coord('%%MatrixMarket matrix coordinate real general\n0 0 0\n');
    expect([m.rows, m.cols, m.values.length]).toEqual([0, 0, 0]);
  });

  it('signs and unusual blanks (the general path) read the same as plain entries (the fast path)', () => {
    const header = '%%MatrixMarket matrix coordinate real general\n3 3 3\n';
    const plain = coord(`${header}1 2 1.5\n2 3 -2\n3 1 4\n`);
    const odd = coord(`${header}+1\t+2\v1.5\f\n 2\r3 -2 \r\n3  1\t4`);
    expect(entries(odd)).toEqual(entries(plain));
    expect(entries(plain).map((e) => e[3])).toEqual([3, 4, 5]);
  });

  it('entries need not be sorted', () => {
    const m = coord('%%MatrixMarket matrix coordinate real general\n3 3 3\n3 3 1\n1 2 2\n2 1 3\n');
    expect(entries(m).map((e) => e[2])).toEqual([1, 2, 3]);
  });
});

describe('Matrix Market array files', () => {
  it('general arrays are column-major in the file, row-major in memory', () => {
    const m = array('%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n');
    expect(m).toMatchObject({ kind: 'array', rows: 2, cols: 3, field: 'real', symmetry: 'general' });
    expect(Array.from(m.data)).toEqual([1, 3, 5, 2, 4, 6]);
  });

  it('integer arrays', () => {
    const m = array('%%MatrixMarket matrix array integer general\n1 2\n-4\n7\n');
    expect(m.field).toBe('integer');
    expect(Array.from(m.data)).toEqual([-4, 7]);
  });

  it('symmetric arrays store the lower triangle by columns', () => {
    // [[1 2 3] [2 4 5] [3 5 6]]
    const m = array('%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n');
    expect(Array.from(m.data)).toEqual([1, 2, 3, 2, 4, 5, 3, 5, 6]);
  });

  it('skew-symmetric arrays store the strict lower triangle by columns', () => {
    // [[0 -1 -2] [1 0 -3] [2 3 0]]
    const m = array('%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n');
    expect(Array.from(m.data)).toEqual([0, -1, -2, 1, 0, -3, 2, 3, 0]);
  });

  it('array values with comments and blank lines between them', () => {
    const m = array('%%MatrixMarket matrix array real general\n% c\n2 1\n\n1.25\n% c\n-inf\n');
    expect(Array.from(m.data)).toEqual([1.25, -Infinity]);
  });
});
