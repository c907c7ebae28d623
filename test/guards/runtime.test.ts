/**
 * The guarded runtime on gcn (paper-1g1f: CPU stages on wasm, GPU and FPGA
 * stages on the sim backend): over 200 input changes mixing real and
 * generated graphs (runs of 1-8 inputs per graph) every output equals the
 * reference interpreter, switches
 * happen and each is logged with its reason; alternating two graphs whose
 * gain is below the switch cost does not flap; an out-of-range input is
 * re-planned and logged; explain, stream, trace and the native backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cudaBackend } from '../../runtime/backends/native.js';
import { TraceRecorder } from '../../runtime/backends/trace.js';
import type { DecisionLogEntry } from '../../runtime/engine/types.js';
import { InputError } from '../../runtime/errors.js';
import { Rng } from '../../runtime/random.js';
import type { DenseTensor } from '../../runtime/tensor.js';
import { gcnFixture, maxRelErr, runtimeFor, type Fixture } from './runtime-fixture.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await gcnFixture();
}, 60_000);
afterAll(() => fx?.wasm.close());

const TOL = 1e-4;

describe('a sequence of 200 input changes', () => {
  it('gives the reference outputs, switches partitions and logs every decision with its reason', () => {
    const lines: string[] = [];
    const rt = runtimeFor(fx, { log: (e) => lines.push(JSON.stringify(e)) });
    const names = [...fx.graphs.keys()];
    const rng = new Rng(5);
    // Runs of 1-8 inputs of one graph, until the graph has changed 200 times.
    const seq: string[] = [];
    for (let changes = -1; changes < 200; ) {
      const g = names[rng.int(names.length)]!;
      if (g === seq[seq.length - 1]) continue;
      changes++;
      for (let k = 1 + rng.int(8); k > 0; k--) seq.push(g);
    }
    let changes = 0;
    for (let i = 0; i < seq.length; i++) {
      if (i > 0 && seq[i] !== seq[i - 1]) changes++;
      const r = rt.run(fx.inputs(seq[i]!), seq[i]);
      expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference(seq[i]!)), `${seq[i]} (input ${i + 1})`).toBeLessThanOrEqual(TOL);
    }
    expect(changes).toBe(200);
    const s = rt.stats();
    expect(s.runs).toBe(seq.length);
    expect(s.switches).toBeGreaterThanOrEqual(2);
    expect(new Set(Object.keys(s.byPartition)).size).toBeGreaterThanOrEqual(2);
    const log = lines.map((l) => JSON.parse(l) as DecisionLogEntry);
    expect(log).toHaveLength(seq.length);
    expect(log).toEqual(s.log);
    const switches = log.filter((e) => e.switched);
    expect(switches).toHaveLength(s.switches);
    for (const e of switches) {
      expect(e.reason).toMatch(/> switch cost|cannot run this input/);
      expect(e.previous!.id).not.toBe(e.running.id);
      expect(e.switchCost!.totalMs).toBeGreaterThanOrEqual(0);
    }
    for (const e of log.filter((x) => x.event === 'stay' && x.selected.id !== x.running.id)) expect(e.reason).toMatch(/<= switch cost|minimum dwell|cannot run/);
    rt.close();
  }, 90_000);
});

describe('hysteresis', () => {
  it('alternating two graphs whose best partitions differ by less than the switch cost does not flap', () => {
    // A pair the guards send to different partitions, with a positive gain below the switch cost.
    const names = [...fx.graphs.keys()];
    let pair: [string, string] | undefined;
    for (const a of names) {
      for (const b of names) {
        if (a === b || pair) continue;
        const probe = runtimeFor(fx);
        probe.run(fx.inputs(a), a);
        const e = probe.explain(fx.inputs(b));
        const gain = e.predicted.running && e.predicted.selected ? e.predicted.running.periodMs - e.predicted.selected.periodMs : 0;
        if (e.selected.id !== e.running?.id && e.inRange && gain > 0 && /<= switch cost/.test(e.reason)) pair = [a, b];
      }
      if (pair) break;
    }
    expect(pair, 'no pair of graphs with different partitions and a gain below the switch cost').toBeDefined();
    const [a, b] = pair!;
    const rt = runtimeFor(fx);
    for (let i = 0; i < 30; i++) {
      const g = i % 2 ? b : a;
      const r = rt.run(fx.inputs(g), g);
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
    for (let i = 0; i < 60; i++) blocks.run(fx.inputs(Math.floor(i / 15) % 2 ? b : a));
    expect(blocks.stats().switches).toBeGreaterThanOrEqual(1);
  }, 60_000);
});

describe('out of range', () => {
  it('re-plans with the DP, logs the reason and still gives the reference outputs', () => {
    const rt = runtimeFor(fx);
    rt.run(fx.inputs('cora.cites'), 'cora');
    const r = rt.run(fx.inputs('cora.cites', 48), 'cora, f = 48');
    expect(r.log.inRange).toBe(false);
    expect(r.log.replan?.reason).toMatch(/outside the guards' ranges: dim\.f = 48 is above the guards' range \[32, 32\]/);
    expect(r.log.replan!.planMs).toBeGreaterThanOrEqual(0);
    expect(maxRelErr(r.outputs.get('Y') as DenseTensor, fx.reference('cora.cites', 48))).toBeLessThanOrEqual(TOL);
    expect(rt.stats().replans).toBe(1);
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

  it('stream overlaps successive inputs across stages on the clock', () => {
    const trace = new TraceRecorder();
    const rt = runtimeFor(fx, { trace });
    const out = rt.stream(Array.from({ length: 10 }, (_, i) => ({ inputs: fx.inputs('ca-GrQc.mtx'), name: `g${i}` })));
    const p = out.results[0]!.predicted;
    expect(out.makespanMs).toBeLessThanOrEqual(10 * p.latencyMs + 1e-9);
    expect(out.makespanMs).toBeGreaterThanOrEqual(p.latencyMs + 9 * p.periodMs - 1e-9);
    if (out.results[0]!.partition.label.includes('|')) expect(out.makespanMs).toBeLessThan(10 * p.latencyMs);
    const ev = trace.toJSON().traceEvents;
    expect(ev.filter((x) => x.ph === 'X').length).toBeGreaterThanOrEqual(10);
    expect(JSON.parse(JSON.stringify(trace.toJSON())).traceEvents.length).toBe(ev.length);
  });

  it('a partition on a GPU served by the cuda backend says it is not available on this host', () => {
    const rt = runtimeFor(fx, { backends: { cpu: fx.wasm, gpu: cudaBackend({ library: 'libgcn_cuda.so' }), fpga: fx.wasm } });
    const onGpu = [...fx.graphs.keys()].find((g) => rt.explain(fx.inputs(g)).selected.label.includes('gpu'));
    expect(onGpu).toBeDefined();
    expect(() => rt.run(fx.inputs(onGpu!))).toThrow(InputError);
    expect(() => rt.run(fx.inputs(onGpu!))).toThrow(/DY3040.*not available on this host/);
  });

  it('inputs that do not fit the kernel are refused with DY3042 / DY3013', () => {
    const rt = runtimeFor(fx);
    const x = fx.inputs('karate.mtx');
    expect(() => rt.run({ ...x, X: fx.inputs('jazz.mtx')['X']! })).toThrow(/DY3042.*dimension 1 is n = 34/);
    const { W2: _w2, ...missing } = x;
    void _w2;
    expect(() => rt.run(missing)).toThrow(/DY3013/);
  });
});
