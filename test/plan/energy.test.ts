/**
 * Energy both ways (runtime/plan/figures.ts). Device energy: the instances a
 * mapping uses draw their active power while their kernels run and their
 * waiting (powered-up) power for the rest of the time per input. System
 * energy: that plus every other instance idle, the host included. The DP is
 * exact in both scopes (the instances used are part of its state, so both
 * are monotone functions of its labels), and the scope decides: counting
 * the rest of the box idle favours the mapping that finishes soonest.
 */
import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateChoices, planPareto } from '../../runtime/plan/dp.js';
import { ENERGY_SCOPES, type Accounting } from '../../runtime/plan/figures.js';
import type { PlanProblem } from '../../runtime/plan/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { features, spmv } from './devices.js';
import { expectExact, optsDraftArb, problemArb, resolveOpts, systemArb } from './gen.js';

const paper = (): SystemSpec => loadSystemFile(join(REPO_ROOT, 'systems', 'paper-1g1f.json'));
const f = features(100_000, 8, 0.5, 32, 0.02);
const p: PlanProblem = {
  kernel: 'k',
  paramBytes: new Map([
    ['A', f.nnz * 8],
    ['x', f.rows * 4],
  ]),
  sparseParams: new Set(['A']),
  results: ['op0_y'],
  ops: [spmv(f)],
};
const device: Accounting = { energyScope: 'device', streamLength: 'unbounded' };

describe('device and system energy', () => {
  it('device energy: active power while computing, waiting power for the rest of the time per input; system adds the unused instances idle', () => {
    const sys = paper();
    const [cpu, gpu, fpga] = sys.devices;
    for (const streamLength of [1, 12, 'unbounded'] as const) {
      const m = evaluateChoices(sys, p, [{ start: 0, end: 1, device: 'gpu', count: 1 }], {
        energyScope: 'device',
        streamLength,
      })!;
      const busy = m.stages[0]!.computeMs;
      const dev = (busy * gpu!.activePowerW + (m.perInputMs - busy) * gpu!.waitingPowerW) / 1e3;
      expect(m.deviceEnergyJ).toBeCloseTo(dev, 12);
      expect(m.systemEnergyJ).toBeCloseTo(dev + (m.perInputMs * (cpu!.idlePowerW + fpga!.idlePowerW)) / 1e3, 12);
      expect(m.energyJ).toBe(m.deviceEnergyJ);
    }
  });

  it('an instance that waits inside the pipeline draws its waiting power, not its idle power', () => {
    const sys = paper();
    const m = evaluateChoices(sys, p, [{ start: 0, end: 1, device: 'gpu', count: 1 }], device)!;
    const deep = {
      ...sys,
      devices: sys.devices.map((d) => (d.kind === 'gpu' ? { ...d, waitingPowerW: d.idlePowerW } : d)),
    };
    const m2 = evaluateChoices(deep, p, [{ start: 0, end: 1, device: 'gpu', count: 1 }], device)!;
    const gpu = sys.devices[1]!;
    // The SpMV's copies take longer than its kernel: the GPU waits most of the period.
    const waiting = m.perInputMs - m.stages[0]!.computeMs;
    expect(waiting).toBeGreaterThan(m.stages[0]!.computeMs);
    expect(m.deviceEnergyJ - m2.deviceEnergyJ).toBeCloseTo((waiting * (gpu.waitingPowerW - gpu.idlePowerW)) / 1e3, 12);
  });

  it('the scope moves the decision: device energy favours the GPU that draws less than the host, system energy the host that finishes first', () => {
    const sys = paper();
    const pick = (energyScope: 'device' | 'system') =>
      planPareto(sys, p, { objective: 'energy', energyScope, streamLength: 'unbounded' }).pareto[0]!;
    const [d, s] = [pick('device'), pick('system')];
    expect(d.stages.map((x) => x.device)).toEqual(['gpu']);
    expect(s.stages.map((x) => x.device)).toEqual(['cpu']);
    // Each pick is the better one in its own scope, and the slower one is the device-scope pick.
    expect(d.deviceEnergyJ).toBeLessThan(s.deviceEnergyJ);
    expect(s.systemEnergyJ).toBeLessThan(d.systemEnergyJ);
    expect(d.perInputMs).toBeGreaterThan(s.perInputMs);
  });

  it('the DP equals exhaustive enumeration in both scopes', () => {
    let differ = 0;
    fc.assert(
      fc.property(
        problemArb(5, 'narrow'),
        systemArb({ maxAccel: 3, spread: 'narrow', minGpuSpecs: 1, minFpgaSpecs: 1 }),
        optsDraftArb,
        (q, sys, od) => {
          const picks = ENERGY_SCOPES.map(
            (energyScope) => expectExact(sys, q, resolveOpts(sys, q, { ...od, objective: 'energy', energyScope }))[0],
          );
          if (
            picks[0] &&
            picks[1] &&
            picks[0].stages.map((s) => `${s.device}x${s.count}:${s.ops.join()}`).join('|') !==
              picks[1].stages.map((s) => `${s.device}x${s.count}:${s.ops.join()}`).join('|')
          )
            differ++;
        },
      ),
      { seed: 61, numRuns: 150 },
    );
    // The scope is live in generated systems too.
    expect(differ).toBeGreaterThan(5);
  });
});
