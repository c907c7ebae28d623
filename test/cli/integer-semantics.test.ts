/**
 * Integer arithmetic means the same on every CPU backend (docs/LANGUAGE.md,
 * *Integers*): `dype run --backend reference|wasm|native` write the same
 * files, and those hold what two's complement arithmetic in the declared
 * width gives, computed here with BigInt: products and sums that overflow
 * wrap, MIN / -1 and -MIN and abs(MIN) are MIN, a zero divisor gives 0, and
 * min/max over an empty row hold the type's extreme (INT64_MAX written as
 * 9223372036854775807, though a float64 holds it as 2^63). The generated
 * FPGA project's C simulation (g++) writes the same. Native is skipped
 * without a C compiler, the C simulation without g++.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveCompiler } from '../helpers/cc.js';
import { cleanup, freshDir, runCli, runCliAsync, writeLines } from '../helpers/cli.js';
import { HAVE_GXX } from '../hls/example-data.js';

const BACKENDS = haveCompiler() ? ['reference', 'wasm', 'native'] : ['reference', 'wasm'];
const OUTS = ['y', 'lo', 'hi', 'g', 'q', 'a'];

const program = (t: 'i32' | 'i64'): string => `kernel k(A: csr<${t}>[n, m], x: dense<${t}>[m], w: dense<${t}>[n])
    -> (y: dense<${t}>[n], lo: dense<${t}>[n], hi: dense<${t}>[n], g: dense<${t}>[n], q: dense<${t}>[n], a: dense<${t}>[n]) {
  y[i] = A[i, j] * x[j];
  lo[i] = min(j: A[i, j]);
  hi[i] = max(j: A[i, j]) + 1;
  g[i] = lo[i] + 1;
  q[i] = w[i] / -1 + w[i] / 0;
  a[i] = abs(w[i]) - -w[i];
}`;

const I32_MIN = -(2n ** 31n);
const I64_MIN = -(2n ** 63n);

/** One case: the matrix's entries by row (row 1 empty), x and w, in one integer width. */
interface Case {
  bits: 32 | 64;
  rows: [number, bigint][][];
  x: bigint[];
  w: bigint[];
}

const CASES: Record<'i32' | 'i64', Case> = {
  i32: {
    bits: 32,
    rows: [
      [
        [0, 2000000000n],
        [1, 2000000000n],
      ],
      [],
      [[2, I32_MIN]],
      [
        [0, 123456789n],
        [1, -987654321n],
      ],
    ],
    x: [3n, 2000000000n, -1n],
    w: [I32_MIN, 7n, -7n, 2n ** 31n - 1n],
  },
  // Within ±(2^53 - 1), as i64 inputs must be. A result beyond 2^53 is never an operand again here: the
  // reference rounds each i64 value beyond 2^53 to float64 (docs/LANGUAGE.md), so only single operations there
  // are exact.
  i64: {
    bits: 64,
    rows: [
      [[0, 9007199254740991n]],
      [],
      [[2, -9007199254740991n]],
      [
        [1, 5n],
        [2, -6n],
      ],
    ],
    x: [9007199254740991n, 7n, 1024n],
    w: [-9007199254740991n, 7n, -7n, 9007199254740991n],
  },
};

/** What each output holds, as the text its Matrix Market line carries. */
function expected(c: Case): Record<string, string[]> {
  const wrap = (v: bigint): bigint => BigInt.asIntN(c.bits, v);
  const min = c.bits === 32 ? I32_MIN : I64_MIN;
  const max = -min - 1n;
  // The value a float64 holds, written back as an integer: INT64_MAX rounds to 2^63, which is written as INT64_MAX.
  const text = (v: bigint): string => {
    const f = BigInt(Number(v));
    return f === 2n ** 63n ? String(max) : String(f);
  };
  const prods = c.rows.map((r) => r.map(([j, v]) => wrap(v * c.x[j]!)));
  const lo = c.rows.map((r) => (r.length ? r.map(([, v]) => v).reduce((a, b) => (a < b ? a : b)) : max));
  const hiRaw = c.rows.map((r) => (r.length ? r.map(([, v]) => v).reduce((a, b) => (a > b ? a : b)) : min));
  return {
    y: prods.map((p) => text(p.reduce((a, b) => wrap(a + b), 0n))),
    lo: lo.map(text),
    hi: hiRaw.map((h) => text(wrap(h + 1n))),
    g: lo.map((l) => text(wrap(l + 1n))),
    q: c.w.map((v) => text(wrap(-v))),
    a: c.w.map((v) => text(wrap((v < 0n ? wrap(-v) : v) + v))),
  };
}

let dir: string;
beforeAll(() => {
  dir = freshDir('dype-ints-');
});
afterAll(() => cleanup(dir));

function inputs(t: 'i32' | 'i64', c: Case): string[] {
  const entries = c.rows.flatMap((r, i) => r.map(([j, v]) => `${i + 1} ${j + 1} ${v}`));
  const A = writeLines(dir, `A-${t}.mtx`, [
    '%%MatrixMarket matrix coordinate integer general',
    `${c.rows.length} ${c.x.length} ${entries.length}`,
    ...entries,
  ]);
  const vec = (name: string, v: bigint[]): string =>
    writeLines(dir, `${name}-${t}.mtx`, [
      '%%MatrixMarket matrix array integer general',
      `${v.length} 1`,
      ...v.map(String),
    ]);
  const prog = writeLines(dir, `ints-${t}.dy`, [program(t)]);
  return [prog, '--input', `A=${A}`, '--input', `x=${vec('x', c.x)}`, '--input', `w=${vec('w', c.w)}`];
}

const values = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('%'))
    .slice(1);

describe('integer arithmetic is the same on every CPU backend', () => {
  for (const t of ['i32', 'i64'] as const) {
    it(`${t}: wrapping, division, empty rows`, () => {
      const c = CASES[t];
      const want = expected(c);
      const args = inputs(t, c);
      for (const backend of BACKENDS) {
        const outs = OUTS.flatMap((o) => ['--out', `${o}=${join(dir, `${t}-${backend}-${o}.mtx`)}`]);
        const r = runCli(['run', ...args, '--backend', backend, ...outs], { cwd: dir });
        expect(r.status, `${backend}: ${r.stderr}`).toBe(0);
        for (const o of OUTS)
          expect(values(join(dir, `${t}-${backend}-${o}.mtx`)), `${t} ${o} on ${backend}`).toEqual(want[o]);
      }
    });
  }

  for (const t of ['i32', 'i64'] as const) {
    it.skipIf(!HAVE_GXX).concurrent(`${t}: the FPGA project's C simulation`, { timeout: 400_000 }, async () => {
      const c = CASES[t];
      const want = expected(c);
      const [prog, ...rest] = inputs(t, c);
      const project = join(dir, `hls-${t}`);
      const r = await runCliAsync(['hls', prog!, '-o', project]);
      expect(r.status, r.stderr).toBe(0);
      execFileSync('make', ['-s', '-C', project, 'build/csim/k_host'], { timeout: 300_000 });
      const ins = rest.filter((a) => a !== '--input').flatMap((a) => ['--in', a]);
      const outs = OUTS.flatMap((o) => ['--out', `${o}=${join(dir, `${t}-csim-${o}.mtx`)}`]);
      const run = spawnSync(join(project, 'build', 'csim', 'k_host'), [...ins, ...outs], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      for (const o of OUTS)
        expect(values(join(dir, `${t}-csim-${o}.mtx`)), `${t} ${o} in C simulation`).toEqual(want[o]);
    });
  }

  it('the oracle sees what it should: the i32 cases overflow', () => {
    const want = expected(CASES.i32);
    expect(want.y[0]).toBe(String(BigInt.asIntN(32, 2000000000n * 3n + 2000000000n * 2000000000n)));
    expect(want.lo[1]).toBe('2147483647');
    expect(expected(CASES.i64).y[0]).toBe('-18014398509481984');
    expect(want.g[1]).toBe('-2147483648');
    expect(want.q[0]).toBe('-2147483648');
    expect(expected(CASES.i64).lo[1]).toBe('9223372036854775807');
  });
});
