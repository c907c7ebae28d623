/**
 * The planner's `instances` option (a runtime whose backend sees fewer
 * devices than the system re-plans on those it can run, runtime/engine/
 * choose.ts) and `kinds` together: on random problems and systems with
 * random caps, the DP's front equals the exhaustive enumeration's under the
 * same options, every stage uses only instances below its device's cap, and
 * a cap of a device's whole count changes nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planPareto, type PlanOptions } from '../../runtime/plan/dp.js';
import type { DeviceKind } from '../../runtime/system/types.js';
import { expectExact, optsDraftArb, problemArb, resolveOpts, systemArb, triples } from './gen.js';

const KINDS: DeviceKind[] = ['cpu', 'gpu', 'fpga'];

describe('planning on some instances of each device', () => {
  it('the DP equals exhaustive enumeration under random caps and kinds; mappings stay within them', () => {
    let capped = 0;
    let nonEmpty = 0;
    fc.assert(
      fc.property(
        problemArb(5),
        systemArb({ maxAccel: 3 }),
        optsDraftArb,
        fc.array(fc.nat(3), { minLength: 8, maxLength: 8 }),
        fc.subarray(KINDS, { minLength: 1 }),
        fc.boolean(),
        (p, sys, od, caps, kinds, restrictKinds) => {
          const instances = Object.fromEntries(sys.devices.map((d, i) => [d.id, Math.min(d.count, caps[i % 8]!)]));
          const opts: PlanOptions = {
            ...resolveOpts(sys, p, od),
            instances,
            ...(restrictKinds ? { kinds: kinds } : {}),
          };
          if (sys.devices.some((d) => instances[d.id]! < d.count)) capped++;
          if (expectExact(sys, p, opts).length > 0) nonEmpty++;
        },
      ),
      { seed: 20261207, numRuns: 200 },
    );
    expect(capped).toBeGreaterThan(100);
    expect(nonEmpty).toBeGreaterThan(60);
  });

  it("a cap of a device's whole count (or above it) plans as no cap; a cap of 0 leaves the device out", () => {
    fc.assert(
      fc.property(problemArb(5), systemArb({ maxAccel: 3 }), optsDraftArb, (p, sys, od) => {
        const base = resolveOpts(sys, p, od);
        const free = triples(planPareto(sys, p, base).pareto);
        const whole = Object.fromEntries(sys.devices.map((d) => [d.id, d.count]));
        const above = Object.fromEntries(sys.devices.map((d) => [d.id, d.count + 2]));
        expect(triples(planPareto(sys, p, { ...base, instances: whole }).pareto)).toEqual(free);
        expect(triples(planPareto(sys, p, { ...base, instances: above }).pareto)).toEqual(free);
        const gone = sys.devices.find((d) => d.kind !== 'cpu');
        if (gone) {
          const front = planPareto(sys, p, { ...base, instances: { [gone.id]: 0 } }).pareto;
          for (const m of front) expect(m.stages.some((s) => s.device === gone.id)).toBe(false);
        }
      }),
      { seed: 71207, numRuns: 80 },
    );
  });
});
