/**
 * The CUDA emitter without a compiler: which variants each op's nest gets,
 * names mangled into C identifiers, hostile names rejected with DY61xx
 * diagnostics naming the kernel, the host program order with repeats.
 */
import { describe, expect, it } from 'vitest';
import { cudaPlans, emitCuda } from '../../codegen/cuda/emit.js';
import { cString, mangle } from '../../codegen/cuda/names.js';
import type { CompiledProgram } from '../../codegen/project.js';
import { compileProgram } from '../../cli/compile.js';
import { DiagnosticError } from '../../ir/diagnostics.js';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exampleProgram, fixtureProgram, ROOT } from './helpers.js';

function variants(p: CompiledProgram): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const plan of cudaPlans(p).plans) for (const op of plan.ops) out[op.f.name] = op.variants.map((v) => v.name);
  return out;
}

function programOf(src: string): CompiledProgram {
  const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-'));
  try {
    const file = join(dir, 'prog.dy');
    writeFileSync(file, src);
    return compileProgram(file).program;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function diagnostic(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(DiagnosticError);
    const d = (e as DiagnosticError).diagnostics[0]!;
    return { code: d.code, message: d.message };
  }
  throw new Error('expected a diagnostic');
}

describe('variants derived from the loop nests', () => {
  it('gives each example op the schedules its nest supports', () => {
    expect(variants(exampleProgram('spmv'))).toEqual({
      spmv_op0: ['adaptive-rows', 'warp-per-row', 'merge-path', 'row-per-thread'],
    });
    expect(variants(exampleProgram('gcn'))).toEqual({
      gcn_op0: ['tiled', 'warp-per-row', 'row-per-thread'],
      gcn_op1: ['adaptive-rows', 'warp-per-row', 'merge-path', 'row-per-thread'],
      gcn_op2: ['tiled', 'warp-per-row', 'row-per-thread'],
      gcn_op3: ['adaptive-rows', 'warp-per-row', 'merge-path', 'row-per-thread'],
    });
    expect(variants(exampleProgram('pagerank'))).toEqual({
      pagerank_op0: ['elementwise'],
      pagerank_op2: ['adaptive-rows', 'warp-per-row', 'merge-path', 'row-per-thread'],
    });
    // The SDDMM writes per entry: no merge path (nothing to combine across rows).
    expect(variants(exampleProgram('attention'))['attention_op0']).toEqual(['warp-per-row', 'row-per-thread']);
    expect(variants(fixtureProgram('shapes'))).toEqual({
      shapes_op0: ['block-reduce', 'serial'],
      shapes_op1: ['warp-per-row', 'row-per-thread'],
      shapes_op2: ['elementwise'],
      shapes_op3: ['adaptive-rows', 'warp-per-row', 'merge-path', 'row-per-thread'],
      shapes_op4: ['adaptive-rows', 'warp-per-row', 'merge-path', 'row-per-thread'],
      // A sparse input reduced to a scalar: no parallel loop, so the scalar forms (it was DY6103).
      shapes_op5: ['block-reduce', 'serial'],
      shapes_op6: ['warp-per-row', 'row-per-thread'],
      shapes_op7: ['warp-per-row', 'row-per-thread'],
    });
  });

  it('splits SpMV rows and SDDMM dot products across lanes, and SpMM columns with cached entries', () => {
    const spmv = emitCuda(exampleProgram('spmv')).get('spmv.cu')!;
    expect(spmv).toMatch(/for \(int p0 = A_rowPtr\[i\] \+ dy_lane, .*p0 \+= 32\)/);
    expect(spmv).toContain('acc0 = dy_warp_reduce<dy_op_sum>(acc0);');
    expect(spmv).toContain('if (dy_lane == 0) y[i] = acc0;');
    const att = emitCuda(exampleProgram('attention')).get('attention.cu')!;
    const sddmm = att.slice(
      att.indexOf('dy_attention_op0_warp_per_row('),
      att.indexOf('dy_attention_op0_row_per_thread('),
    );
    expect(sddmm).toMatch(/for \(int k = 0 \+ dy_lane, .*k \+= 32\)/);
    expect(sddmm).toMatch(/if \(dy_lane == 0\) S_vals\[p0\] = /);
    const gcn = emitCuda(exampleProgram('gcn')).get('gcn.cu')!;
    expect(gcn).toContain('__shared__ float dy_sh_A_vals[8][32];');
    // adaptive-rows: groups of dy_width lanes, long rows queued for a block each.
    expect(spmv).toContain('acc0 = dy_group_reduce<dy_op_sum>(acc0, dy_width);');
    expect(spmv).toContain('if (dy_live && !dy_long && dy_lane == 0) y[i] = acc0;');
    expect(spmv).toContain('if (dy_long && dy_lane == 0) dy_queue[atomicAdd(dy_count, 1)] = i;');
    expect(spmv).toMatch(/acc0 = dy_block_reduce<dy_op_sum>\(acc0, dy_red\d+\);/);
    const sssp = emitCuda(exampleProgram('sssp')).get('sssp.cu')!;
    expect(sssp).toContain('dy_warp_reduce<dy_op_min>');
    // merge-path's SpMV form: one global search per block, a segmented block scan, carries per tile, no allocation per call.
    expect(sssp).toContain('dy_op_min::f(acc0, dy_carry[dy_u]);');
    const mp = sssp.slice(sssp.indexOf('dy_sssp_op2_merge_path_tiles('), sssp.indexOf('dy_sssp_op2_merge_path_rows('));
    expect(mp.match(/dy_merge_search\(/g)).toHaveLength(2);
    expect(mp).toContain('if (dy_t == 0) {');
    expect(mp).toContain('dy_op_min::f(dy_s_val[dy_t - dy_off], dy_v)');
    expect(sssp).toContain('dy_workspace(stream, ');
    expect(sssp).not.toMatch(/cudaMallocAsync\(\(void\*\*\)&dy_scratch|cudaMallocAsync\(\(void\*\*\)&dy_part/);
  });

  it('drives repeat loops from the host and swaps X and X.next after each trip (no copy in the loop)', () => {
    const src = readFileSync(join(ROOT, 'examples', 'pagerank.dy'), 'utf8').replace(
      'repeat 1000 until r within 1e-6',
      'repeat 20',
    );
    const pr = emitCuda(programOf(src)).get('prog.cu')!;
    const run = pr.slice(pr.indexOf('int dype_prog_pagerank_run_buffers('));
    const body = run.slice(0, run.indexOf('\n}\n'));
    expect(body).toMatch(
      /for \(long long dy_it0 = 0; dy_it0 < 20; \+\+dy_it0\) \{\n\s+if \(\(dy_rc = dy_prog_pagerank_op1\(b, variants \? variants\[1\] : 0, stream\)\) != 0\) return dy_rc;\n\s+\{ float\* dy_t = b->r; dy_l\.r = b->r_next; dy_l\.r_next = dy_t; \}\n\s+\}/,
    );
    // One copy home after the loop, and only when the trips left r in r.next's storage.
    expect(body.match(/cudaMemcpyAsync/g)).toHaveLength(1);
    expect(body).toMatch(/if \(b->r != dy_in->r && \(dy_rc = \(int\)cudaMemcpyAsync\(dy_in->r, b->r, /);
  });

  it('tests a convergence loop on the device and reads two doubles back per trip', () => {
    const pr = emitCuda(exampleProgram('pagerank')).get('pagerank.cu')!;
    const run = pr.slice(pr.indexOf('int dype_pagerank_pagerank_run_buffers('));
    const trip = run.slice(run.indexOf('for (long long dy_it0 = 0; dy_it0 < 1000; ++dy_it0) {'));
    expect(trip).toMatch(
      /^for[^\n]*\n\s+if \(\(dy_rc = \(int\)cudaMemcpyAsync\(dy_prev0, b->r, [^\n]*cudaMemcpyDeviceToDevice/,
    );
    expect(trip).toContain('DY_LAUNCH(dy_until_change<float>, 1, 32, stream, dy_prev0, b->r, ');
    expect(trip).toContain('cudaMemcpyAsync(dy_h0, dy_chg0, 2 * sizeof(double), cudaMemcpyDeviceToHost, stream)');
    expect(trip).toContain('if (dy_h0[0] <= 0.000001) break;');
    // Nothing else leaves the device in the loop: the only device-to-host copy is the two doubles.
    expect(trip.slice(0, trip.indexOf('cudaFreeAsync')).match(/cudaMemcpyDeviceToHost/g)).toHaveLength(1);
    const sssp = emitCuda(exampleProgram('sssp')).get('sssp.cu')!;
    expect(sssp).toContain('if (dy_h0[1] == 0) break;');
  });

  it('writes every project file, and notes the variants of each op in the header', () => {
    const files = emitCuda(exampleProgram('gcn'));
    expect([...files.keys()].sort()).toEqual([
      'CMakeLists.txt',
      'Makefile',
      'README.md',
      'dype_abi.h',
      'dype_abi_check.cpp',
      'dype_check.cpp',
      'dype_check_common.h',
      'emu/cuda_runtime_api.h',
      'gcn.cu',
      'gcn_abi.cu',
      'gcn_cuda.h',
    ]);
    expect(files.get('gcn_cuda.h')).toContain(
      'op 1: op1 (H1 -> H1): 0 = adaptive-rows, 1 = warp-per-row, 2 = merge-path, 3 = row-per-thread',
    );
    expect(files.get('Makefile')).toContain('arch=compute_80,code=sm_80');
    expect(files.get('CMakeLists.txt')).toContain('80-real 90-real 90-virtual');
  });
});

describe('identifiers', () => {
  it('mangles loop-IR names and prefixes reserved words', () => {
    expect(mangle('A.rowPtr')).toBe('A_rowPtr');
    expect(mangle('r.next')).toBe('r_next');
    expect(mangle('S.vals.next')).toBe('S_vals_next');
    expect(mangle('nnz(A)')).toBe('nnz_A');
    expect(mangle('int')).toBe('u_int');
    expect(mangle('threadIdx')).toBe('u_threadIdx');
    expect(mangle('dy_lane')).toBe('u_dy_lane');
    expect(mangle('a__b')).toBeUndefined();
    expect(mangle('x); system("id"); //')).toBeUndefined();
    expect(cString('a"b\\c\n??/')).toBe('"a\\042b\\134c\\012\\077\\077/"');
  });

  it('compiles C++ keywords used as dype names into prefixed identifiers', () => {
    const src = emitCuda(
      programOf(
        'kernel kw(A: csr<f32>[class, class], x: dense<f32>[class]) -> (y: dense<f32>[class]) { y[i] = A[i, j] * x[j]; }',
      ),
    ).get('prog.cu')!;
    expect(src).toContain('int u_class');
    const code = src.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
    expect(code).not.toMatch(/\bclass\b/);
  });

  it('rejects a kernel name that would contain a reserved double underscore (DY6101)', () => {
    const d = diagnostic(() =>
      emitCuda(
        programOf(
          'kernel evil__global__(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) { y[i] = A[i, j] * x[j]; }',
        ),
      ),
    );
    expect(d.code).toBe('DY6101');
    expect(d.message).toContain("kernel 'evil__global__'");
  });

  it('rejects two names that would be one C identifier (DY6102)', () => {
    const d = diagnostic(() =>
      emitCuda(
        programOf(
          'kernel clash(A: csr<f32>[n, n], A_vals: dense<f32>[n]) -> (y: dense<f32>[n]) { y[i] = A[i, j] * A_vals[j]; }',
        ),
      ),
    );
    expect(d.code).toBe('DY6102');
    expect(d.message).toContain("kernel 'clash'");
    expect(d.message).toContain('A_vals');
  });

  it('rejects hostile names given to the emitter directly (DY6101), naming the kernel', () => {
    const base = exampleProgram('spmv');
    const k = base.module.kernels[0]!;
    const evilKernel = 'x(){} int main(){ system("id"); } void y';
    let d = diagnostic(() => emitCuda({ ...base, module: { kernels: [{ ...k, name: evilKernel }] } }));
    expect(d.code).toBe('DY6101');
    expect(d.message).toContain('kernel "x(){} int main(){ system(\\"id\\"); } void y"');
    const loops = k.loops!.map((f) => ({
      ...f,
      buffers: f.buffers.map((b) => (b.name === 'x' ? { ...b, name: 'x[0]); system("id"); //' } : b)),
    }));
    d = diagnostic(() => emitCuda({ ...base, module: { kernels: [{ ...k, loops }] } }));
    expect(d.code).toBe('DY6101');
    expect(d.message).toContain("kernel 'spmv'");
    expect(d.message).toContain('system');
    d = diagnostic(() => emitCuda({ ...base, name: 'p; system' }));
    expect(d.code).toBe('DY6101');
  });

  it('keeps a hostile file path out of the code (comments are one sanitized line)', () => {
    const base = exampleProgram('spmv');
    const files = emitCuda({ ...base, file: 'a\n#error injected */ \\\n.dy' });
    for (const [name, text] of files) {
      expect(text, name).not.toMatch(/^#error injected/m);
      expect(text, name).not.toContain('injected */ \\\n');
    }
  });

  it('rejects a sparse temporary read in a layout it is not computed in (DY6103)', () => {
    const d = diagnostic(() =>
      emitCuda(
        programOf(
          'kernel cols(A: csr<f32>[n, n], x: dense<f32>[n]) -> (z: dense<f32>[n]) { S[i, j] = A[i, j] * x[j]; z[j] = sum(i: S[i, j]); }',
        ),
      ),
    );
    expect(d.code).toBe('DY6103');
    expect(d.message).toContain("kernel 'cols'");
  });
});
