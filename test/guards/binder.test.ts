/**
 * The runtime's binding of a call's inputs across calls (runtime/engine/inputs.ts InputBinder): the same tensors
 * again reuse the previous binding, and every change bindInputs would see (a replaced or resized array, a reshaped
 * tensor, another pattern, a changed scalar, an extra or missing input) binds afresh, with bindInputs' errors.
 */
import { describe, expect, it } from 'vitest';
import { InputBinder } from '../../runtime/engine/inputs.js';
import type { RuntimeInputs, RuntimeParam } from '../../runtime/engine/types.js';
import type { CsrMatrix, DenseTensor } from '../../runtime/tensor.js';

const PARAMS: RuntimeParam[] = [
  { name: 'A', kind: 'sparse', shape: ['n', 'n'] },
  { name: 'X', kind: 'dense', shape: ['n', 'f'] },
  { name: 'alpha', kind: 'scalar', shape: [] },
];

/** A 4 x 4 CSR matrix with rows of 1, 2, 0 and 1 entries. */
const csr = (): CsrMatrix => ({
  format: 'csr',
  rows: 4,
  cols: 4,
  rowPtr: Int32Array.from([0, 1, 3, 3, 4]),
  colIdx: Int32Array.from([0, 1, 2, 3]),
  values: Float64Array.from([1, 2, 3, 4]),
});
const dense = (rows: number, cols: number): DenseTensor => ({
  format: 'dense',
  shape: [rows, cols],
  data: new Float64Array(rows * cols),
});

describe('InputBinder', () => {
  it('reuses the binding when the same tensors come back, in a new inputs object or with new values', () => {
    const binder = new InputBinder('k', PARAMS);
    const A = csr();
    const X = dense(4, 3);
    const first = binder.bind({ A, X, alpha: 0.5 });
    expect(first.binding.dims.get('f')).toBe(3);
    expect(binder.bind({ A, X, alpha: 0.5 })).toBe(first);
    // New values in the same arrays: the pattern and shapes are the same.
    X.data[0] = 7;
    A.values[1] = -1;
    expect(binder.bind({ alpha: 0.5, X, A })).toBe(first);
  });

  it('binds afresh on any change bindInputs would see', () => {
    const binder = new InputBinder('k', PARAMS);
    const A = csr();
    const X = dense(4, 3);
    const first = binder.bind({ A, X, alpha: 0.5 });
    // Another scalar.
    const other = binder.bind({ A, X, alpha: 2 });
    expect(other).not.toBe(first);
    expect(other.scalars.get('alpha')).toBe(2);
    // The same pattern in new arrays: a new features record, an equal binding.
    const copy = { ...A, rowPtr: A.rowPtr.slice(), colIdx: A.colIdx.slice() };
    const again = binder.bind({ A: copy, X, alpha: 2 });
    expect(again).not.toBe(other);
    expect(again.binding.sparse.get('A')!.nnz).toBe(4);
    // Another pattern in place (new row pointers, the same values array): a new features record.
    const before = again.binding.sparse.get('A');
    copy.rowPtr = Int32Array.from([0, 2, 2, 3, 4]);
    const moved = binder.bind({ A: copy, X, alpha: 2 });
    expect(moved).not.toBe(again);
    expect(moved.binding.sparse.get('A')).not.toBe(before);
    expect(moved.binding.sparse.get('A')!.emptyRowFraction).toBe(0.25);
    // A tensor reshaped in place: the dims follow it.
    X.shape = [4, 2];
    X.data = new Float64Array(8);
    expect(binder.bind({ A: copy, X, alpha: 2 }).binding.dims.get('f')).toBe(2);
  });

  it('a scalar changed from 0 to -0 binds afresh (x / s flips the sign of an infinity)', () => {
    const binder = new InputBinder('k', PARAMS);
    const A = csr();
    const X = dense(4, 3);
    const zero = binder.bind({ A, X, alpha: 0 });
    const negative = binder.bind({ A, X, alpha: -0 });
    expect(negative).not.toBe(zero);
    expect(Object.is(negative.scalars.get('alpha'), -0)).toBe(true);
  });

  it('a CSC or COO tensor object given other index arrays or sizes is another pattern', () => {
    const binder = new InputBinder('k', PARAMS);
    const X = dense(4, 3);
    const coo = {
      format: 'coo' as const,
      rows: 4,
      cols: 4,
      rowIdx: Int32Array.from([0, 1, 1, 3]),
      colIdx: Int32Array.from([0, 1, 2, 3]),
      values: Float64Array.from([1, 2, 3, 4]),
    };
    const first = binder.bind({ A: coo, X, alpha: 1 }).binding.sparse.get('A')!;
    expect(first.emptyRowFraction).toBe(0.25);
    // The same object, reassigned: rows in other places, then a bigger matrix with the same entry count.
    Object.assign(coo, { rowIdx: Int32Array.from([0, 0, 0, 0]), values: coo.values.slice() });
    expect(binder.bind({ A: coo, X, alpha: 1 }).binding.sparse.get('A')!.emptyRowFraction).toBe(0.75);
    Object.assign(coo, { rows: 8, cols: 8, values: coo.values.slice() });
    const grown = binder.bind({ A: coo, X: dense(8, 3), alpha: 1 }).binding;
    expect([grown.sparse.get('A')!.rows, grown.dims.get('n')]).toEqual([8, 8]);
    const csc = {
      format: 'csc' as const,
      rows: 4,
      cols: 4,
      colPtr: Int32Array.from([0, 1, 2, 3, 4]),
      rowIdx: Int32Array.from([0, 1, 2, 3]),
      values: Float64Array.from([1, 2, 3, 4]),
    };
    expect(binder.bind({ A: csc, X, alpha: 1 }).binding.sparse.get('A')!.emptyRowFraction).toBe(0);
    Object.assign(csc, { rowIdx: Int32Array.from([0, 0, 1, 1]), values: csc.values.slice() });
    expect(binder.bind({ A: csc, X, alpha: 1 }).binding.sparse.get('A')!.emptyRowFraction).toBe(0.5);
  });

  it('refuses what bindInputs refuses, after a binding was kept', () => {
    const binder = new InputBinder('k', PARAMS);
    const A = csr();
    const X = dense(4, 3);
    binder.bind({ A, X, alpha: 1 });
    // Data resized in place without its shape: DY3051, not the kept binding.
    const resized: DenseTensor = { format: 'dense', shape: [4, 3], data: X.data };
    binder.bind({ A, X: resized, alpha: 1 });
    resized.data = new Float64Array(5);
    expect(() => binder.bind({ A, X: resized, alpha: 1 })).toThrow(/DY3051.*holds 12 elements, but data has 5/);
    // A shape that no longer fits n, changed in place.
    const Y = dense(4, 3);
    binder.bind({ A, X: Y, alpha: 1 });
    Y.shape = [3, 4];
    Y.data = new Float64Array(12);
    expect(() => binder.bind({ A, X: Y, alpha: 1 })).toThrow(/DY3042.*dimension 1 is n = 4/);
    // Entries added to the matrix in place (its values and the last pointer): the entry count is checked again.
    const B = csr();
    binder.bind({ A: B, X, alpha: 1 });
    B.values = new Float64Array(5);
    expect(() => binder.bind({ A: B, X, alpha: 1 })).toThrow(/DY3051/);
    // An extra input, a missing one, a NaN scalar.
    binder.bind({ A, X, alpha: 1 });
    expect(() => binder.bind({ A, X, alpha: 1, Z: 3 } as RuntimeInputs)).toThrow(/DY3014/);
    binder.bind({ A, X, alpha: 1 });
    expect(() => binder.bind({ A, X } as RuntimeInputs)).toThrow(/DY3013/);
    binder.bind({ A, X, alpha: 1 });
    expect(() => binder.bind({ A, X, alpha: NaN })).toThrow(/DY3042.*NaN/);
    expect(() => binder.bind({ A, X, alpha: NaN })).toThrow(/DY3042.*NaN/);
  });
});
