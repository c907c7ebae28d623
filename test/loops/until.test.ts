/**
 * `repeat N until v stable | within TOL` end to end on small inputs: the
 * spans of DY2034-DY2039, the IR text round trip and the verifier's own
 * checks, and the trips the reference interpreter, the loop executor and
 * the wasm executor run (equal, stopping on the test or at the maximum).
 */
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import { interpretKernel } from '../../interp/interpret.js';
import { runKernelViaLoops } from '../../interp/loops-exec.js';
import { printModule } from '../../ir/printer.js';
import { parseModule } from '../../ir/text-parser.js';
import { verifyModule } from '../../ir/verifier.js';
import { converged } from '../../runtime/converge.js';
import { csr } from '../helpers/interp-run.js';
import { compileWasm, loopKernel, toMaps } from '../wasm/compare.js';

const diag = (src: string): { code: string; col: number; endCol: number }[] =>
  compileSource(src, 'u.dy').diagnostics.map((d) => ({ code: d.code, col: d.span.col, endCol: d.span.endCol }));

const head = 'kernel k(x0: dense<f64>[n]) -> (x: dense<f64>[n]) {\nx[i] = x0[i];\n';

describe('until: diagnostics point at the piece that is wrong', () => {
  const cases: [string, string, string][] = [
    ['DY2034', 'repeat 3 until y stable { x[i] = x[i]; }', 'y'],
    ['DY2039', 'repeat 3 until x steady { x[i] = x[i]; }', 'steady'],
    ['DY2039', 'repeat 3 until x stable 2 { x[i] = x[i]; }', '2'],
    ['DY2036', 'repeat 3 until x within -2.5 { x[i] = x[i]; }', '-2.5'],
    ['DY2036', 'repeat 3 until x within inf { x[i] = x[i]; }', 'inf'],
  ];
  for (const [code, line, at] of cases)
    it(`${code}: ${line}`, () => {
      const col = line.indexOf(at) + 1;
      expect(diag(`${head}${line}\n}`)).toEqual([{ code, col, endCol: col + at.length }]);
    });
  it('DY2035 at the name when nothing is assigned before the loop', () => {
    const src = 'kernel k(x0: dense<f64>[n]) -> (x: dense<f64>[n]) {\nrepeat 3 until x stable { x[i] = x0[i]; }\n}';
    expect(diag(src)).toEqual([{ code: 'DY2035', col: 16, endCol: 17 }]);
  });
  it('DY2037 and DY2038 at the name', () => {
    const i =
      'kernel k(k0: dense<i32>[n]) -> (k: dense<i32>[n]) {\nk[i] = k0[i];\nrepeat 3 until k within 1 { k[i] = k[i]; }\n}';
    expect(diag(i)).toEqual([{ code: 'DY2037', col: 16, endCol: 17 }]);
    const s =
      'kernel k(A: csr<f64>[n, n]) -> (B: csr<f64>[n, n]) {\nB[i, j] = A[i, j];\nrepeat 3 until B stable { B[i, j] = B[i, j]; }\n}';
    expect(diag(s)).toEqual([{ code: 'DY2038', col: 16, endCol: 17 }]);
  });
});

const HALVE = `kernel k(x0: dense<f64>[n]) -> (x: dense<f64>[n], s: f64) {
  x[i] = x0[i];
  s = 0.0;
  repeat 100 until x within 0.001 { x[i] = x[i] / 2.0; s = s + 1.0; }
}`;

describe('until in the graph IR', () => {
  it('prints, parses back to the same text and verifies', () => {
    const m = compileSource(HALVE, 'h.dy').module!;
    const text = printModule(m);
    expect(text).toContain('repeat 100 until %x within 0.001 {');
    expect(printModule(parseModule(text))).toBe(text);
    const stable = printModule(compileSource(HALVE.replace('within 0.001', 'stable'), 'h.dy').module!);
    expect(stable).toContain('until %x stable {');
    expect(printModule(parseModule(stable))).toBe(stable);
    expect(verifyModule(parseModule(text))).toEqual([]);
  });
  it('the verifier restates the checker rules on hand-written IR', () => {
    const text = printModule(compileSource(HALVE, 'h.dy').module!);
    const msgs = (t: string): string[] => verifyModule(parseModule(t)).map((d) => d.message);
    expect(msgs(text.replace('until %x within', 'until %s within')).join()).toBe('');
    expect(msgs(text.replace('until %x', 'until %x0')).join()).toMatch(/body does not assign/);
    expect(msgs(text.replace('within 0.001', 'within 1e999')).join()).toMatch(/finite non-negative/);
  });
});

describe('until: trips, stop reason and agreement of the executors', () => {
  const x0 = { format: 'dense' as const, shape: [3], data: Float64Array.from([1, -2, 4]) };
  it('within: stops after the first trip whose L1 change is at most the tolerance', async () => {
    // |change| after trip t is 7 / 2^t: 7/2^13 = 8.5e-4 <= 1e-3 first at t = 13.
    const k = loopKernel(HALVE);
    const ref = interpretKernel(k, toMaps({ tensors: { x0 } }));
    expect(ref.repeats).toEqual([
      { id: ref.repeats[0]!.id, max: 100, until: { value: 'x', within: 0.001 }, runs: 1, trips: 13, converged: 1 },
    ]);
    expect(ref.outputs.get('s')).toMatchObject({ data: Float64Array.from([13]) });
    const loops = runKernelViaLoops(k, toMaps({ tensors: { x0 } }));
    expect(loops.repeats).toEqual(ref.repeats);
    const c = await compileWasm(k);
    try {
      expect(c.exec.run(toMaps({ tensors: { x0 } })).repeats).toEqual(ref.repeats);
    } finally {
      c.exec.close();
    }
  });
  it('stable on f32 in wasm: halving reaches 0 exactly; the maximum is reported when it comes first', async () => {
    const src = HALVE.replaceAll('f64', 'f32').replace('within 0.001', 'stable');
    for (const [max, trips, conv] of [
      [1000, 0, 1],
      [20, 20, 0],
    ] as const) {
      const k = loopKernel(src.replace('repeat 100', `repeat ${max}`));
      const c = await compileWasm(k);
      try {
        const r = c.exec.run(toMaps({ tensors: { x0 } })).repeats[0]!;
        const ref = interpretKernel(k, toMaps({ tensors: { x0 } })).repeats[0]!;
        expect(r.converged).toBe(conv);
        if (conv) {
          // f32 underflows to 0 after about 152 halvings, f64 after about 1077: the backends stop at their own trip.
          expect(r.trips).toBeGreaterThan(100);
          expect(r.trips).toBeLessThan(200);
          expect(ref.trips).toBe(max);
        } else expect([r.trips, ref.trips]).toEqual([trips, trips]);
      } finally {
        c.exec.close();
      }
    }
  });
  it('min-plus relaxation on a path converges one trip after the longest hop count', () => {
    const A = csr(4, 4, [
      [1, 0, 1],
      [2, 1, 2],
      [3, 2, 3],
    ]);
    const d0 = { format: 'dense' as const, shape: [4], data: Float64Array.from([0, Infinity, Infinity, Infinity]) };
    const k = loopKernel(
      'kernel s(A: csr<f64>[n, n], d0: dense<f64>[n]) -> (d: dense<f64>[n]) { d[i] = d0[i]; repeat 99 until d stable { d[i] = min(d[i], min(j: A[i, j] + d[j])); } }',
    );
    const r = interpretKernel(k, toMaps({ tensors: { A, d0 } }));
    expect(Array.from((r.outputs.get('d') as { data: Float64Array }).data)).toEqual([0, 1, 3, 6]);
    expect(r.repeats[0]).toMatchObject({ trips: 4, converged: 1 });
  });
  it('the test itself: NaN stays NaN is stable, equal infinities have not changed', () => {
    expect(converged([NaN, Infinity], [NaN, Infinity], undefined)).toBe(true);
    expect(converged([NaN, Infinity], [NaN, Infinity], 0)).toBe(true);
    expect(converged([1, 2], [1, 2.5], 0.5)).toBe(true);
    expect(converged([1, 2], [1, 2.5], 0.49)).toBe(false);
    expect(converged([1, Infinity], [1, 5], 1e300)).toBe(false);
  });
  it('within: stops reading once the partial sum passes TOL, with the verdict of the whole sum', () => {
    let reads = 0;
    const counted = (xs: number[]): ArrayLike<number> =>
      new Proxy(xs, {
        get: (t, k) => {
          if (typeof k === 'string' && /^\d+$/.test(k)) reads++;
          return Reflect.get(t, k);
        },
      });
    const n = 1000;
    const prev = Array.from({ length: n }, (_, i) => i / n);
    expect(converged(counted(prev), counted(prev.map((x) => x + 0.01)), 0.025)).toBe(false);
    expect(reads).toBe(2 * 3); // the third change takes the sum past 0.025
    // Against the whole sum in element order on random changes around TOL: the same verdict every time.
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let trial = 0; trial < 500; trial++) {
      const m = 1 + Math.floor(rnd() * 50);
      const a = Array.from({ length: m }, () => rnd());
      const b = a.map((x) => (rnd() < 0.5 ? x : x + (rnd() - 0.5) * 1e-3));
      let whole = 0;
      for (let i = 0; i < m; i++) if (a[i] !== b[i]) whole += Math.abs(b[i]! - a[i]!);
      const tol = whole * (0.5 + rnd());
      expect(converged(a, b, tol), `trial ${trial}`).toBe(whole <= tol);
    }
  });
});
