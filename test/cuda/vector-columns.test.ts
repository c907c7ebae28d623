/**
 * Vector columns in the SpMM-shaped warp schedules (codegen/cuda/vec-columns.ts):
 * which kernels get a vector copy, what their launch checks before running
 * it, and, where nvcc is installed, that the PTX of the copy really moves the
 * dense rows as 128-bit loads and stores (the scalar kernels as 32-bit ones).
 * What they compute is checked against the reference in emulate.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileProgram } from '../../cli/compile.js';
import { emitCuda } from '../../codegen/cuda/emit.js';
import type { CompiledProgram } from '../../codegen/project.js';
import { exampleProgram, fixtureProgram, kernelText, stubText, writeProject } from './helpers.js';
import { have, run } from './nvcc.js';

const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-vec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function programOf(name: string, src: string): CompiledProgram {
  const file = join(dir, `${name}.dy`);
  writeFileSync(file, src);
  return compileProgram(file).program;
}

const cuOf = (p: CompiledProgram): string => emitCuda(p).get(`${p.name}.cu`)!;

/** The text of one __global__ function. */
function kernel(cu: string, name: string): string {
  const text = kernelText(cu, name);
  expect(text, name).not.toBe('');
  return text;
}

/** The launch stub of one variant. */
function stub(cu: string, name: string): string {
  const text = stubText(cu, name);
  expect(text, name).not.toBe('');
  return text;
}

describe('vector columns', () => {
  it('give the SpMM warp and merge-path schedules a float4 copy, run when 4 divides the width and the rows are aligned', () => {
    const cu = cuOf(exampleProgram('spmm'));
    for (const v of ['warp_per_row', 'adaptive_rows']) {
      const k = kernel(cu, `dy_spmm_op0_${v}_vec`);
      expect(k).toContain('const float4 dy_v');
      expect(k).toMatch(/reinterpret_cast<const float4\*>\(&B\[/);
      expect(k).toMatch(/\*reinterpret_cast<float4\*>\(&Y\[.*\]\) = make_float4\(/);
      // The row's entries are walked once for the lane's four columns.
      expect(k.match(/dy_acc0_[0-3] = \(dy_acc0_[0-3] \+/g)?.length).toBe(4);
      expect(kernel(cu, `dy_spmm_op0_${v}`)).not.toContain('float4');
    }
    const aligned = '(reinterpret_cast<uintptr_t>(B) & 15u) == 0 && (reinterpret_cast<uintptr_t>(Y) & 15u) == 0';
    expect(stub(cu, 'dype_spmm_spmm_op0_warp_per_row')).toContain(`if (k > 32 && k % 4 == 0 && ${aligned})`);
    expect(stub(cu, 'dype_spmm_spmm_op0_adaptive_rows')).toContain(
      `const int dy_vec = k % 4 == 0 && ${aligned} ? 4 : 1;`,
    );
    // adaptive-rows queues rows of more than 1024 entries for a block each, in both copies.
    const adaptive = stub(cu, 'dype_spmm_spmm_op0_adaptive_rows');
    for (const k of ['dy_spmm_op0_adaptive_rows_long', 'dy_spmm_op0_adaptive_rows_vec_long'])
      expect(adaptive).toContain(`DY_LAUNCH(${k}, (unsigned)(dy_n < 1024 ? dy_n : 1024), 256, stream,`);
    expect(kernel(cu, 'dy_spmm_op0_adaptive_rows')).toContain('A_rowPtr[i + 1] - A_rowPtr[i] > 1024;');
    expect(kernel(cu, 'dy_spmm_op0_adaptive_rows_vec_long')).toMatch(/reinterpret_cast<const float4\*>\(&B\[/);
    // merge-path's tile kernel: the gathers as vectors, and its partials and carries in the scratch.
    const tile = kernel(cu, 'dy_spmm_op0_merge_path_tiles_vec');
    expect(tile).toMatch(/reinterpret_cast<const float4\*>\(&B\[/);
    expect(tile).toMatch(/reinterpret_cast<float4\*>\(&dy_part\[/);
    expect(tile).toMatch(/reinterpret_cast<float4\*>\(&dy_carry\[/);
    expect(stub(cu, 'dype_spmm_spmm_op0_merge_path')).toContain(
      'if (dy_K % 4 == 0 && (reinterpret_cast<uintptr_t>(dy_part) & 15u) == 0 && (reinterpret_cast<uintptr_t>(B) & 15u) == 0) {',
    );
    expect(cu).not.toContain('row_per_thread_vec');
  });

  it('take double2 for f64, and nothing for SpMV or an integer SpMM', () => {
    const cu64 = cuOf(fixtureProgram('spmm64'));
    expect(kernel(cu64, 'dy_spmm64_op0_warp_per_row_vec')).toMatch(/reinterpret_cast<const double2\*>\(&B\[/);
    expect(stub(cu64, 'dype_spmm64_spmm64_op0_adaptive_rows')).toContain('k % 2 == 0');
    expect(cuOf(exampleProgram('spmv'))).not.toContain('_vec(');
    const int = programOf(
      'ispmm',
      'kernel ispmm(A: csr<i32>[m, n], B: dense<i32>[n, k]) -> (Y: dense<i32>[m, k]) {\n  Y[i, c] = A[i, j] * B[j, c];\n}\n',
    );
    expect(cuOf(int)).not.toContain('_vec(');
  });

  it('keep a gather that is not a row of the width scalar (B read by columns), vectorising the store alone', () => {
    const p = programOf(
      'tspmm',
      'kernel tspmm(A: csr<f32>[m, n], B: dense<f32>[k, n]) -> (Y: dense<f32>[m, k]) {\n  Y[i, c] = A[i, j] * B[c, j];\n}\n',
    );
    const k = kernel(cuOf(p), 'dy_tspmm_op0_warp_per_row_vec');
    expect(k).not.toContain('const float4');
    expect(k).toContain('make_float4(');
    expect(k.match(/B\[/g)?.length).toBe(4);
  });

  it.skipIf(!have('nvcc'))(
    'compile to 128-bit loads and stores of the dense rows (PTX, sm_90)',
    async () => {
      for (const [p, vec, scalar] of [
        [exampleProgram('spmm'), /ld\.global\.nc\.v4\.f32/, /st\.global\.v4\.f32/],
        [fixtureProgram('spmm64'), /ld\.global\.nc\.v2\.f64/, /st\.global\.v2\.f64/],
      ] as const) {
        const d = join(dir, p.name);
        writeProject(d, emitCuda(p));
        const r = await run(
          'nvcc',
          ['-ptx', '-arch=sm_90', '-O3', '-std=c++17', '-Werror', 'all-warnings', `${p.name}.cu`, '-o', 'out.ptx'],
          d,
        );
        expect(r.status, r.output).toBe(0);
        const ptx = readFileSync(join(d, 'out.ptx'), 'utf8');
        // Each kernel's PTX, from its .entry line to the next one.
        const entries = ptx.split(/\n(?=(?:\.visible )?\.entry )/).filter((e) => /^(?:\.visible )?\.entry /.test(e));
        const entry = (name: string): string | undefined =>
          entries.find((e) => new RegExp(`^(?:\\.visible )?\\.entry _Z\\d+${name}P`).test(e));
        for (const v of ['warp_per_row', 'adaptive_rows', 'merge_path_tiles']) {
          const vecEntry = entry(`dy_${p.name}_op0_${v}_vec`);
          const plain = entry(`dy_${p.name}_op0_${v}`);
          expect(plain, `${p.name} ${v}`).toBeDefined();
          expect(vecEntry, `${p.name} ${v}_vec`).toMatch(vec);
          expect(vecEntry).toMatch(scalar);
          expect(plain, `${p.name} ${v}`).not.toMatch(vec);
        }
      }
    },
    120_000,
  );
});
