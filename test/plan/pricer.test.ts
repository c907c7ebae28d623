/**
 * The runtime's pricing of fixed partitions (runtime/plan/dp.ts choicePricer): the figures it gives without
 * building stages must be the whole mapping's figures exactly, a structure shared by the problems of one spec must
 * price them as a structure of their own does, and a structure of other ops must be refused. Every list of stage
 * choices over the cut points, devices and instance counts is priced, the infeasible ones included (too many
 * instances, a device that cannot run an op, memory).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { choicePricer, cutPoints, evaluateChoices, planStructure, type StageChoice } from '../../runtime/plan/dp.js';
import type { Mapping, PlanProblem } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import { optsDraftArb, problemArb, problemFamilyArb, systemArb } from './gen.js';

/** Every list of stage choices, counts up to one more than a device has (those are infeasible). */
function allChoices(sys: SystemSpec, p: PlanProblem): StageChoice[][] {
  const cuts = cutPoints(p);
  const out: StageChoice[][] = [];
  const rec = (i: number, acc: StageChoice[]): void => {
    if (i === p.ops.length) {
      out.push(acc);
      return;
    }
    for (let j = i + 1; j <= p.ops.length; j++) {
      if (!cuts[j]) continue;
      for (const dev of sys.devices)
        for (let k = 1; k <= dev.count + 1; k++) rec(j, [...acc, { start: i, end: j, device: dev.id, count: k }]);
    }
  };
  rec(0, []);
  return out;
}

const FIGURES = [
  'periodMs',
  'rootComplexMs',
  'latencyMs',
  'streamLength',
  'perInputMs',
  'energyScope',
  'energyJ',
  'deviceEnergyJ',
  'systemEnergyJ',
  'powerW',
] as const;

const figuresOf = (m: Mapping | undefined): Record<string, unknown> | undefined =>
  m === undefined ? undefined : Object.fromEntries(FIGURES.map((k) => [k, m[k]]));

describe('choicePricer', () => {
  it('gives a mapping’s figures exactly without its stages, and the mapping evaluateChoices gives', () => {
    let feasible = 0;
    let infeasible = 0;
    fc.assert(
      fc.property(problemArb(4), systemArb({ maxAccel: 2 }), optsDraftArb, (p, sys, od) => {
        const acct = { energyScope: od.energyScope, streamLength: od.streamLength };
        const pricer = choicePricer(sys, p, acct);
        for (const c of allChoices(sys, p).slice(0, 400)) {
          const whole = evaluateChoices(sys, p, c, acct);
          const f = pricer.figures(c);
          expect(f === undefined ? undefined : Object.fromEntries(FIGURES.map((k) => [k, f[k]]))).toEqual(
            figuresOf(whole),
          );
          expect(pricer.mapping(c)).toEqual(whole);
          if (whole) feasible++;
          else infeasible++;
        }
      }),
      { seed: 20261205, numRuns: 60 },
    );
    // The generators reach both (221 and 3,343 with this seed).
    expect(feasible).toBeGreaterThan(150);
    expect(infeasible).toBeGreaterThan(1000);
  });

  it('prices the problems of one spec alike with a shared structure and with their own', () => {
    fc.assert(
      fc.property(
        problemFamilyArb({ min: 2, max: 4 }, 4),
        systemArb({ maxAccel: 2 }),
        optsDraftArb,
        (family, sys, od) => {
          const acct = { energyScope: od.energyScope, streamLength: od.streamLength };
          const shared = planStructure(family[0]!);
          for (const p of family) {
            const withShared = choicePricer(sys, p, acct, shared);
            const own = choicePricer(sys, p, acct);
            for (const c of allChoices(sys, p).slice(0, 200)) {
              expect(withShared.figures(c)).toEqual(own.figures(c));
              expect(withShared.mapping(c)).toEqual(own.mapping(c));
            }
          }
        },
      ),
      { seed: 20261206, numRuns: 40 },
    );
  });

  it('refuses a structure taken from other ops', () => {
    fc.assert(
      fc.property(problemArb(4), problemArb(4), systemArb({ maxAccel: 1 }), (a, b, sys) => {
        const same =
          a.ops.length === b.ops.length &&
          a.ops.every((o, i) => o.id === b.ops[i]!.id && JSON.stringify(o.reads) === JSON.stringify(b.ops[i]!.reads)) &&
          JSON.stringify([...new Set(a.results)].sort()) === JSON.stringify([...new Set(b.results)].sort());
        fc.pre(!same);
        expect(() => choicePricer(sys, b, { energyScope: 'device', streamLength: 1 }, planStructure(a))).toThrow(
          /plan structure of other ops/,
        );
      }),
      { seed: 20261207, numRuns: 50 },
    );
  });
});
