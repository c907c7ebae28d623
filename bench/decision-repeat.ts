/**
 * What a repeated input's decision costs right after a kernel: the runtime's chooser, decider and policy over gcn's
 * guards (paper-1g1f, built from four real graphs as in bench/guards.ts), the same inputs every call, one decision
 * timed right after each 1-thread wasm SpMV (f32) of the same matrix. Per matrix, the median over ten rounds of the
 * median of 300 such calls (the rounds alternate the order of the parts, so load hits all alike), less an empty
 * function timed alike, ns:
 *   bind    an input binder like the chooser's, alone (the previous call's binding handed back after its O(1)
 *           checks);
 *   choose  the chooser (binding, and the kept choice);
 *   whole   choose, the decider with the switching policy, and the running partition's predicted figures.
 *   npm run build && node dist/bench/decision-repeat.js [matrix ...]
 * (default: adder_dcop_05.mtx cage8.mtx whitaker3.mtx bcsstk13.mtx).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { emitWasm } from '../codegen/wasm/emit.js';
import { Chooser } from '../runtime/engine/choose.js';
import { Decider } from '../runtime/engine/decide.js';
import { InputBinder } from '../runtime/engine/inputs.js';
import type { RuntimeInputs } from '../runtime/engine/types.js';
import { SwitchPolicy } from '../runtime/policy/policy.js';
import type { DenseTensor } from '../runtime/tensor.js';
import { createWasmExecutor } from '../runtime/wasm/executor.js';
import { gcnTreeConfig } from './gcn-decisions.js';
import { gcnGuards, lowered, matrix, root, spmvInputs } from './gcn-guards.js';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const { kernel: gcn, spec, system, plan } = gcnGuards();
const cfg = gcnTreeConfig({ kernel: gcn, spec, plan });

const spmv = await emitWasm(lowered('spmv.dy').kernels[0]!);
const exec = await createWasmExecutor(spmv.binary, spmv.manifest, { threads: 1 });
const dense = (rows: number, cols: number): DenseTensor => ({
  format: 'dense',
  shape: [rows, cols],
  data: new Float64Array(rows * cols),
});
const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : undefined;
const rows: { matrix: string; nnz: number; spmvUs: number; bindNs: number; chooseNs: number; wholeNs: number }[] = [];
let sink = 0;
for (const f of files ?? ['adder_dcop_05.mtx', 'cage8.mtx', 'whitaker3.mtx', 'bcsstk13.mtx']) {
  const m = matrix(f);
  if (m.rows !== m.cols) throw new Error(`${f}: gcn needs a square matrix`);
  const spmv = spmvInputs(m);
  const inputs: RuntimeInputs = { A: m, X: dense(m.rows, 64), W1: dense(64, 64), W2: dense(64, 16) };
  const chooser = new Chooser(cfg, system, () => true);
  const decider = new Decider(system, (o) => chooser.popts(o), chooser.memo);
  const policy = new SwitchPolicy();
  const whole = (): number => {
    const c = chooser.choose(inputs);
    const d = decider.decide(c, policy);
    if (d.switch) decider.switchTo(c.selected, c);
    return chooser.memo.mapping(c.problem, decider.current ?? c.selected)?.periodMs ?? 0;
  };
  // A binder of the same parameters as the chooser's own, timed alone.
  const binder = new InputBinder(cfg.kernel, cfg.params);
  const parts: Record<string, () => number> = {
    empty: () => 0,
    bind: () => binder.bind(inputs).tensors.size,
    choose: () => chooser.choose(inputs).selected.id,
    whole,
  };
  for (let i = 0; i < 5000; i++) for (const p of Object.values(parts)) sink += p();
  const spmvNs: number[] = [];
  const medians: Record<string, number[]> = {};
  for (let round = 0; round < 10; round++) {
    const order = Object.entries(parts);
    for (const [name, part] of round % 2 === 0 ? order : order.reverse()) {
      const xs: number[] = [];
      for (let i = 0; i < 300; i++) {
        let t0 = process.hrtime.bigint();
        exec.execute(spmv);
        if (i % 10 === 0) spmvNs.push(Number(process.hrtime.bigint() - t0));
        t0 = process.hrtime.bigint();
        sink += part();
        xs.push(Number(process.hrtime.bigint() - t0));
      }
      (medians[name] ??= []).push(median(xs));
    }
  }
  const zero = median(medians.empty!);
  rows.push({
    matrix: f,
    nnz: m.values.length,
    spmvUs: median(spmvNs) / 1e3,
    bindNs: median(medians.bind!) - zero,
    chooseNs: median(medians.choose!) - zero,
    wholeNs: median(medians.whole!) - zero,
  });
}
exec.close();
console.log(`a repeated input's decision right after a 1-thread SpMV, ns (sink ${sink % 7})`);
console.log('matrix                        nnz  SpMV us     bind   choose    whole  whole % of SpMV');
for (const r of rows)
  console.log(
    `${r.matrix.padEnd(24)} ${String(r.nnz).padStart(8)} ${r.spmvUs.toFixed(1).padStart(8)} ${r.bindNs.toFixed(0).padStart(8)} ${r.chooseNs.toFixed(0).padStart(8)} ${r.wholeNs.toFixed(0).padStart(8)} ${((r.wholeNs / 1e3 / r.spmvUs) * 100).toFixed(2).padStart(16)}`,
  );
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'decision-repeat.json'), JSON.stringify({ rows }, null, 2));
