/**
 * The generated FPGA host writes results with the digits their dtype holds
 * (issue 16 item 8): an f64 program's C-simulation output reads back to the
 * very doubles the kernel computed (it was written with %.9g, off by about
 * 1e-9 relative), an f32 one to the very floats, with at most 9 significant
 * digits. The kernel is one multiplication per row (a diagonal times a
 * vector), so the expected values are exact in JavaScript too: f64 the
 * product of the doubles, f32 the float rounding of the product of floats.
 * Skipped without g++.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMatrixMarket } from '../../runtime/io/mtx-read.js';
import { toDense } from '../../runtime/io/convert.js';
import { formatMatrixMarketArray, formatMatrixMarketCoordinate } from '../../runtime/io/mtx-write.js';
import { runCliAsync } from '../helpers/cli.js';
import { HAVE_GXX } from './example-data.js';

const work = mkdtempSync(join(tmpdir(), 'dype-hls-digits-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const N = 64;
// Values whose shortest decimal form needs 16 or 17 digits.
const a = Float64Array.from({ length: N }, (_, i) => (i + 1) / 3 + 1e-3 / (i + 7));
const x = Float64Array.from({ length: N }, (_, i) => 1 / (7 + i) - 0.1);

/** Builds the project of `dtype`'s diagonal-times-vector program with g++ and runs it on a, x; the output's text. */
async function csim(dtype: 'f32' | 'f64'): Promise<string> {
  const dir = join(work, dtype);
  const prog = join(work, `scale_${dtype}.dy`);
  writeFileSync(
    prog,
    `kernel scale(A: csr<${dtype}>[m, n], x: dense<${dtype}>[n]) -> (y: dense<${dtype}>[m]) {\n  y[i] = A[i, j] * x[j];\n}\n`,
  );
  const round = dtype === 'f32' ? (v: Float64Array) => v.map(Math.fround) : (v: Float64Array) => v;
  const A = join(work, `A_${dtype}.mtx`);
  const X = join(work, `x_${dtype}.mtx`);
  const diag = Int32Array.from({ length: N }, (_, i) => i);
  writeFileSync(
    A,
    formatMatrixMarketCoordinate(
      { format: 'coo', rows: N, cols: N, rowIdx: diag, colIdx: diag, values: round(a) },
      'real',
    ),
  );
  writeFileSync(X, formatMatrixMarketArray({ format: 'dense', shape: [N], data: round(x) }, 'real'));
  const r = await runCliAsync(['hls', prog, '-o', dir]);
  expect(r.status, r.stderr).toBe(0);
  execFileSync('make', ['-s', '-C', dir, 'build/csim/scale_host'], { timeout: 300_000 });
  const out = join(work, `y_${dtype}.mtx`);
  const run = spawnSync(
    join(dir, 'build', 'csim', 'scale_host'),
    ['--in', `A=${A}`, '--in', `x=${X}`, '--out', `y=${out}`],
    { encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  return readFileSync(out, 'utf8');
}

const values = (text: string): Float64Array => toDense(parseMatrixMarket(text, 'y.mtx')).data;
const significant = (line: string): number =>
  line.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').length;

describe.skipIf(!HAVE_GXX)('the FPGA host writes what the dtype holds', () => {
  it.concurrent('f64: 17 significant digits, every value read back bit for bit', { timeout: 400_000 }, async () => {
    const text = await csim('f64');
    const got = values(text);
    const want = a.map((v, i) => v * x[i]!);
    expect(Array.from(got)).toEqual(Array.from(want));
    expect(Math.max(...text.trim().split('\n').slice(2).map(significant))).toBe(17);
  });

  it.concurrent(
    'f32: the floats the kernel computed, in at most 9 significant digits',
    { timeout: 400_000 },
    async () => {
      const text = await csim('f32');
      const got = values(text);
      const want = a.map((v, i) => Math.fround(Math.fround(v) * Math.fround(x[i]!)));
      // Read as floats (as dype reads an f32 input), the text is exactly what the kernel computed.
      expect(Array.from(got.map(Math.fround))).toEqual(Array.from(want));
      expect(Math.max(...text.trim().split('\n').slice(2).map(significant))).toBeLessThanOrEqual(9);
    },
  );
});
