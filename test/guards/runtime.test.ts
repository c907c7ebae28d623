/**
 * The guarded runtime on gcn (paper-1g1f: every stage executes, CPU stages
 * on wasm, GPU and FPGA stages on wasm stand-ins with memories of their own,
 * test/helpers/loopback.ts; the native libraries are tested in test/native):
 * over 200 input changes mixing real and
 * generated graphs (runs of 1-8 inputs per graph) every output equals the
 * reference interpreter, switches
 * happen and each is logged with its reason; alternating two graphs whose
 * gain is below the switch cost does not flap; an out-of-range input is
 * re-planned and logged; explain, stream, trace and the native backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceRecorder } from '../../runtime/engine/trace.js';
import { closeBackends, DeviceCallError, type StageBackend } from '../../runtime/exec/index.js';
import { createGuardedRuntime, type GuardedRuntime } from '../../runtime/engine/runtime.js';
import type { DecisionLogEntry } from '../../runtime/engine/types.js';
import { InputError } from '../../runtime/errors.js';
import { Rng } from '../../runtime/random.js';
import type { DenseTensor, Tensor } from '../../runtime/tensor.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { evaluateChoices, objectiveValue, planPareto } from '../../runtime/plan/dp.js';
import { planOptions } from '../../runtime/guards/build.js';
import { bindInputs } from '../../runtime/engine/inputs.js';
import { system } from './fixtures.js';
import { STEADY } from '../helpers/goal.js';
import { gcnFixture, maxRelErr, runtimeFor, type Fixture } from './runtime-fixture.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await gcnFixture();
}, 60_000);
afterAll(() => fx && closeBackends(fx.backends));

const TOL = 1e-4;

/** Runs a stream of jazz inputs through each(): the names delivered (each output checked) and the error it ended on. */
async function deliveredJazz(
  rt: GuardedRuntime,
  seq: Iterable<{ inputs: Record<string, Tensor>; name: string }>,
): Promise<{ got: string[]; error: unknown }> {
  const got: string[] = [];
  try {
    for await (const r of rt.each(seq)) {
      expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference('jazz.mtx'))).toBeLessThanOrEqual(TOL);
      got.push(r.log.input!);
    }
  } catch (e) {
    return { got, error: e };
  }
  return { got, error: undefined };
}

describe('a sequence of 200 input changes', () => {
  it('gives the reference outputs, switches partitions and logs every decision with its reason', async () => {
    const lines: string[] = [];
    const rt = runtimeFor(fx, { log: (e) => lines.push(JSON.stringify(e)) });
    const names = [...fx.graphs.keys()];
    const rng = new Rng(5);
    // Runs of 1-8 inputs of one graph, until the graph has changed 200 times.
    const seq: string[] = [];
    for (let changes = -1; changes < 200;) {
      const g = names[rng.int(names.length)]!;
      if (g === seq[seq.length - 1]) continue;
      changes++;
      for (let k = 1 + rng.int(8); k > 0; k--) seq.push(g);
    }
    let changes = 0;
    for (let i = 0; i < seq.length; i++) {
      if (i > 0 && seq[i] !== seq[i - 1]) changes++;
      const r = await rt.run(fx.inputs(seq[i]!), seq[i]);
      expect(r.stages.length).toBe(r.mapping.stages.length);
      expect(
        maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference(seq[i]!)),
        `${seq[i]} (input ${i + 1})`,
      ).toBeLessThanOrEqual(TOL);
    }
    expect(changes).toBe(200);
    const s = rt.stats();
    expect(s.runs).toBe(seq.length);
    expect(s.switches).toBeGreaterThanOrEqual(2);
    expect(new Set(Object.keys(s.byPartition)).size).toBeGreaterThanOrEqual(2);
    const log = lines.map((l) => JSON.parse(l) as DecisionLogEntry);
    expect(log).toHaveLength(seq.length);
    expect(log).toEqual(s.log);
    // Every decision measured; a graph seen before reuses its kept choice (a re-planned one from its third input).
    expect(log.every((e) => e.decisionMs > 0)).toBe(true);
    expect(log.filter((e) => e.decisionReused)).toHaveLength(s.decisionsReused);
    expect(seq.length - s.decisionsReused).toBeLessThanOrEqual(2 * names.length);
    expect(s.decisionMs).toBeCloseTo(
      log.reduce((a, e) => a + e.decisionMs, 0),
      6,
    );
    const switches = log.filter((e) => e.switched);
    expect(switches).toHaveLength(s.switches);
    for (const e of switches) {
      expect(e.reason).toMatch(/> switch cost|cannot run this input/);
      expect(e.previous!.id).not.toBe(e.running.id);
      expect(e.switchCost!.totalMs).toBeGreaterThanOrEqual(0);
    }
    for (const e of log.filter((x) => x.event === 'stay' && x.selected.id !== x.running.id))
      expect(e.reason).toMatch(/<= switch cost|minimum dwell|cannot run/);
    rt.close();
  }, 90_000);
});

describe('hysteresis', () => {
  it('alternating two graphs whose best partitions differ by less than the switch cost does not flap', async () => {
    // A pair the guards send to different partitions, with a positive gain below the switch cost.
    const names = [...fx.graphs.keys()];
    let pair: [string, string] | undefined;
    for (const a of names) {
      for (const b of names) {
        if (a === b || pair) continue;
        const probe = runtimeFor(fx);
        await probe.run(fx.inputs(a), a);
        const e = probe.explain(fx.inputs(b));
        const gain =
          e.predicted.running && e.predicted.selected
            ? e.predicted.running.periodMs - e.predicted.selected.periodMs
            : 0;
        probe.close();
        if (e.selected.id !== e.running?.id && e.inRange && gain > 0 && /<= switch cost/.test(e.reason)) pair = [a, b];
      }
      if (pair) break;
    }
    expect(pair, 'no pair of graphs with different partitions and a gain below the switch cost').toBeDefined();
    const [a, b] = pair!;
    const rt = runtimeFor(fx);
    for (let i = 0; i < 30; i++) {
      const g = i % 2 ? b : a;
      const r = await rt.run(fx.inputs(g), g);
      expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference(g))).toBeLessThanOrEqual(TOL);
    }
    const log = rt.stats().log;
    expect(rt.stats().switches).toBe(0);
    const declined = log.filter((e) => e.selected.id !== e.running.id);
    expect(declined.length).toBeGreaterThanOrEqual(14);
    for (const e of declined) {
      expect(e.reason).toMatch(/<= switch cost/);
      expect(e.gainPerRun! * e.expectedRuns!).toBeLessThanOrEqual(e.switchCost!.totalMs);
    }
    // The same two graphs in long runs: switching pays off, and the policy does switch.
    const blocks = runtimeFor(fx);
    for (let i = 0; i < 60; i++) await blocks.run(fx.inputs(Math.floor(i / 15) % 2 ? b : a));
    expect(blocks.stats().switches).toBeGreaterThanOrEqual(1);
    rt.close();
    blocks.close();
  }, 60_000);
});

describe('out of range', () => {
  it('re-plans with the DP, logs the reason and still gives the reference outputs', async () => {
    const rt = runtimeFor(fx);
    await rt.run(fx.inputs('cora.cites'), 'cora');
    const r = await rt.run(fx.inputs('cora.cites', 48), 'cora, f = 48');
    expect(r.log.inRange).toBe(false);
    expect(r.log.replan?.reason).toMatch(
      /outside the guards' ranges: dim\.f = 48 is above the guards' range \[32, 32\]/,
    );
    expect(r.log.replan!.planMs).toBeGreaterThanOrEqual(0);
    expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference('cora.cites', 48))).toBeLessThanOrEqual(TOL);
    expect(rt.stats().replans).toBe(1);
    expect(r.log.replan!.reason).not.toMatch(/reused/);
    // The same input again: its plan is reused, not planned again.
    const again = await rt.run(fx.inputs('cora.cites', 48), 'cora, f = 48, again');
    expect(again.log.replan).toMatchObject({
      planMs: 0,
      reason: expect.stringMatching(/planned for this input before: the plan is reused/),
    });
    expect(again.log.selected.id).toBe(r.log.selected.id);
    rt.close();
  });
});

describe('out of range, with backends for some device kinds only', () => {
  it('re-plans onto the kinds a backend serves (it planned onto any kind, then could not run it: DY3041)', async () => {
    const rt = runtimeFor(fx, { backends: { cpu: fx.backends.cpu } });
    const r = await rt.run(fx.inputs('cora.cites', 48), 'cora, f = 48, the CPU alone');
    expect(r.log.inRange).toBe(false);
    expect(r.log.replan).toBeDefined();
    expect(
      r.stages.every((s) => s.devices.every((d) => d.startsWith('cpu'))),
      JSON.stringify(r.stages),
    ).toBe(true);
    expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference('cora.cites', 48))).toBeLessThanOrEqual(TOL);
    rt.close();
  });
});

describe('a backend that sees fewer devices than the system', () => {
  it('re-plans on the instances it serves: gpu0 and fpga0 of two each, not the CPU alone', async () => {
    // paper-2g2f has two GPUs and two FPGAs; the loopbacks serve one of each.
    const sys = system('paper-2g2f');
    const rt = runtimeFor(fx, { system: sys });
    const inputs = fx.inputs('cora.cites', 48);
    const r = await rt.run(inputs, 'cora, f = 48');
    expect(r.log.replan).toBeDefined();
    const problem = bindProblem(fx.config.spec, bindInputs('gcn', fx.config.params, inputs).binding);
    const opts = { ...planOptions(sys, fx.plan), instances: { cpu: 1, gpu: 1, fpga: 1 } };
    const want = planPareto(sys, problem, opts).pareto[0]!;
    expect(r.stages.map((s) => s.devices)).toEqual(want.stages.map((s) => s.devices));
    const used = r.stages.flatMap((s) => s.devices);
    expect(
      used.some((d) => d !== 'cpu0'),
      used.join(' '),
    ).toBe(true);
    expect(
      used.every((d) => ['cpu0', 'gpu0', 'fpga0'].includes(d)),
      used.join(' '),
    ).toBe(true);
    expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference('cora.cites', 48))).toBeLessThanOrEqual(TOL);
    rt.close();
  });

  it('a re-plan that only unserved devices make feasible is DY3041 naming them; none feasible at all is DY3030', async () => {
    // Neither the CPU nor the FPGA can hold the input: only the GPU could run it, and no backend serves it.
    const tight = (ids: string[]) => {
      const sys = structuredClone(system('paper-1g1f'));
      for (const d of sys.devices) if (ids.includes(d.id)) d.memoryGB = 1e-6;
      return sys;
    };
    const inputs = fx.inputs('cora.cites', 48);
    const rt = runtimeFor(fx, { system: tight(['cpu', 'fpga']), backends: { cpu: fx.wasm } });
    await expect(rt.run(inputs)).rejects.toThrow(
      /DY3041.*only with devices no backend serves \(gpu: 0 of 1 instances served; fpga: 0 of 1/,
    );
    rt.close();
    const none = runtimeFor(fx, { system: tight(['cpu', 'gpu', 'fpga']), backends: { cpu: fx.wasm } });
    await expect(none.run(inputs)).rejects.toThrow(/DY3030.*no mapping of kernel gcn is feasible/);
    none.close();
  });
});

describe('the same input again', () => {
  it('reuses the choice made for its pattern and dims: no guard runs, the same pick, path and report', async () => {
    let calls = 0;
    const counted = {
      ...fx.config,
      guard: {
        throughput: (f: Parameters<typeof fx.config.guard.throughput & object>[0]) => {
          calls++;
          return fx.config.guard.throughput!(f);
        },
      },
    };
    const rt = runtimeFor({ ...fx, config: counted });
    calls = 0;
    const first = rt.explain(fx.inputs('ca-GrQc.mtx'));
    expect(calls).toBe(1);
    const again = rt.explain(fx.inputs('ca-GrQc.mtx'));
    expect(calls).toBe(1);
    expect(again.selected.id).toBe(first.selected.id);
    expect(again.path).toEqual(first.path);
    // New values on the same pattern (new X, the same A arrays) are the same problem; a new pattern is not.
    const A = fx.graphs.get('ca-GrQc.mtx')!;
    rt.explain({ ...fx.inputs('ca-GrQc.mtx'), X: fx.inputs('ca-GrQc.mtx').X });
    expect(calls).toBe(1);
    rt.explain({ ...fx.inputs('ca-GrQc.mtx'), A: { ...A, rowPtr: A.rowPtr.slice(), colIdx: A.colIdx.slice() } });
    expect(calls).toBe(2);
    // Other dims are another problem.
    rt.explain(fx.inputs('ca-GrQc.mtx', 48));
    expect(calls).toBe(3);
    // An out-of-range input: re-planned once, its reused plan reported the same from then on.
    const before = rt.stats();
    const first2 = await rt.run(fx.inputs('cora.cites', 48), 'cora, f = 48');
    const second = await rt.run(fx.inputs('cora.cites', 48), 'again');
    const third = await rt.run(fx.inputs('cora.cites', 48), 'and again');
    // Each decision is measured and says whether the kept choice was reused: a re-planned pattern's is kept from its
    // second input on (then its report says the plan is reused), so only the third reuses it.
    expect([first2, second, third].map((x) => x.log.decisionReused)).toEqual([false, false, true]);
    for (const x of [first2, second, third]) expect(x.log.decisionMs).toBeGreaterThan(0);
    const after = rt.stats();
    expect(after.decisionsReused - before.decisionsReused).toBe(1);
    expect(after.decisionMs - before.decisionMs).toBeCloseTo(
      first2.log.decisionMs + second.log.decisionMs + third.log.decisionMs,
      9,
    );
    expect(third.log.replan).toEqual(second.log.replan);
    expect(third.log.selected.id).toBe(second.log.selected.id);
    expect(third.log.replan!.planMs).toBe(0);
    rt.close();
  });
});

describe('a leaf that leaves partitions open', () => {
  it('the cost model weighs them on each input: the lowest predicted period runs, and the path says so', () => {
    // Every partition open at one leaf: the pick must be the model's best of them all, whatever the tree would say.
    const open = { ...fx.plan, tree: { leaf: 0, also: fx.plan.partitions.slice(1).map((p) => p.id) } };
    const rt = runtimeFor({
      ...fx,
      config: { ...fx.config, guards: { throughput: open }, guard: { throughput: () => 0 } },
    });
    const sys = system('paper-1g1f');
    const picks = new Set<number>();
    for (const g of ['karate.mtx', 'cora.cites', 'gen-uniform-2000x40', 'facebook_combined.txt']) {
      const e = rt.explain(fx.inputs(g));
      if (!e.inRange) continue;
      const p = bindProblem(fx.config.spec, bindInputs('gcn', fx.config.params, fx.inputs(g)).binding);
      const score = (id: number): number =>
        objectiveValue(evaluateChoices(sys, p, fx.plan.partitions[id]!.choices, STEADY)!, 'throughput');
      const best = Math.min(...fx.plan.partitions.map((q) => score(q.id)));
      expect(score(e.selected.id)).toBeCloseTo(best, 9);
      expect(e.path.at(-1)).toMatch(new RegExp(`^cost model: partition ${e.selected.id} of 0, `));
      picks.add(e.selected.id);
    }
    expect(picks.size).toBeGreaterThan(0);
  });
});

describe('explain, stream, trace, backends', () => {
  it('explain reports features, path, pick and predictions without running or changing state', () => {
    const rt = runtimeFor(fx);
    const e = rt.explain(fx.inputs('jazz.mtx'));
    expect(e.features['A.nnz']).toBe(fx.graphs.get('jazz.mtx')!.values.length);
    expect(e.path.length).toBeGreaterThan(0);
    expect(e.reason).toBe('initial partition');
    expect(e.predicted.selected!.periodMs).toBeGreaterThan(0);
    expect(rt.stats().runs).toBe(0);
  });

  it('stream overlaps successive inputs across stages on the model clock; the trace has the measured stages beside', async () => {
    const trace = new TraceRecorder();
    const rt = runtimeFor(fx, { trace });
    const out = await rt.stream(
      Array.from({ length: 10 }, (_, i) => ({ inputs: fx.inputs('ca-GrQc.mtx'), name: `g${i}` })),
    );
    const p = out.results[0]!.predicted;
    expect(out.makespanMs).toBeLessThanOrEqual(10 * p.latencyMs + 1e-9);
    expect(out.makespanMs).toBeGreaterThanOrEqual(p.latencyMs + 9 * p.periodMs - 1e-9);
    if (out.results[0]!.partition.label.includes('|')) expect(out.makespanMs).toBeLessThan(10 * p.latencyMs);
    const ev = trace.toJSON().traceEvents;
    expect(ev.filter((x) => x.ph === 'X').length).toBeGreaterThanOrEqual(10);
    expect(JSON.parse(JSON.stringify(trace.toJSON())).traceEvents.length).toBe(ev.length);
    const measured = ev.filter((x) => x.ph === 'X' && x.cat === 'measured');
    expect(measured.length).toBe(
      out.results.reduce((a, r) => a + r.stages.reduce((b, st) => b + st.devices.length, 0), 0),
    );
    for (const r of out.results)
      expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference('ca-GrQc.mtx'))).toBeLessThanOrEqual(TOL);
    rt.close();
  });

  it('inputs that do not fit the kernel are refused with DY3042 / DY3013', async () => {
    const rt = runtimeFor(fx);
    const x = fx.inputs('karate.mtx');
    await expect(rt.run({ ...x, X: fx.inputs('jazz.mtx')['X']! })).rejects.toThrow(/DY3042.*dimension 1 is n = 34/);
    const { W2: _w2, ...missing } = x;
    void _w2;
    await expect(rt.run(missing)).rejects.toThrow(/DY3013/);
    await expect(rt.run(missing)).rejects.toBeInstanceOf(InputError);
    rt.close();
  });
});

describe('fallbacks and faults', () => {
  /** Two hand-made partitions: all on the GPU (0), all on the CPU (1), each the other's fallback. */
  const twoWay = (fallbacks = true): Fixture['config'] => {
    const n = fx.config.spec.ops.length;
    const parts = [
      {
        id: 0,
        choices: [{ start: 0, end: n, device: 'gpu', count: 1 }],
        label: 'gpu x1 [all]',
        fallbacks: fallbacks ? [1] : [],
      },
      {
        id: 1,
        choices: [{ start: 0, end: n, device: 'cpu', count: 1 }],
        label: 'cpu x1 [all]',
        fallbacks: fallbacks ? [0] : [],
      },
    ];
    const guards = { ...fx.plan, partitions: parts, tree: { leaf: 0 }, ranges: {} };
    return { ...fx.config, guards: { throughput: guards }, guard: { throughput: () => 0 } };
  };
  /** The loopback GPU with one call made to fail: alloc for want of memory, or the n-th launch. */
  const failing = (how: 'alloc' | number): StageBackend => {
    const gpu = fx.backends.gpu!;
    let launches = 0;
    return {
      ...gpu,
      alloc: (dev, bytes) => {
        if (how === 'alloc') throw new DeviceCallError('wasm', 'alloc', -5, 'out of device memory (test)', true);
        return gpu.alloc(dev, bytes);
      },
      launch: (...a) =>
        ++launches === how
          ? Promise.reject(new DeviceCallError('wasm', 'launch', 700, 'illegal address (test)'))
          : gpu.launch(...a),
    };
  };

  it('a device kind no backend serves: the fallback runs, logged; none left: DY3041 naming what to pass', async () => {
    const rt = createGuardedRuntime(twoWay(), { system: system('paper-1g1f'), backends: { cpu: fx.wasm } });
    const r = await rt.run(fx.inputs('jazz.mtx'));
    expect(r.log.fallback).toBe('partition 0 needs a device no backend serves; fallback 1');
    expect(r.stages.map((s) => s.backend)).toEqual(['wasm']);
    expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference('jazz.mtx'))).toBeLessThanOrEqual(TOL);
    const none = createGuardedRuntime(twoWay(false), { system: system('paper-1g1f'), backends: { cpu: fx.wasm } });
    await expect(none.run(fx.inputs('jazz.mtx'))).rejects.toThrow(
      /DY3041.*partition 0 \(gpu x1 \[all\]\) runs stages on gpu.*pass a backend/,
    );
    rt.close();
    none.close();
  });

  it('a device allocation that fails: the next fallback runs the input, logged; without one, DY3046', async () => {
    const rt = createGuardedRuntime(twoWay(), {
      system: system('paper-1g1f'),
      backends: { cpu: fx.wasm, gpu: failing('alloc') },
    });
    const r = await rt.run(fx.inputs('jazz.mtx'), 'jazz');
    expect(r.partition.id).toBe(1);
    expect(r.log.fallback).toMatch(/partition 0: gpu0 ran out of memory \(out of device memory \(test\)\); fallback 1/);
    expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference('jazz.mtx'))).toBeLessThanOrEqual(TOL);
    expect(rt.stats().fallbacks).toBe(1);
    const none = createGuardedRuntime(twoWay(false), {
      system: system('paper-1g1f'),
      backends: { cpu: fx.wasm, gpu: failing('alloc') },
    });
    await expect(none.run(fx.inputs('jazz.mtx'), 'jazz')).rejects.toThrow(/jazz: error DY3046: gpu0 ran out of memory/);
    rt.close();
    none.close();
  });

  it('a device call that fails mid-stream: the error names input, stage, op, device and backend; earlier outputs stay delivered', async () => {
    const rt = createGuardedRuntime(twoWay(), {
      system: system('paper-1g1f'),
      backends: { cpu: fx.wasm, gpu: failing(3 * fx.config.spec.ops.length + 2) },
    });
    const seq = Array.from({ length: 8 }, (_, i) => ({ inputs: fx.inputs('jazz.mtx'), name: `jazz #${i}` }));
    const { got, error } = await deliveredJazz(rt, seq);
    expect(got).toEqual(['jazz #0', 'jazz #1', 'jazz #2']);
    expect(error).toBeInstanceOf(InputError);
    expect(String((error as Error).message)).toMatch(
      /^jazz #3: error DY3045: stage 0 \[op0, op1, op2, op3\] of partition 0 \(gpu x1 \[all\]\): op op1 on gpu0 \(wasm\): launch failed with code 700: illegal address \(test\)/,
    );
    rt.close();
  });
});

// Regression: an input refused at admission (DY3042) threw away the inputs already in flight before it.
describe('a malformed input mid-stream', () => {
  it('the inputs admitted before it are delivered, then its error', async () => {
    const rt = runtimeFor(fx);
    const good = (i: number): { inputs: Record<string, Tensor>; name: string } => ({
      inputs: fx.inputs('jazz.mtx'),
      name: `jazz #${i}`,
    });
    const bad = { ...fx.inputs('jazz.mtx') };
    bad.X = { format: 'dense', shape: [7], data: new Float64Array(7) };
    const seq = [good(0), good(1), good(2), { inputs: bad, name: 'bad' }, good(4)];
    const { got, error } = await deliveredJazz(rt, seq);
    expect(got).toEqual(['jazz #0', 'jazz #1', 'jazz #2']);
    expect((error as InputError).code).toBe('DY3042');
    // Regression: null (or a tensor where the record of inputs goes) was a bare TypeError.
    await expect(rt.run(null as never)).rejects.toThrow(
      /the inputs of kernel gcn: error DY3042: expected an object of inputs by parameter name \(A, X, W1, W2\), got null/,
    );
    expect(() => rt.explain([] as never)).toThrow(/DY3042: .* got an array/);
    rt.close();
  });
});

// Regression: every decision stayed in stats().log, about 1-3 KB an input, for the runtime's whole life.
describe('stats().log keeps the latest keepLog decisions', () => {
  it('a ring of the latest, oldest first; options.log and the counts see every decision', async () => {
    const names = [...fx.graphs.keys()];
    const seen: DecisionLogEntry[] = [];
    const rt = runtimeFor(fx, { keepLog: 3, log: (e) => seen.push(e) });
    for (let i = 0; i < 7; i++) await rt.run(fx.inputs(names[i % names.length]!), names[i % names.length]!);
    const s = rt.stats();
    expect(s.runs).toBe(7);
    expect(seen.map((e) => e.seq)).toEqual([...Array(7).keys()].map((k) => seen[0]!.seq + k));
    expect(s.log.map((e) => e.seq)).toEqual(seen.slice(-3).map((e) => e.seq));
    rt.close();
    const none = runtimeFor(fx, { keepLog: 0 });
    await none.run(fx.inputs(names[0]!), names[0]!);
    expect(none.stats().log).toEqual([]);
    none.close();
    expect(() => runtimeFor(fx, { keepLog: -1 })).toThrow(/keepLog must be a whole number >= 0, got -1/);
  });
});
