/**
 * The baselines (single device kind, static, HEFT) against the DP on the
 * same cost model.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { typicalImpls } from '../helpers/impls.js';
import { heft, singleKind, staticChoice } from '../../runtime/plan/baselines.js';
import { choicesOf, evaluateChoices, objectiveValue, planPareto, type PlanOptions } from '../../runtime/plan/dp.js';
import type { Mapping, PlanProblem } from '../../runtime/plan/types.js';
import type { DeviceKind, SystemSpec } from '../../runtime/system/types.js';
import { checkMapping, OBJECTIVES, optsDraftArb, problemArb, problemFamilyArb, resolveOpts, systemArb } from './gen.js';
import { goal, STEADY } from '../helpers/goal.js';

const KINDS: readonly DeviceKind[] = ['gpu', 'fpga', 'cpu'];
const figures = (m: Mapping | undefined): number[] | undefined =>
  m ? [m.periodMs, m.latencyMs, m.energyJ, m.powerW] : undefined;
const ample = (sys: SystemSpec): SystemSpec => ({ ...sys, devices: sys.devices.map((d) => ({ ...d, memoryGB: 1e6 })) });

describe('single device kind', () => {
  it('GPU-, FPGA- and CPU-only use only that kind and never beat the DP on the objective', () => {
    const found: Record<DeviceKind, number> = { gpu: 0, fpga: 0, cpu: 0 };
    let strictlyWorse = 0;
    fc.assert(
      fc.property(
        problemArb(6),
        fc.oneof(
          systemArb({ maxAccel: 3 }),
          systemArb({ maxAccel: 3, spread: 'narrow', minGpuSpecs: 1, minFpgaSpecs: 1 }),
        ),
        optsDraftArb,
        (p, sys, od) => {
          const opts = resolveOpts(sys, p, od);
          const best = planPareto(sys, p, opts).pareto[0];
          for (const kind of KINDS) {
            const m = singleKind(sys, p, kind, opts);
            if (!sys.devices.some((d) => d.kind === kind)) {
              expect(m).toBeUndefined();
              continue;
            }
            if (!m) continue;
            found[kind]++;
            for (const s of m.stages) expect(s.kind).toBe(kind);
            checkMapping(sys, p, { ...opts, kinds: [kind] }, m);
            expect(best).toBeDefined();
            expect(objectiveValue(m, opts.objective)).toBeGreaterThanOrEqual(objectiveValue(best!, opts.objective));
            if (objectiveValue(m, opts.objective) > objectiveValue(best!, opts.objective)) strictlyWorse++;
          }
        },
      ),
      { seed: 8080, numRuns: 300 },
    );
    expect(found.gpu).toBeGreaterThan(100);
    expect(found.fpga).toBeGreaterThan(35);
    expect(found.cpu).toBeGreaterThan(100);
    expect(strictlyWorse).toBeGreaterThan(120);
  });

  it('on a system with only a CPU, the DP best is the CPU-only plan (one stage, all ops)', () => {
    let feasible = 0;
    fc.assert(
      fc.property(
        problemArb(6),
        fc.oneof(systemArb({ maxAccel: 0 }), systemArb({ maxAccel: 0, spread: 'narrow' })),
        optsDraftArb,
        (p, sys, od) => {
          const opts = resolveOpts(sys, p, od);
          const out = planPareto(sys, p, opts);
          const cpu = singleKind(sys, p, 'cpu', opts);
          expect(figures(out.pareto[0])).toEqual(figures(cpu));
          // One device instance: the only mapping is every op in one CPU stage.
          expect(out.pareto.length).toBeLessThanOrEqual(1);
          const whole = evaluateChoices(sys, p, [{ start: 0, end: p.ops.length, device: 'cpu', count: 1 }], opts);
          const meets =
            whole &&
            (opts.powerCapW === undefined || whole.powerW <= opts.powerCapW) &&
            (opts.latencyBoundMs === undefined || whole.latencyMs <= opts.latencyBoundMs);
          expect(figures(out.pareto[0])).toEqual(meets ? figures(whole) : undefined);
          if (cpu) {
            feasible++;
            expect(cpu.stages.map((s) => s.ops)).toEqual([p.ops.map((o) => o.id)]);
          }
        },
      ),
      { seed: 1, numRuns: 150 },
    );
    expect(feasible).toBeGreaterThan(75);
  });
});

describe('static', () => {
  it('picks stage choices that evaluateChoices scores on every training input and on a new one', () => {
    let picked = 0;
    let suboptimal = 0;
    fc.assert(
      fc.property(
        problemFamilyArb({ min: 3, max: 5 }, 5),
        fc.oneof(systemArb({ maxAccel: 3 }), systemArb({ maxAccel: 3, spread: 'narrow', minGpuSpecs: 1 })),
        fc.constantFrom(...OBJECTIVES),
        (family, sys0, objective) => {
          // Ample memory: then feasibility depends on the stage structure alone (FPGA resources), not on the input.
          const sys = ample(sys0);
          const training = family.slice(0, -1);
          const fresh = family[family.length - 1]!;
          const opts: PlanOptions = goal(objective);
          const pick = staticChoice(sys, training, opts);
          const bests = training.map((t) => planPareto(sys, t, opts).pareto[0]);
          expect(pick === undefined).toBe(bests.every((b) => b === undefined));
          if (!pick) return;
          picked++;
          // A cover of the ops by consecutive stages on existing devices.
          expect(pick[0]!.start).toBe(0);
          expect(pick[pick.length - 1]!.end).toBe(fresh.ops.length);
          pick.forEach((c, i) => i > 0 && expect(c.start).toBe(pick[i - 1]!.end));
          // It is one of the training optima's choices.
          expect(bests.some((b, i) => b && JSON.stringify(choicesOf(training[i]!, b)) === JSON.stringify(pick))).toBe(
            true,
          );
          training.forEach((t, i) => {
            const m = evaluateChoices(sys, t, pick, opts);
            expect(m).toBeDefined();
            checkMapping(sys, t, opts, m!);
            expect(objectiveValue(m!, objective)).toBeGreaterThanOrEqual(objectiveValue(bests[i]!, objective));
            if (objectiveValue(m!, objective) > objectiveValue(bests[i]!, objective)) suboptimal++;
          });
          const m = evaluateChoices(sys, fresh, pick, opts);
          expect(m).toBeDefined();
          checkMapping(sys, fresh, opts, m!);
        },
      ),
      { seed: 5150, numRuns: 100 },
    );
    expect(picked).toBeGreaterThan(90);
    expect(suboptimal).toBeGreaterThan(10);
  });
});

describe('HEFT', () => {
  function checkHeft(sys: SystemSpec, p: PlanProblem, m: Mapping): void {
    const ids = m.stages.flatMap((s) => s.ops);
    expect([...ids].sort()).toEqual(p.ops.map((o) => o.id).sort());
    expect(new Set(ids).size).toBe(ids.length);
    // A repeat region is one task: on one stage.
    const stageOf = new Map(m.stages.flatMap((s, i) => s.ops.map((id) => [id, i] as const)));
    for (const a of p.ops)
      for (const b of p.ops)
        if (a.group !== undefined && a.group === b.group) expect(stageOf.get(a.id)).toBe(stageOf.get(b.id));
    for (const s of m.stages) {
      const dev = sys.devices.find((d) => d.id === s.device)!;
      expect(dev.kind).toBe(s.kind);
      expect(s.devices).toHaveLength(1);
      expect(Number(s.devices[0]!.slice(dev.id.length))).toBeLessThan(dev.count);
    }
    for (const x of [m.periodMs, m.latencyMs]) expect(Number.isFinite(x) && x > 0).toBe(true);
    expect(Number.isFinite(m.energyJ) && m.energyJ > 0).toBe(true);
  }

  it('covers every op once; period and latency positive and finite', () => {
    fc.assert(
      fc.property(
        problemArb(6),
        fc.oneof(systemArb({ maxAccel: 3 }), systemArb({ maxAccel: 3, spread: 'narrow' })),
        fc.constantFrom(...OBJECTIVES),
        (p, sys, objective) => {
          // Undefined when some task fits no instance (memory, FPGA resources).
          const m = heft(sys, p, goal(objective));
          if (m) checkHeft(sys, p, m);
        },
      ),
      { seed: 2718, numRuns: 200 },
    );
  });

  // HEFT runs the same stage checks as the DP (memory, FPGA resources), so it
  // never reports a schedule the machine cannot run.
  const tiny = { lut: 1000, ff: 1000, bram: 1, uram: 0, dsp: 1 };
  const slowCpu: SystemSpec['devices'][number] = {
    id: 'cpu',
    kind: 'cpu',
    name: 'host',
    count: 1,
    peakGflops: { f32: 10, f64: 10, i32: 10, i64: 10 },
    memBandwidthGBs: 10,
    launchOverheadUs: 0,
    idlePowerW: 10,
    waitingPowerW: 10,
    activePowerW: 20,
    memoryGB: 100,
    threads: 1,
  };
  const gemm: PlanProblem = {
    kernel: 'k',
    paramBytes: new Map([['B', 1e3]]),
    sparseParams: new Set(),
    results: ['C'],
    ops: [
      {
        id: 'op0',
        kind: 'gemm',
        result: 'C',
        dtype: 'f32',
        reads: [{ value: 'B', from: { kind: 'param' } }],
        items: 1e6,
        flops: 1e9,
        bytes: 1e6,
        gathers: 0,
        // 1000 x 500 times 500 x 1000.
        loops: 5e5,
        columns: 1e3,
        resultBytes: 1e3,
        trips: 1,
        impls: typicalImpls('gemm'),
      },
    ],
  };

  it('never places a task on an FPGA whose resources cannot hold its design', () => {
    const sys: SystemSpec = {
      name: 's',
      description: '',
      peerLinks: [],
      constraints: {},
      devices: [
        slowCpu,
        {
          id: 'fpga',
          kind: 'fpga',
          name: 'f',
          count: 1,
          peakGflops: { f32: 800, f64: 300, i32: 1000, i64: 400 },
          memBandwidthGBs: 460,
          launchOverheadUs: 30,
          idlePowerW: 30,
          waitingPowerW: 30,
          activePowerW: 75,
          memoryGB: 8,
          hostLink: { bandwidthGBs: 12, latencyUs: 10 },
          fpga: { clockMHz: 225, hbmChannels: 32, channelBandwidthGBs: 14.375, resources: tiny, bitstreamLoadMs: 1000 },
        },
      ],
    };
    // The DP knows the FPGA cannot run it.
    expect(planPareto(sys, gemm, goal('throughput')).pareto.map((m) => m.stages[0]!.device)).toEqual(['cpu']);
    expect(heft(sys, gemm, STEADY)!.stages[0]!.device).toBe('cpu');
  });

  it('never places a task on a device without the memory for its operands', () => {
    const sys: SystemSpec = {
      name: 's',
      description: '',
      peerLinks: [],
      constraints: {},
      devices: [
        slowCpu,
        {
          id: 'gpu',
          kind: 'gpu',
          name: 'g',
          count: 1,
          peakGflops: { f32: 19500, f64: 9700, i32: 19500, i64: 4875 },
          memBandwidthGBs: 1555,
          launchOverheadUs: 5,
          idlePowerW: 50,
          waitingPowerW: 50,
          activePowerW: 250,
          memoryGB: 1e-6,
          hostLink: { bandwidthGBs: 25, latencyUs: 10 },
        },
      ],
    };
    expect(planPareto(sys, gemm, goal('throughput')).pareto.map((m) => m.stages[0]!.device)).toEqual(['cpu']);
    expect(heft(sys, gemm, STEADY)!.stages[0]!.device).toBe('cpu');
  });
});
