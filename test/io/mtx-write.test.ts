import {
  closeSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../runtime/errors.js';
import { cooToCsc, csrToCoo, toCsr, toDense } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { parseMatrixMarket } from '../../runtime/io/mtx-read.js';
import {
  formatMatrixMarketArray,
  formatMatrixMarketCoordinate,
  formatMtxNumber,
  writeFileAtomic,
  writeMatrixMarket,
} from '../../runtime/io/mtx-write.js';
import type { CsrMatrix, DenseTensor } from '../../runtime/tensor.js';
import { MATRIX_DIR } from './data.js';

// [[1.5 0 -inf] [0 0 2]]
const CSR: CsrMatrix = {
  format: 'csr',
  rows: 2,
  cols: 3,
  rowPtr: Int32Array.from([0, 2, 3]),
  colIdx: Int32Array.from([0, 2, 2]),
  values: Float64Array.from([1.5, -Infinity, 2]),
};

function sameBits(a: Float64Array, b: Float64Array): boolean {
  return a.length === b.length && a.every((v, k) => Object.is(v, b[k]));
}

describe('formatting', () => {
  it('numbers: shortest round trip, inf, -inf, nan, -0', () => {
    expect([0.1, 1e21, 1e-7, 5e-324, 123, -2.5, Infinity, -Infinity, NaN, -0, 0].map(formatMtxNumber)).toEqual([
      '0.1',
      '1e+21',
      '1e-7',
      '5e-324',
      '123',
      '-2.5',
      'inf',
      '-inf',
      'nan',
      '-0',
      '0',
    ]);
  });

  it('coordinate, real, with a comment', () => {
    expect(formatMatrixMarketCoordinate(CSR, 'real', 'made by a test\n\nsecond line')).toBe(
      '%%MatrixMarket matrix coordinate real general\n% made by a test\n%\n% second line\n2 3 3\n1 1 1.5\n1 3 -inf\n2 3 2\n',
    );
  });

  it('coordinate, pattern, from CSC and COO (entries in the matrix order)', () => {
    const coo = csrToCoo(CSR);
    expect(formatMatrixMarketCoordinate(coo, 'pattern')).toBe(
      '%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 1\n1 3\n2 3\n',
    );
    expect(formatMatrixMarketCoordinate(cooToCsc(coo), 'pattern')).toBe(
      '%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 1\n1 3\n2 3\n',
    );
  });

  it('coordinate, integer: no exponent form; non-integers are refused', () => {
    const big: CsrMatrix = { ...CSR, values: Float64Array.from([3, -1e21, 2 ** 60]) };
    expect(formatMatrixMarketCoordinate(big, 'integer')).toBe(
      '%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 1 3\n1 3 -1000000000000000000000\n2 3 1152921504606846976\n',
    );
    expect(() => formatMatrixMarketCoordinate(CSR, 'integer')).toThrow(
      /entry \(1,1\) has the value 1.5, which is not an integer/,
    );
  });

  it('array: rank 0, rank 1 (n x 1), rank 2 column-major', () => {
    expect(formatMatrixMarketArray({ format: 'dense', shape: [], data: Float64Array.of(7) }, 'integer')).toBe(
      '%%MatrixMarket matrix array integer general\n1 1\n7\n',
    );
    expect(formatMatrixMarketArray({ format: 'dense', shape: [3], data: Float64Array.of(1, 2, 3) }, 'real')).toBe(
      '%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n',
    );
    const m: DenseTensor = { format: 'dense', shape: [2, 3], data: Float64Array.of(1, 2, 3, 4, 5, 6) };
    expect(formatMatrixMarketArray(m, 'real', 'c')).toBe(
      '%%MatrixMarket matrix array real general\n% c\n2 3\n1\n4\n2\n5\n3\n6\n',
    );
    expect(() =>
      formatMatrixMarketArray({ format: 'dense', shape: [1, 1, 1], data: Float64Array.of(1) }, 'real'),
    ).toThrow(RangeError);
  });
});

describe('round trips', () => {
  it('coordinate: write -> read gives the same matrix, bit for bit', () => {
    const values = Float64Array.from([
      0.1,
      -0,
      5e-324,
      1.7976931348623157e308,
      -Infinity,
      1 / 3,
      0,
      123456789.12345679,
      -2.2250738585072014e-308,
    ]);
    const n = values.length;
    const csr: CsrMatrix = {
      format: 'csr',
      rows: n,
      cols: n + 1,
      rowPtr: Int32Array.from({ length: n + 1 }, (_, i) => i),
      colIdx: Int32Array.from({ length: n }, (_, i) => n - i),
      values,
    };
    const back = toCsr(parseMatrixMarket(formatMatrixMarketCoordinate(csr, 'real'), 'rt.mtx'));
    expect([back.rows, back.cols]).toEqual([n, n + 1]);
    expect(Array.from(back.rowPtr)).toEqual(Array.from(csr.rowPtr));
    expect(Array.from(back.colIdx)).toEqual(Array.from(csr.colIdx));
    expect(sameBits(back.values, values)).toBe(true);
  });

  it('array: write -> read gives the same matrix', () => {
    const t: DenseTensor = { format: 'dense', shape: [3, 2], data: Float64Array.of(1, -0, 0.1, Infinity, 3e-310, -7) };
    const back = toDense(parseMatrixMarket(formatMatrixMarketArray(t, 'real'), 'rt.mtx'));
    expect(back.shape).toEqual([3, 2]);
    expect(sameBits(back.data, t.data)).toBe(true);
  });

  it.each(['bayer10.mtx', 'Groebner_id2003_aug.mtx', 'bcsstk13.mtx', 'karate.mtx'])(
    'shared matrix %s survives write -> read',
    (file) => {
      const m = loadMatrix(join(MATRIX_DIR, file));
      const csr = toCsr(m);
      const field = m.field === 'pattern' ? 'pattern' : m.field === 'integer' ? 'integer' : 'real';
      const back = toCsr(parseMatrixMarket(formatMatrixMarketCoordinate(csr, field), 'rt.mtx'));
      expect(Array.from(back.rowPtr)).toEqual(Array.from(csr.rowPtr));
      expect(Array.from(back.colIdx)).toEqual(Array.from(csr.colIdx));
      expect(sameBits(back.values, csr.values)).toBe(true);
    },
  );
});

describe('writeFileAtomic', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dype-write-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the whole file and leaves no temporary file', () => {
    const path = join(dir, 'ok.mtx');
    writeFileAtomic(path, 'first');
    writeFileAtomic(path, Buffer.from('second'));
    expect(readFileSync(path, 'utf8')).toBe('second');
    expect(readdirSync(dir)).toEqual(['ok.mtx']);
  });

  it('missing directory: DY3017 and no file anywhere', () => {
    const path = join(dir, 'no-such-dir', 'out.mtx');
    let err: unknown;
    try {
      writeFileAtomic(path, 'data');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('DY3017');
    expect((err as InputError).file).toBe(path);
    expect((err as InputError).detail).toBe('cannot write the output file: no such file or directory');
    expect(readdirSync(dir)).toEqual(['ok.mtx']);
  });

  it('failure after the temporary file was written (target is a directory): the temporary file is removed', () => {
    const sub = join(dir, 'sub');
    const target = join(sub, 'taken');
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, 'keep'), 'x');
    expect(() => writeFileAtomic(target, 'a'.repeat(100_000))).toThrow(/error DY3017: cannot write the output file/);
    expect(readdirSync(sub)).toEqual(['taken']);
    expect(readdirSync(target)).toEqual(['keep']);
  });

  it('a symbolic link is followed: its target is replaced and the link kept; a link to nothing is DY3017', () => {
    const real = join(dir, 'links', 'real');
    mkdirSync(real, { recursive: true });
    const link = join(dir, 'links', 'out.json');
    symlinkSync(join(real, 'target.json'), link);
    writeFileSync(join(real, 'target.json'), 'old');
    writeFileAtomic(link, 'new');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(real, 'target.json'), 'utf8')).toBe('new');
    rmSync(join(real, 'target.json'));
    expect(() => writeFileAtomic(link, 'x')).toThrow(
      /out\.json: error DY3017: cannot write the output: the link leads nowhere/,
    );
    expect(readdirSync(real)).toEqual([]);
  });
});

describe('writeMatrixMarket streams outputs of any size', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dype-write-big-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('small tensors: the same text as the formatters, through writeFileAtomic', () => {
    const path = join(dir, 'small.mtx');
    const t: DenseTensor = { format: 'dense', shape: [2, 3], data: Float64Array.of(1, 2, 3, 4, 5, 6) };
    writeFileAtomic(path, (fd) => writeMatrixMarket(fd, t, 'real', 'c'));
    expect(readFileSync(path, 'utf8')).toBe(formatMatrixMarketArray(t, 'real', 'c'));
    writeFileAtomic(path, (fd) => writeMatrixMarket(fd, CSR, 'real'));
    expect(readFileSync(path, 'utf8')).toBe(formatMatrixMarketCoordinate(CSR, 'real'));
  });

  it("a non-integer in an integer file is the formatter's error, not a file-system one, and leaves no file", () => {
    const path = join(dir, 'int.mtx');
    expect(() => writeFileAtomic(path, (fd) => writeMatrixMarket(fd, CSR, 'integer'))).toThrow(RangeError);
    expect(readdirSync(dir).filter((f) => f.startsWith('.int.mtx') || f === 'int.mtx')).toEqual([]);
  });

  // A dense vector of 3.2e7 sixteen-digit integers, about 544 MB of text: more
  // than the largest string V8 holds (2^29 - 24 characters), so one string
  // could not be built. Long integers keep the count (and the time) down:
  // integers format fast, arbitrary doubles at about 0.5 us each.
  it('a dense vector of 544 MB of text', { timeout: 180_000 }, () => {
    const n = 32e6;
    const base = 1e15;
    const data = new Float64Array(n);
    for (let i = 0; i < n; i++) data[i] = base + (i % 1000);
    data[1] = -0.5;
    data[n - 1] = Infinity;
    const path = join(dir, 'big.mtx');
    writeFileAtomic(path, (fd) => writeMatrixMarket(fd, { format: 'dense', shape: [n], data }, 'real', 'big'));
    // Bytes: header lines, then each value's sixteen digits and a newline.
    let bytes = '%%MatrixMarket matrix array real general\n% big\n32000000 1\n'.length;
    bytes += n * 17 - 17 + '-0.5\n'.length - 17 + 'inf\n'.length;
    expect(statSync(path).size).toBe(bytes);
    expect(bytes).toBeGreaterThan(2 ** 29);
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(100);
      readSync(fd, head, 0, head.length, 0);
      expect(head.toString('latin1').split('\n').slice(0, 6)).toEqual([
        '%%MatrixMarket matrix array real general',
        '% big',
        '32000000 1',
        '1000000000000000',
        '-0.5',
        '1000000000000002',
      ]);
      const tail = Buffer.alloc(32);
      readSync(fd, tail, 0, tail.length, bytes - tail.length);
      expect(tail.toString('latin1').split('\n').slice(-3)).toEqual(['1000000000000998', 'inf', '']);
    } finally {
      closeSync(fd);
    }
  });
});
