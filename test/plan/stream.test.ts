/**
 * Fill and drain over a finite stream (runtime/plan/figures.ts): N inputs
 * take latency + (N - 1) x period, so the throughput objective is that / N.
 * The DP stays exact for every N (its labels keep period and latency apart;
 * the time per input is a monotone function of both), and a shorter stream
 * moves the pick toward shorter latency, a longer one toward a shorter
 * period.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planPareto, type PlanOptions } from '../../runtime/plan/dp.js';
import { perInputMs } from '../../runtime/plan/figures.js';
import { expectExact, problemArb, STREAMS, systemArb } from './gen.js';

const narrow = systemArb({ maxAccel: 3, spread: 'narrow', minGpuSpecs: 1, minFpgaSpecs: 1 });

describe('a finite stream: time per input = (latency + (N - 1) x period) / N', () => {
  it('is the period for an unbounded stream and the latency for one input', () => {
    expect(perInputMs(2, 7, 'unbounded')).toBe(2);
    expect(perInputMs(2, 7, 1)).toBe(7);
    expect(perInputMs(2, 7, 12)).toBe((7 + 11 * 2) / 12);
  });

  it('the DP equals exhaustive enumeration for every stream length', () => {
    let pipelines = 0;
    fc.assert(
      fc.property(problemArb(5, 'narrow'), narrow, (p, sys) => {
        for (const streamLength of STREAMS) {
          const front = expectExact(sys, p, { objective: 'throughput', energyScope: 'system', streamLength });
          if (front.some((m) => m.stages.length > 1)) pipelines++;
        }
      }),
      { seed: 31, numRuns: 80 },
    );
    expect(pipelines).toBeGreaterThan(40);
  });

  it('moves the pick the right way: a shorter stream never picks a longer latency, a longer one never a longer period', () => {
    let moved = 0;
    fc.assert(
      fc.property(problemArb(5, 'narrow'), narrow, (p, sys) => {
        const best = STREAMS.map(
          (streamLength) =>
            planPareto(sys, p, { objective: 'throughput', energyScope: 'system', streamLength } satisfies PlanOptions)
              .pareto[0],
        );
        if (best.some((m) => m === undefined)) return;
        // STREAMS runs from short (1 input) to unbounded: exchange arguments on (L + (N - 1) P) / N give these orders.
        for (let i = 0; i + 1 < best.length; i++) {
          const [short, long] = [best[i]!, best[i + 1]!];
          expect(short.latencyMs).toBeLessThanOrEqual(long.latencyMs * (1 + 1e-9));
          expect(short.periodMs).toBeGreaterThanOrEqual(long.periodMs * (1 - 1e-9));
        }
        if (best[0]!.latencyMs < best[best.length - 1]!.latencyMs * (1 - 1e-9)) moved++;
      }),
      { seed: 32, numRuns: 120 },
    );
    // The term decides: one input and the steady state often want different mappings.
    expect(moved).toBeGreaterThan(10);
  });
});
