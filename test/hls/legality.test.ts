/**
 * Legality checks (codegen/hls/legality.ts): the generated designs of every
 * example pass; hand-broken view models are refused with the expected code
 * and a message naming the kernel.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import type { Kernel } from '../../ir/module.js';
import { DiagnosticError } from '../../ir/diagnostics.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import { buildKernelVM, type BuildContext } from '../../codegen/hls/kernel-vm.js';
import { checkDesign, legalityProblems } from '../../codegen/hls/legality.js';
import { DEFAULT_PLATFORM, type KernelVM } from '../../codegen/hls/view-model.js';
import { wasmManifest } from '../../codegen/wasm/emit.js';
import { example } from '../helpers/cli.js';

function loopKernel(name: string): Kernel {
  const r = compileSource(readFileSync(example(`${name}.dy`), 'utf8'), `${name}.dy`);
  if (!r.module) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return runPipeline(r.module, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] }).kernels[0]!;
}

const ctx = (k: Kernel): BuildContext => ({
  kernel: k.name,
  manifestOp: (f) => wasmManifest(k, [], false).ops.find((o) => o.export === f.name)!,
  extraDims: () => [],
  sizeOf: () => 'size_t(1)',
  testbench: () => ({ decls: [], args: [], compare: [], split: [] }),
});

function vmOf(example: string, op = 0): KernelVM {
  const k = loopKernel(example);
  return buildKernelVM(k.loops![op]!, ctx(k));
}

function refusal(vm: KernelVM): { code: string; message: string }[] {
  return legalityProblems(vm, DEFAULT_PLATFORM, 'x.dy').map((d) => ({ code: d.code, message: d.message }));
}

describe('HLS legality checks', () => {
  it('the designs of every example are legal, and the sparse ones use the streaming design', () => {
    for (const ex of ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp']) {
      const k = loopKernel(ex);
      for (const f of k.loops!) expect(() => checkDesign(buildKernelVM(f, ctx(k)), DEFAULT_PLATFORM)).not.toThrow();
    }
    expect(vmOf('spmv').design).toBe('spmv');
    expect(vmOf('spmm').design).toBe('spmm');
    expect(vmOf('sssp', 1).design).toBe('spmv');
    expect(vmOf('sssp', 1).code['combine']).toContain('dype_min');
    expect(vmOf('attention', 1).code['combine']).toContain('dype_max');
  });

  it('DY6201: a stream with two producers', () => {
    const vm = vmOf('spmv');
    vm.streams.find((st) => st.name === 'nz_s[0]')!.producers.push('spmv_op0_read_5');
    const ps = refusal(vm);
    expect(ps).toHaveLength(1);
    expect(ps[0]!.code).toBe('DY6201');
    expect(ps[0]!.message).toMatch(
      /HLS kernel spmv_op0 \(kernel spmv, op op0\): stream 'nz_s\[0\]' has 2 producer\(s\)/,
    );
  });

  it('DY6201: a stream nobody reads', () => {
    const vm = vmOf('spmv');
    vm.streams.push({ name: 'dangling', type: 'int32_t', depth: 2, producers: ['spmv_op0_meta'], consumers: [] });
    expect(refusal(vm).map((p) => p.code)).toEqual(['DY6201']);
  });

  it('DY6202: partition factor differs from the unroll factor', () => {
    const vm = vmOf('spmm');
    vm.arrays[0]!.partitions[0] = { dim: 1, kind: 'cyclic', factor: 16 };
    const ps = refusal(vm);
    expect(ps.map((p) => p.code)).toEqual(['DY6202']);
    expect(ps[0]!.message).toMatch(
      /HLS kernel spmm_op0 .*array 'acc' dimension 1 is partitioned cyclic by 16 but a loop unrolled 8 times indexes it/,
    );
  });

  it('DY6202: an unrolled access to an unpartitioned dimension', () => {
    const vm = vmOf('spmm');
    vm.arrays[0]!.partitions = vm.arrays[0]!.partitions.filter((p) => p.dim !== 3);
    expect(refusal(vm).map((p) => p.code)).toEqual(['DY6202']);
  });

  it('DY6203: an on-chip array of run-time size', () => {
    const vm = vmOf('spmv');
    vm.arrays.push({ name: 'scratch', type: 'float', dims: ['n_rows'], partitions: [], unrolledBy: [] });
    const ps = refusal(vm);
    expect(ps.map((p) => p.code)).toEqual(['DY6203']);
    expect(ps[0]!.message).toContain("array 'scratch' has the run-time extent n_rows");
  });

  it('DY6204: recursion through two functions', () => {
    const vm = vmOf('pagerank', 1);
    vm.functions.push({ name: 'helper_a', calls: ['helper_b'] }, { name: 'helper_b', calls: ['helper_a'] });
    const codes = refusal(vm).map((p) => p.code);
    expect(codes).toEqual(['DY6204', 'DY6204']);
  });

  it('DY6205: a data-dependent loop without a trip count', () => {
    const vm = vmOf('attention', 2);
    const l = vm.loops.find((x) => x.dataDependent)!;
    delete l.tripcount;
    const ps = refusal(vm);
    expect(ps.map((p) => p.code)).toEqual(['DY6205']);
    expect(ps[0]!.message).toMatch(
      /HLS kernel attention_op2 .*loop 'L_p0' has a data-dependent bound and no trip-count bound/,
    );
  });

  it('DY6206: an HBM bank outside the platform', () => {
    const vm = vmOf('gcn', 1);
    vm.args.find((a) => a.kind === 'ptr' && a.name === 'meta')!.bank = 32;
    const ps = refusal(vm);
    expect(ps.map((p) => p.code)).toEqual(['DY6206']);
    expect(ps[0]!.message).toContain(
      "argument 'meta' is mapped to HBM bank 32; platform xilinx_u280_gen3x16_xdma_1_202211_1 has banks 0..31",
    );
    // A smaller platform refuses the 16-channel design as generated.
    const small = legalityProblems(vmOf('spmv'), { ...DEFAULT_PLATFORM, name: 'small', hbmBanks: 8 });
    expect(small.length).toBeGreaterThan(0);
    expect(small.every((d) => d.code === 'DY6206')).toBe(true);
  });

  it('checkDesign throws one DiagnosticError listing every problem', () => {
    const vm = vmOf('spmv');
    vm.args[0]!.bank = -1;
    vm.streams[0]!.consumers = [];
    try {
      checkDesign(vm, DEFAULT_PLATFORM, 'spmv.dy');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DiagnosticError);
      expect((e as DiagnosticError).diagnostics.map((d) => d.code).sort()).toEqual(['DY6201', 'DY6206']);
      expect((e as Error).message).toMatch(/^spmv\.dy:1:1: error DY620\d: HLS kernel spmv_op0/);
    }
  });
});
