/**
 * One catalogue of implementations: for every example, what the planner
 * picks on real matrices exists in the code the emitters wrote (the CUDA
 * variant, the HLS design, the wasm thread split), FPGA resources come only
 * from the design estimates the HLS project also writes, every device kind
 * has its implementations, and instance names never collide.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { emitHlsProject } from '../../codegen/hls/project.js';
import { implementationsOf, plannedSpecs } from '../../codegen/implementations.js';
import { programName, type CompiledProgram } from '../../codegen/project.js';
import { wasmManifest } from '../../codegen/wasm/emit.js';
import { lowerKernelsPass } from '../../passes/lower-kernels.js';
import {
  CATALOGUE,
  FPGA_IMPL_DESIGN,
  fpgaEntry,
  IMPLEMENTATIONS,
  type FpgaImpl,
} from '../../runtime/catalogue/index.js';
import { features } from '../../runtime/features/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { planPareto } from '../../runtime/plan/dp.js';
import { DEVICE_KINDS } from '../../runtime/system/schema.js';
import { instances, type SystemSpec } from '../../runtime/system/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { optimised } from '../helpers/compile.js';
import { goal } from '../helpers/goal.js';

const root = join(import.meta.dirname, '..', '..');
const M = join(root, '..', 'shared', 'data', 'matrices');
const EXAMPLES: Record<string, { dims: Record<string, number>; scalars?: Record<string, number> }> = {
  spmv: { dims: {} },
  spmm: { dims: { k: 16 } },
  gcn: { dims: { f: 16, h: 16, c: 7 } },
  attention: { dims: { d: 8 } },
  pagerank: { dims: {}, scalars: { d: 0.85 } },
  sssp: { dims: {} },
};

function compiled(name: string): CompiledProgram {
  const file = join(root, 'examples', `${name}.dy`);
  const source = readFileSync(file, 'utf8');
  return {
    file: `examples/${name}.dy`,
    source,
    name: programName(file),
    module: lowerKernelsPass.run(optimised(source)),
  };
}

describe('the catalogue of implementations', () => {
  it('has every device kind, and every name has a cost (and an FPGA design with resources)', () => {
    expect(Object.keys(IMPLEMENTATIONS).sort()).toEqual([...DEVICE_KINDS].sort());
    for (const kind of DEVICE_KINDS)
      expect(Object.keys(CATALOGUE[kind]).sort()).toEqual([...IMPLEMENTATIONS[kind]].sort());
    for (const impl of IMPLEMENTATIONS.fpga) expect(fpgaEntry(impl).design).toBe(FPGA_IMPL_DESIGN[impl]);
  });

  for (const name of Object.keys(EXAMPLES)) {
    it(`${name}: the planner's picks on two real matrices exist in the emitted CUDA, HLS and wasm code`, async () => {
      const prog = compiled(name);
      const impls = implementationsOf(prog);
      const cu = emitCuda(prog).get(`${prog.name}.cu`)!;
      const hls = await emitHlsProject(prog);
      const estimates = JSON.parse(String(hls.get('estimates.json'))) as {
        kernels: Record<string, { op: string; design: string; resources: Record<string, number> }>;
      };
      const k = prog.module.kernels[0]!;
      const manifest = wasmManifest(k, [], false);
      const spec = plannedSpecs(prog.module, prog.file).get(k.name)!;
      // What codegen says it emitted is in the files.
      for (const o of manifest.ops) {
        const ops = impls.get(k.name)!.get(o.op)!;
        expect(ops.cpu).toEqual([o.splittable ? (o.balanceBy ? 'nnz-split' : 'row-split') : 'serial']);
        for (const v of ops.gpu) expect(cu).toContain(`_${o.op}_${v.replace(/-/g, '_')}(`);
        const est = Object.values(estimates.kernels).find((e) => e.op === o.op)!;
        expect(ops.fpga).toEqual([
          Object.keys(FPGA_IMPL_DESIGN).find((i) => FPGA_IMPL_DESIGN[i as FpgaImpl] === est.design),
        ]);
        // The planner's resource figures are the project's.
        expect(fpgaEntry(ops.fpga[0]!).resources()).toEqual(est.resources);
      }
      // Whatever the planner picks, on any system, is one of them.
      for (const file of ['cage8.mtx', 'jazz.mtx']) {
        const A = toCsr(loadMatrix(join(M, file)));
        const e = EXAMPLES[name]!;
        const dims = new Map<string, number>(Object.entries(e.dims));
        for (const p of k.params)
          p.type.shape.forEach(
            (d, i) => d.kind === 'sym' && !dims.has(d.name) && dims.set(d.name, i === 0 ? A.rows : A.cols),
          );
        const binding = {
          sparse: new Map([['A', features(A, 2)]]),
          dims,
          scalars: new Map(Object.entries(e.scalars ?? {})),
        };
        for (const preset of ['paper-1g1f', 'paper-2g2f']) {
          const sys = loadSystemFile(join(root, 'systems', `${preset}.json`));
          for (const m of planPareto(sys, bindProblem(spec, binding), goal('throughput')).pareto)
            for (const st of m.stages)
              for (const [op, v] of Object.entries(st.variants))
                expect(impls.get(k.name)!.get(op)![st.kind] as readonly string[]).toContain(v);
        }
      }
    });
  }

  it('never costs an implementation a program lacks: an op without a GPU one cannot go to the GPU', () => {
    const prog = compiled('spmv');
    const spec = plannedSpecs(prog.module, prog.file).get('spmv')!;
    const stripped = { ...spec, ops: spec.ops.map((o) => ({ ...o, impls: { ...o.impls, gpu: [] } })) };
    const A = toCsr(loadMatrix(join(M, 'cage8.mtx')));
    const sys = loadSystemFile(join(root, 'systems', 'paper-1g1f.json'));
    const out = planPareto(
      sys,
      bindProblem(stripped, {
        sparse: new Map([['A', features(A, 2)]]),
        dims: new Map([
          ['m', A.rows],
          ['n', A.cols],
        ]),
        scalars: new Map(),
      }),
      goal('throughput'),
    );
    expect(out.pareto.length).toBeGreaterThan(0);
    for (const m of out.pareto) expect(m.stages.every((s) => s.kind !== 'gpu')).toBe(true);
    const gpuOnly = planPareto(
      sys,
      bindProblem(stripped, {
        sparse: new Map([['A', features(A, 2)]]),
        dims: new Map([
          ['m', A.rows],
          ['n', A.cols],
        ]),
        scalars: new Map(),
      }),
      { ...goal('throughput'), kinds: ['gpu'] },
    );
    expect(gpuOnly.infeasible.join('\n')).toContain('op0 (spmv) has no gpu implementation in its program');
  });
});

describe('device instances', () => {
  it('a device gpu x 11 and a device gpu1 have distinct instance names', () => {
    const base = loadSystemFile(join(root, 'systems', 'paper-2g2f.json'));
    const gpu = base.devices.find((d) => d.kind === 'gpu')!;
    const sys: SystemSpec = {
      ...base,
      devices: [
        ...base.devices.filter((d) => d.kind !== 'gpu'),
        { ...gpu, id: 'gpu', count: 11 },
        { ...gpu, id: 'gpu1', count: 2 },
      ],
    };
    const names = instances(sys).map((x) => x.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('gpu10');
    expect(names).toContain('gpu1.0');
    expect(names).toContain('gpu1.1');
  });
});
