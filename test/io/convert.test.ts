import { describe, expect, it } from 'vitest';
import { InputError } from '../../runtime/errors.js';
import {
  anySparseToCoo,
  anySparseToCsc,
  anySparseToCsr,
  cooToCsc,
  cooToCsr,
  cscToCoo,
  cscToCsr,
  csrToCoo,
  csrToCsc,
  denseToCsr,
  sparseToDense,
  toCoo,
  toCsc,
  toCsr,
  toDense,
} from '../../runtime/io/convert.js';
import type { MtxCoordinate } from '../../runtime/io/mtx-data.js';
import { parseMatrixMarket } from '../../runtime/io/mtx-read.js';
import type { CooMatrix } from '../../runtime/tensor.js';

function coordinate(rows: number, cols: number, entries: [number, number, number][], file?: string): MtxCoordinate {
  return {
    kind: 'coordinate',
    rows,
    cols,
    field: 'real',
    symmetry: 'general',
    rowIdx: Int32Array.from(entries, (e) => e[0]),
    colIdx: Int32Array.from(entries, (e) => e[1]),
    values: Float64Array.from(entries, (e) => e[2]),
    lines: Int32Array.from(entries, (_, k) => k + 3),
    ...(file !== undefined ? { file } : {}),
  };
}

// [[0 2 0 0] [1 0 0 3] [0 0 0 0]] given out of order
const M = coordinate(3, 4, [
  [1, 3, 3],
  [0, 1, 2],
  [1, 0, 1],
]);
const DENSE = [0, 2, 0, 0, 1, 0, 0, 3, 0, 0, 0, 0];

describe('from reader output', () => {
  it('toCsr', () => {
    const csr = toCsr(M);
    expect(csr).toMatchObject({ format: 'csr', rows: 3, cols: 4 });
    expect(Array.from(csr.rowPtr)).toEqual([0, 1, 3, 3]);
    expect(Array.from(csr.colIdx)).toEqual([1, 0, 3]);
    expect(Array.from(csr.values)).toEqual([2, 1, 3]);
  });

  it('toCsc', () => {
    const csc = toCsc(M);
    expect(Array.from(csc.colPtr)).toEqual([0, 1, 2, 2, 3]);
    expect(Array.from(csc.rowIdx)).toEqual([1, 0, 1]);
    expect(Array.from(csc.values)).toEqual([1, 2, 3]);
  });

  it('toCoo sorts by row then column', () => {
    const coo = toCoo(M);
    expect(Array.from(coo.rowIdx)).toEqual([0, 1, 1]);
    expect(Array.from(coo.colIdx)).toEqual([1, 0, 3]);
    expect(Array.from(coo.values)).toEqual([2, 1, 3]);
  });

  it('toDense from coordinate and array data', () => {
    expect(toDense(M)).toEqual({ format: 'dense', shape: [3, 4], data: Float64Array.from(DENSE) });
    const a = parseMatrixMarket('%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n', 'a.mtx');
    expect(Array.from(toDense(a).data)).toEqual([1, 3, 2, 4]);
  });

  it('array data to CSR keeps every position', () => {
    const a = parseMatrixMarket('%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n', 'a.mtx');
    const csr = toCsr(a);
    expect(Array.from(csr.rowPtr)).toEqual([0, 2, 4]);
    expect(Array.from(csr.values)).toEqual([1, 3, 0, 4]);
  });

  it('explicit zeros survive conversion', () => {
    const z = coordinate(2, 2, [
      [1, 1, 0],
      [0, 0, 5],
    ]);
    expect(Array.from(toCsr(z).values)).toEqual([5, 0]);
  });

  it('duplicates -> DY3009 naming both source lines and the file', () => {
    const dup = coordinate(
      3,
      3,
      [
        [2, 2, 1],
        [0, 1, 1],
        [2, 2, 7],
      ],
      'dup.mtx',
    );
    for (const convert of [toCsr, toCsc, toCoo, toDense]) {
      let err: unknown;
      try {
        convert(dup);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      const e = err as InputError;
      expect([e.code, e.file, e.line]).toEqual(['DY3009', 'dup.mtx', 5]);
      expect(e.detail).toBe(
        'duplicate entry (3,3): given by line 3 and again by line 5; each position may appear once',
      );
    }
    expect(() =>
      toCsr(
        coordinate(2, 2, [
          [0, 0, 1],
          [0, 0, 1],
        ]),
        'given.mtx',
      ),
    ).toThrow(/^given\.mtx:4: error DY3009/);
  });

  it('results do not share arrays with the input', () => {
    const a = parseMatrixMarket('%%MatrixMarket matrix array real general\n1 1\n1\n', 'a.mtx');
    const d = toDense(a);
    d.data[0] = 9;
    expect(a.kind === 'array' && a.data[0]).toBe(1);
  });
});

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random COO with distinct positions in random order. */
function randomCoo(r: () => number): CooMatrix {
  const rows = 1 + Math.floor(r() * 12);
  const cols = 1 + Math.floor(r() * 12);
  const positions = new Map<number, number>();
  const want = Math.floor(r() * rows * cols * 0.5);
  while (positions.size < want) positions.set(Math.floor(r() * rows * cols), Math.round(r() * 200 - 100) / 4 + 0); // + 0: no -0
  const keys = [...positions.keys()];
  return {
    format: 'coo',
    rows,
    cols,
    rowIdx: Int32Array.from(keys, (k) => Math.floor(k / cols)),
    colIdx: Int32Array.from(keys, (k) => k % cols),
    values: Float64Array.from(keys, (k) => positions.get(k)!),
  };
}

describe('between tensor formats', () => {
  it('every route gives the same dense matrix and canonical orders', () => {
    const r = rng(2024);
    for (let i = 0; i < 300; i++) {
      const coo = randomCoo(r);
      const dense = sparseToDense(coo);
      const csr = cooToCsr(coo);
      const csc = cooToCsc(coo);
      expect(sparseToDense(csr)).toEqual(dense);
      expect(sparseToDense(csc)).toEqual(dense);
      expect(csrToCsc(csr)).toEqual(csc);
      expect(cscToCsr(csc)).toEqual(csr);
      expect(anySparseToCsr(csc)).toEqual(csr);
      expect(anySparseToCsc(csr)).toEqual(csc);
      expect(anySparseToCsr(csr)).toEqual(csr);
      expect(anySparseToCsc(csc)).toEqual(csc);
      const sorted = csrToCoo(csr);
      expect(cscToCoo(csc)).toEqual(sorted);
      expect(anySparseToCoo(coo)).toEqual(sorted);
      expect(sparseToDense(sorted)).toEqual(dense);
      // sorted by row then column
      for (let k = 1; k < sorted.values.length; k++) {
        const prev = sorted.rowIdx[k - 1]! * coo.cols + sorted.colIdx[k - 1]!;
        expect(sorted.rowIdx[k]! * coo.cols + sorted.colIdx[k]!).toBeGreaterThan(prev);
      }
      // CSR columns ascend within each row
      for (let row = 0; row < csr.rows; row++) {
        for (let k = csr.rowPtr[row]! + 1; k < csr.rowPtr[row + 1]!; k++)
          expect(csr.colIdx[k]!).toBeGreaterThan(csr.colIdx[k - 1]!);
      }
      // dense -> CSR drops zeros unless asked to keep them
      const back = denseToCsr(dense);
      expect(sparseToDense(back)).toEqual(dense);
      expect(back.values.every((v) => v !== 0)).toBe(true);
      expect(denseToCsr(dense, true).values.length).toBe(coo.rows * coo.cols);
    }
  });

  it('denseToCsr needs rank 2', () => {
    expect(() => denseToCsr({ format: 'dense', shape: [3], data: new Float64Array(3) })).toThrow(RangeError);
  });
});
