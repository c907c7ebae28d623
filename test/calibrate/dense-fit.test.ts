/**
 * The dense part of dype calibrate without timing (cli/calibrate-dense.ts):
 * the counts it fits on are the planner's (GEMM's trips per row, k and block
 * of output columns; a map's elements one column loop), and on times the
 * model itself gives, the fit recovers its figures; flops and bytes alone
 * (the form before the trips) cannot.
 */
import { describe, expect, it } from 'vitest';
import { calibrationKernel, DENSE, denseCounts, fitDense, type DenseShape } from '../../cli/calibrate-dense.js';
import type { PlanSpec } from '../../runtime/plan/types.js';

describe('the dense fit', async () => {
  const spec = new Map<string, PlanSpec>();
  for (const name of ['gemm', 'map'] as const)
    spec.set(name, (await calibrationKernel(`calibrate_${name}`, DENSE[name], 'wasm', [])).spec);
  const counted = (s: DenseShape, blockBytes: number) => denseCounts(spec.get(s.kernel)!, s, blockBytes);

  it("counts as the planner does: GEMM's trips per row, k and block of h; a map's elements as one loop", () => {
    // f32: 32 lanes a 128-byte block, 16 a 64-byte one.
    expect(counted({ kernel: 'gemm', n: 1000, k: 64, h: 16 }, 128)).toEqual({
      flops: 2 * 1000 * 64 * 16,
      bytes: 4 * (1000 * 64 + 64 * 16 + 1000 * 16),
      trips: 1000 * 64,
    });
    expect(counted({ kernel: 'gemm', n: 1000, k: 64, h: 128 }, 128).trips).toBe(1000 * 64 * 4);
    expect(counted({ kernel: 'gemm', n: 1000, k: 64, h: 128 }, 64).trips).toBe(1000 * 64 * 8);
    expect(counted({ kernel: 'map', n: 1000, k: 4, h: 4 }, 128).trips).toBe(125);
  });

  it('recovers the figures from times its own form gives; flops and bytes alone miss the narrow GEMMs', () => {
    const truth = { flop: 0.002, byte: 0.015, trip: 0.45 };
    const overheadUs = 1.5;
    const shapes: DenseShape[] = [
      ...[2_000, 20_000, 100_000].flatMap((n) =>
        [
          [16, 16],
          [64, 64],
          [16, 128],
        ].map(([k, h]) => ({ kernel: 'gemm' as const, n, k: k!, h: h! })),
      ),
      ...[10_000, 1_000_000].flatMap((n) => [4, 32].map((k) => ({ kernel: 'map' as const, n, k, h: k }))),
    ];
    const held: DenseShape[] = [
      { kernel: 'gemm', n: 50_000, k: 32, h: 32 },
      { kernel: 'gemm', n: 8_000, k: 128, h: 16 },
    ];
    const timed = (s: DenseShape) => {
      const c = counted(s, 128);
      return {
        ...s,
        ...c,
        measuredMs: overheadUs / 1e3 + (c.flops * truth.flop + c.bytes * truth.byte + c.trips * truth.trip) * 1e-6,
      };
    };
    const fit = fitDense(shapes.map(timed), held.map(timed), overheadUs, 128);
    expect(fit.nsPerDenseFlop).toBeCloseTo(truth.flop, 9);
    expect(fit.nsPerDenseByte).toBeCloseTo(truth.byte, 9);
    expect(fit.nsPerDenseTrip).toBeCloseTo(truth.trip, 9);
    expect(fit.denseBlockBytes).toBe(128);
    for (const r of [...fit.fitRows, ...fit.rows]) expect(r.predictedMs / r.measuredMs).toBeCloseTo(1, 9);
    const old = fitDense(shapes.map(timed), held.map(timed), overheadUs, 128, false);
    expect(old.nsPerDenseTrip).toBe(0);
    // 16 output columns take the trips 32 do, twice the trips a flop: priced by its flops it comes out short.
    const narrow = old.rows[1]!;
    expect(narrow.predictedMs / narrow.measuredMs).toBeLessThan(0.85);
  });
});
