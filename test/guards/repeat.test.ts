/**
 * The chooser's shortcut for the previous call's own inputs (runtime/engine/choose.ts `lastKept`): the same inputs
 * again under the same objective get the kept choice without a problem lookup, and must get exactly what the lookup
 * would give (the same problem, partition, path and report), keep the memo's notion of a pattern seen again (its
 * prices kept when another pattern comes between), and stand aside on a new input or objective.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { wasmManifest } from '../../codegen/wasm/emit.js';
import { Chooser, type Choice } from '../../runtime/engine/choose.js';
import type { RuntimeConfig } from '../../runtime/engine/types.js';
import { buildGuards, sampleBindings, treeGuards, type GuardPlans } from '../../runtime/guards/index.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { goal } from '../helpers/goal.js';
import { loopKernel } from '../wasm/compare.js';
import { gcnBinding, gcnSpec, graph, root, system } from './fixtures.js';
import { throughputConfig } from './runtime-fixture.js';

const sys = system('paper-1g1f');
const GRAPHS = ['jazz.mtx', 'west0479.mtx', 'olm1000.mtx', '1138_bus.mtx'];
let cfg: RuntimeConfig;

beforeAll(() => {
  const spec = gcnSpec();
  const kernel = loopKernel(readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8'), 'gcn.dy');
  const samples = sampleBindings(
    GRAPHS.map((g) => gcnBinding(graph(g), 32, 32, 16)),
    { perProfile: 6, shapeDims: { A: ['n', 'n'] } },
  );
  const plans: GuardPlans = {
    throughput: buildGuards(spec, sys, samples, goal('throughput')),
    energy: buildGuards(spec, sys, samples, goal('energy')),
  };
  cfg = {
    ...throughputConfig(kernel, spec, wasmManifest(kernel, [], true), plans.throughput!),
    guards: plans,
    guard: treeGuards(plans, 'throughput'),
  };
}, 120_000);

const dense = (rows: number, cols: number): DenseTensor => ({
  format: 'dense',
  shape: [rows, cols],
  data: new Float64Array(rows * cols),
});
const inputsOf = (A: CsrMatrix): Record<string, Tensor> => ({
  A,
  X: dense(A.rows, 32),
  W1: dense(32, 32),
  W2: dense(32, 16),
});

/** What a choice reports, beside the call's own binding and features. */
const report = (c: Choice) => ({
  objective: c.objective,
  selected: c.selected.id,
  path: c.path,
  oor: c.oor,
  replanInfo: c.replanInfo,
  fallback: c.fallback,
});

describe("the chooser's repeat of the previous call", () => {
  it('gives what the lookup gives, on every graph, in range or re-planned', () => {
    for (const g of GRAPHS) {
      const chooser = new Chooser(cfg, sys, () => true);
      const x = inputsOf(graph(g));
      const first = chooser.choose(x);
      const second = chooser.choose(x);
      const third = chooser.choose({ ...x });
      for (const c of [second, third]) {
        expect(c.b).toBe(first.b);
        expect(c.problem).toBe(first.problem);
        // The lookup the repeat skips finds the same problem.
        expect(chooser.memo.problem(c.b.binding)).toBe(c.problem);
      }
      expect(report(third)).toEqual(report(second));
      expect(third.fresh).toBe(false);
      // Its own copies of the kept lists: a caller that edits them edits nothing kept.
      third.path.push('edited');
      expect(chooser.choose(x).path).toEqual(second.path);
    }
  });

  it('counts the repeat as the pattern seen again: its prices are kept when another pattern comes between', () => {
    const chooser = new Chooser(cfg, sys, () => true);
    const a = inputsOf(graph('olm1000.mtx'));
    const b = inputsOf(graph('jazz.mtx'));
    chooser.choose(a);
    const again = chooser.choose(a);
    const m1 = chooser.memo.mapping(again.problem, again.selected);
    const other = chooser.choose(b);
    chooser.memo.mapping(other.problem, other.selected);
    // Not kept, the first pattern's partition would be priced again into a new mapping.
    expect(chooser.memo.mapping(again.problem, again.selected)).toBe(m1);
  });

  it('finds a graph given again in new arrays by its features: the kept choice from its third input on', () => {
    for (const g of GRAPHS) {
      const chooser = new Chooser(cfg, sys, () => true);
      const m = graph(g);
      const copy = (): CsrMatrix => ({
        ...m,
        rowPtr: m.rowPtr.slice(),
        colIdx: m.colIdx.slice(),
        values: m.values.slice(),
      });
      const cs = [1, 2, 3, 4].map(() => chooser.choose(inputsOf(copy())));
      // The first input's record is met again by value from the second on; the problem kept by value from the third.
      expect(cs.map((c) => c.fresh)).toEqual([true, true, false, false]);
      expect(cs[3]!.problem).toBe(cs[2]!.problem);
      expect(cs[1]!.problem).not.toBe(cs[0]!.problem);
      for (const c of cs) {
        expect(c.selected.id).toBe(cs[0]!.selected.id);
        expect(c.path).toEqual(cs[0]!.path);
        expect(c.oor).toEqual(cs[0]!.oor);
      }
      // Another pattern between: still found.
      chooser.choose(inputsOf(graph(g === 'jazz.mtx' ? 'olm1000.mtx' : 'jazz.mtx')));
      const again = chooser.choose(inputsOf(copy()));
      expect(again.fresh).toBe(false);
      expect(again.problem).toBe(cs[2]!.problem);
    }
  });

  it('stands aside for a new input and for another objective', () => {
    const chooser = new Chooser(cfg, sys, () => true);
    const a = inputsOf(graph('olm1000.mtx'));
    const b = inputsOf(graph('1138_bus.mtx'));
    const ta = chooser.choose(a);
    chooser.choose(a);
    const tb = chooser.choose(b);
    expect(tb.problem).not.toBe(ta.problem);
    expect(chooser.choose(a).problem).toBe(ta.problem);
    chooser.setObjective('energy');
    const ea = chooser.choose(a);
    expect(ea.objective).toBe('energy');
    expect(chooser.choose(a).objective).toBe('energy');
    // The energy guards' choice on a fresh chooser under energy from the start.
    const fresh = new Chooser(cfg, sys, () => true);
    fresh.setObjective('energy');
    expect(report(ea)).toEqual(report(fresh.choose(a)));
    chooser.setObjective('throughput');
    expect(report(chooser.choose(a))).toEqual(report(ta));
  });
});
