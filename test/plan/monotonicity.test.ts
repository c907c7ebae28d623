/**
 * Monotonicity of the planner in the system and the constraints: more power
 * budget, more device instances or faster transfers never make the plan
 * worse.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { choicesOf, evaluateChoices, planPareto, type PlanOptions } from '../../runtime/plan/dp.js';
import { enumerateMappings } from '../../runtime/plan/exhaustive.js';
import type { Mapping, PlanProblem } from '../../runtime/plan/types.js';
import type { DeviceSpec, SystemSpec } from '../../runtime/system/types.js';
import { OBJECTIVES, problemArb, systemArb } from './gen.js';
import { goal, STEADY } from '../helpers/goal.js';

const weaklyDominates = (a: Mapping, b: { periodMs: number; latencyMs: number; energyJ: number }): boolean =>
  a.periodMs <= b.periodMs && a.latencyMs <= b.latencyMs && a.energyJ <= b.energyJ;

/** Systems with at least one accelerator and room for one more instance (at most 4 in all afterwards). */
const growableSystem = (spread: 'wide' | 'narrow'): fc.Arbitrary<SystemSpec> =>
  fc.oneof(systemArb({ maxAccel: 2, minGpuSpecs: 1, spread }), systemArb({ maxAccel: 2, minFpgaSpecs: 1, spread }));

function grow(
  sys: SystemSpec,
  pick: number,
  zeroIdle: boolean,
): { before: SystemSpec; after: SystemSpec; dev: DeviceSpec } {
  const accel = sys.devices.filter((d) => d.kind !== 'cpu');
  const target = accel[pick % accel.length]!.id;
  const devices = sys.devices.map((d) => (d.id === target && zeroIdle ? { ...d, idlePowerW: 0 } : d));
  const before = { ...sys, devices };
  const after = { ...sys, devices: devices.map((d) => (d.id === target ? { ...d, count: d.count + 1 } : d)) };
  return { before, after, dev: devices.find((d) => d.id === target)! };
}

describe('power cap', () => {
  it('a higher cap never raises the best period (throughput objective)', () => {
    let compared = 0;
    let improved = 0;
    fc.assert(
      fc.property(
        problemArb(6),
        systemArb({ maxAccel: 3 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
        (p, sys, a, b, boundQ) => {
          const all = enumerateMappings(sys, p, goal('throughput'));
          const powers = [...new Set(all.map((m) => m.powerW))].sort((x, y) => x - y);
          const lats = all.map((m) => m.latencyMs).sort((x, y) => x - y);
          // Caps at (or between) actual mapping powers, so they bind.
          const capAt = (q: number): number =>
            powers.length === 0
              ? 100
              : powers[Math.min(powers.length - 1, Math.floor((q / 100) * powers.length))]! + (q % 3 === 0 ? 0 : 0.5);
          const [lo, hi] = [capAt(Math.min(a, b)), capAt(Math.max(a, b))];
          const base: PlanOptions = goal('throughput');
          if (boundQ !== undefined && lats.length > 0)
            base.latencyBoundMs = lats[Math.min(lats.length - 1, Math.floor((boundQ / 100) * lats.length))]!;
          const low = planPareto(sys, p, { ...base, powerCapW: lo }).pareto[0];
          const high = planPareto(sys, p, { ...base, powerCapW: hi }).pareto[0];
          if (low === undefined) return;
          expect(high).toBeDefined();
          expect(high!.periodMs).toBeLessThanOrEqual(low.periodMs);
          compared++;
          if (high!.periodMs < low.periodMs) improved++;
        },
      ),
      { seed: 4242, numRuns: 200 },
    );
    expect(compared).toBeGreaterThan(100);
    expect(improved).toBeGreaterThan(20);
  });
});

describe('one more device instance', () => {
  const optsArb = fc.record({
    objective: fc.constantFrom(...OBJECTIVES),
    cap: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
    bound: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }),
  });

  function resolve(
    sys: SystemSpec,
    p: PlanProblem,
    o: { objective: PlanOptions['objective']; cap: number | undefined; bound: number | undefined },
    withCap: boolean,
  ): PlanOptions {
    const all = enumerateMappings(sys, p, goal(o.objective));
    const q = (xs: number[], f: number): number | undefined => (
      xs.sort((x, y) => x - y),
      xs[Math.min(xs.length - 1, Math.floor((f / 100) * xs.length))]
    );
    const opts: PlanOptions = goal(o.objective);
    const cap =
      withCap && o.cap !== undefined
        ? q(
            all.map((m) => m.powerW),
            o.cap,
          )
        : undefined;
    const bound =
      o.bound !== undefined
        ? q(
            all.map((m) => m.latencyMs),
            o.bound,
          )
        : undefined;
    if (cap !== undefined) opts.powerCapW = cap;
    if (bound !== undefined) opts.latencyBoundMs = bound;
    return opts;
  }

  it('never makes the Pareto front worse (added device idles at 0 W, so power and idle energy are unchanged)', () => {
    let points = 0;
    let better = 0;
    fc.assert(
      fc.property(
        problemArb(5),
        fc.oneof(growableSystem('wide'), growableSystem('narrow')),
        fc.nat(),
        optsArb,
        (p, sys0, pick, o) => {
          const { before, after } = grow(sys0, pick, true);
          const opts = resolve(before, p, o, true);
          const old = planPareto(before, p, opts).pareto;
          const now = planPareto(after, p, opts).pareto;
          for (const m of old) {
            expect(
              now.some((n) => weaklyDominates(n, m)),
              `old point ${m.periodMs}/${m.latencyMs}/${m.energyJ} not covered`,
            ).toBe(true);
            points++;
          }
          if (old.length > 0 && now.some((n) => old.every((m) => n.periodMs < m.periodMs))) better++;
        },
      ),
      { seed: 99, numRuns: 150 },
    );
    expect(points).toBeGreaterThan(120);
    expect(better).toBeGreaterThan(8);
  });

  it('with idle power: every old point, charged the new instance idling, is weakly dominated', () => {
    // An added instance draws its idle power for the whole period, so every
    // mapping's energy rises by period x idle: the old point shifted by that
    // is what the new front must cover. (No power cap: the idle instance
    // raises every mapping's peak power too.) The shift is applied in one
    // rounding order and the planner's in another, hence the 1e-12 slack.
    let points = 0;
    fc.assert(
      fc.property(
        problemArb(5),
        fc.oneof(growableSystem('wide'), growableSystem('narrow')),
        fc.nat(),
        optsArb,
        (p, sys0, pick, o) => {
          const { before, after, dev } = grow(sys0, pick, false);
          const opts = resolve(before, p, o, false);
          const old = planPareto(before, p, opts).pareto;
          const now = planPareto(after, p, opts).pareto;
          for (const m of old) {
            const shifted = {
              periodMs: m.periodMs,
              latencyMs: m.latencyMs,
              energyJ: (m.energyJ + (m.periodMs / 1e3) * dev.idlePowerW) * (1 + 1e-12),
            };
            expect(now.some((n) => weaklyDominates(n, shifted))).toBe(true);
            // The same stage choices score exactly so on the bigger system.
            const same = evaluateChoices(after, p, choicesOf(p, m), STEADY)!;
            expect([same.periodMs, same.latencyMs]).toEqual([m.periodMs, m.latencyMs]);
            expect(same.energyJ).toBeLessThanOrEqual(shifted.energyJ);
            points++;
          }
        },
      ),
      { seed: 100, numRuns: 150 },
    );
    expect(points).toBeGreaterThan(150);
  });
});

describe('peer links', () => {
  /**
   * Peer links at least as fast as staging through the host: latency at
   * most 0.8 x the two host-link latencies, bandwidth at least 1.2 x the
   * two host links' in series. (The model takes a peer link whenever one
   * exists, see transferMs; a link slower than the host path would make its
   * removal cheaper, so the property needs this precondition.)
   */
  const linkedSystem = fc
    .tuple(
      fc.oneof(
        systemArb({ maxAccel: 3, minGpuSpecs: 1, minFpgaSpecs: 1 }),
        systemArb({ maxAccel: 3, minGpuSpecs: 1, minFpgaSpecs: 1, spread: 'narrow' }),
      ),
      fc.array(fc.record({ f: fc.integer({ min: 12, max: 100 }), g: fc.integer({ min: 0, max: 8 }) }), {
        minLength: 5,
        maxLength: 5,
      }),
      fc.boolean(),
    )
    .map(([sys, factors, addGpuFpga]) => {
      const byId = new Map(sys.devices.map((d) => [d.id, d]));
      const links = [...sys.peerLinks];
      if (addGpuFpga && !links.some((l) => [l.a, l.b].sort().join() === 'fa,ga'))
        links.push({ a: 'ga', b: 'fa', bandwidthGBs: 1, latencyUs: 0 });
      const peerLinks = links.map((l, i) => {
        const a = byId.get(l.a)!.hostLink!;
        const b = byId.get(l.b)!.hostLink!;
        const { f, g } = factors[i % factors.length]!;
        return {
          ...l,
          bandwidthGBs: f / 10 / (1 / a.bandwidthGBs + 1 / b.bandwidthGBs),
          latencyUs: (g / 10) * (a.latencyUs + b.latencyUs),
        };
      });
      return { ...sys, peerLinks };
    });

  const kindOf = (m: Mapping): Map<string, string> =>
    new Map(m.stages.flatMap((s) => s.ops.map((id) => [id, s.kind] as const)));
  const stageOf = (m: Mapping): Map<string, number> =>
    new Map(m.stages.flatMap((s, i) => s.ops.map((id) => [id, i] as const)));
  function gpuFpgaTransfer(p: PlanProblem, m: Mapping): boolean {
    const kind = kindOf(m);
    const stage = stageOf(m);
    return p.ops.some((op) =>
      op.reads.some(
        (r) =>
          r.from.kind === 'op' &&
          stage.get(r.from.id) !== stage.get(op.id) &&
          [kind.get(r.from.id), kind.get(op.id)].sort().join() === 'fpga,gpu',
      ),
    );
  }

  it('removing all peer links never makes a mapping cheaper (fixed stage choices)', () => {
    let gpuFpga = 0;
    let slower = 0;
    fc.assert(
      fc.property(problemArb(6), linkedSystem, (p, sys) => {
        const bare: SystemSpec = { ...sys, peerLinks: [] };
        for (const m of enumerateMappings(sys, p, goal('throughput'))) {
          const c = choicesOf(p, m);
          const linked = evaluateChoices(sys, p, c, STEADY)!;
          const unlinked = evaluateChoices(bare, p, c, STEADY);
          // Links change no feasibility check.
          expect(unlinked).toBeDefined();
          expect(unlinked!.periodMs).toBeGreaterThanOrEqual(linked.periodMs);
          expect(unlinked!.latencyMs).toBeGreaterThanOrEqual(linked.latencyMs);
          expect(unlinked!.energyJ).toBeGreaterThanOrEqual(linked.energyJ);
          if (
            gpuFpgaTransfer(p, m) &&
            sys.peerLinks.some(
              (l) => [l.a, l.b].some((x) => x.startsWith('g')) && [l.a, l.b].some((x) => x.startsWith('f')),
            )
          ) {
            gpuFpga++;
            if (unlinked!.latencyMs > linked.latencyMs) slower++;
          }
        }
      }),
      { seed: 31337, numRuns: 150 },
    );
    // GPU<->FPGA stage transfers over a link are common, and removing the link usually shows.
    expect(gpuFpga).toBeGreaterThan(400);
    expect(slower).toBeGreaterThan(gpuFpga / 2);
  });
});
