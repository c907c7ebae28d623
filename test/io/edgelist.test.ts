import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../runtime/errors.js';
import { parseEdgeList } from '../../runtime/io/edgelist.js';
import { isEdgeListPath, loadMatrix } from '../../runtime/io/load.js';
import { MATRIX_DIR } from './data.js';

function failure(run: () => unknown): InputError {
  try {
    run();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
}

describe('edge lists', () => {
  it('ids of both columns are numbered in ascending order; row = first column; sorted output', () => {
    const m = parseEdgeList('# comment\n% comment too\n\n30 7\n7\t1000000\n  1000000 30  \n30 30\n', 'g.txt');
    // ids 7, 30, 1000000 -> 0, 1, 2
    expect(m).toMatchObject({
      kind: 'coordinate',
      rows: 3,
      cols: 3,
      field: 'pattern',
      symmetry: 'general',
      duplicatesDropped: 0,
      file: 'g.txt',
    });
    expect(Array.from(m.rowIdx)).toEqual([0, 1, 1, 2]);
    expect(Array.from(m.colIdx)).toEqual([2, 0, 1, 1]);
    expect(Array.from(m.values)).toEqual([1, 1, 1, 1]);
    expect(Array.from(m.lines)).toEqual([5, 4, 7, 6]);
  });

  it('sparse huge ids take the sorting path', () => {
    const m = parseEdgeList('9007199254740991 0\n5000000000 9007199254740991\n', 'big.txt');
    expect(m.rows).toBe(3);
    expect(Array.from(m.rowIdx)).toEqual([1, 2]);
    expect(Array.from(m.colIdx)).toEqual([2, 0]);
  });

  it('repeated edges collapse to one, keeping the first line', () => {
    const m = parseEdgeList('1 2\n2 1\n1 2\n1 2\n', 'dup.txt');
    expect(m.duplicatesDropped).toBe(2);
    expect(Array.from(m.rowIdx)).toEqual([0, 1]);
    expect(Array.from(m.colIdx)).toEqual([1, 0]);
    expect(Array.from(m.lines)).toEqual([1, 2]);
  });

  it('an empty list is a 0 x 0 matrix; CRLF and a missing final newline are fine', () => {
    expect(parseEdgeList('# nothing\n', 'e.txt')).toMatchObject({ rows: 0, cols: 0, duplicatesDropped: 0 });
    expect(parseEdgeList('0 1\r\n1 2', 'crlf.txt').values.length).toBe(2);
  });

  it.each([
    ['0 1\n2\n', 2, 'expected two vertex ids on the line ("from to"), found one'],
    ['0 1 5\n', 1, 'expected two vertex ids on the line ("from to"), found 3 tokens'],
    ['0 1\n-3 1\n', 2, 'expected a non-negative integer vertex id in the first column, found "-3"'],
    ['0 1.5\n', 1, 'expected a non-negative integer vertex id in the second column, found "1.5"'],
    ['a b\n', 1, 'expected a non-negative integer vertex id in the first column, found "a"'],
    ['0 99999999999999999999\n', 1, /found "99999999999999999999" \(ids above 9007199254740991 are not supported\)/],
    // Regression: lines ended by CR alone read as one line of many tokens ('found 4 tokens').
    ['0 1\r1 0\r', 1, 'the lines end in a carriage return alone; expected newlines (LF, or CRLF)'],
  ])('malformed line %j -> DY3012', (text, line, message) => {
    const e = failure(() => parseEdgeList(text, 'bad.cites'));
    expect([e.code, e.file, e.line]).toEqual(['DY3012', 'bad.cites', line]);
    expect(e.detail).toMatch(message);
  });

  it('cora.cites: 2708 x 2708, 5429 entries, 1143 empty rows (MANIFEST)', () => {
    const m = loadMatrix(join(MATRIX_DIR, 'cora.cites'));
    if (m.kind !== 'coordinate') throw new Error('expected coordinate data');
    expect([m.rows, m.cols, m.values.length, m.duplicatesDropped]).toEqual([2708, 2708, 5429, 0]);
    const hasEntry = new Uint8Array(m.rows);
    for (const r of m.rowIdx) hasEntry[r] = 1;
    expect(m.rows - hasEntry.reduce((a, b) => a + b, 0)).toBe(1143);
  });

  it('facebook_combined.txt: 4039 x 4039, 88234 entries (MANIFEST)', () => {
    const m = loadMatrix(join(MATRIX_DIR, 'facebook_combined.txt'));
    expect(m.kind === 'coordinate' && [m.rows, m.cols, m.values.length]).toEqual([4039, 4039, 88234]);
  });
});

describe('loadMatrix', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dype-load-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('chooses the reader by extension', () => {
    expect(isEdgeListPath('a/b.cites')).toBe(true);
    expect(isEdgeListPath('a/b.TXT')).toBe(true);
    expect(isEdgeListPath('a/b.mtx')).toBe(false);
    expect(isEdgeListPath('a/b')).toBe(false);
    const edges = join(dir, 'g.txt');
    writeFileSync(edges, '5 6\n');
    expect(loadMatrix(edges)).toMatchObject({ kind: 'coordinate', rows: 2, field: 'pattern' });
    const mtx = join(dir, 'm.data');
    writeFileSync(mtx, '%%MatrixMarket matrix array real general\n1 1\n2\n');
    expect(loadMatrix(mtx)).toMatchObject({ kind: 'array', rows: 1, cols: 1 });
  });

  it('unreadable edge list -> DY3010', () => {
    const e = failure(() => loadMatrix(join(dir, 'missing.cites')));
    expect([e.code, e.line]).toEqual(['DY3010', undefined]);
  });
});
