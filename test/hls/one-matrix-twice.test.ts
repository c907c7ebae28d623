/**
 * One matrix as both operands of an FPGA design's term: the SDDMM of A with
 * B B^T and the GEMM X X. The designs name their on-chip copies per operand
 * (codegen/hls/match.ts `TermOperand`); they were named per buffer, so both
 * copies were loaded from the first read's index and every product read the
 * left copy twice: the SDDMM computed B_i . B_i, and the GEMM's loader of
 * its right tile read at `row`, which it has not (g++ refused it). Run through
 * `dype run --project --emulate` on an FPGA partition (C simulation) against
 * the reference; the CUDA side of such programs is test/cuda/emulate.test.ts
 * (fixture shared-walks.dy). Skipped without g++.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, freshDir, runCliAsync } from '../helpers/cli.js';
import { readDense, writeRowPattern } from '../helpers/row-pattern.js';

const HAVE_GXX = spawnSync('g++', ['--version']).status === 0;
const dir = freshDir('dype-hls-twice-');
afterAll(() => cleanup(dir));

const N = 24;
const PROGRAM = `kernel twice(A: csr<f32>[n, n], B: dense<f32>[n, d], X: dense<f32>[n, n]) -> (S: csr<f32>[n, n], Y: dense<f32>[n, n]) {
  S[i, j] = A[i, j] * sum(p: B[i, p] * B[j, p]);
  Y[i, c] = sum(j: X[i, j] * X[j, c]);
}
`;

describe.skipIf(!HAVE_GXX)('an FPGA design whose two operands are one matrix', () => {
  it('reads each operand at its own index: SDDMM A .* (B B^T) and GEMM X X', { timeout: 300_000 }, async () => {
    const prog = join(dir, 'twice.dy');
    writeFileSync(prog, PROGRAM);
    const A = writeRowPattern(
      join(dir, 'A.mtx'),
      N,
      N,
      5,
      (i, t) => i * 5 + t * 7,
      (i, _, t) => ((i + 3 * t) % 7) - 3,
    );
    const project = join(dir, 'P');
    const c = await runCliAsync([
      'compile',
      prog,
      '-o',
      project,
      '--targets',
      'wasm,hls,runtime',
      '--profile',
      `A=${A}`,
    ]);
    expect(c.status, c.stderr).toBe(0);
    // The designs under test, not the generic one.
    const designs = JSON.parse(readFileSync(join(project, 'hls', 'estimates.json'), 'utf8')) as {
      kernels: Record<string, { design: string }>;
    };
    expect(Object.values(designs.kernels).map((k) => k.design)).toEqual(['sddmm', 'gemm']);
    const b = await runCliAsync(['build', project, '--emulate'], { timeoutMs: 240_000 });
    expect(b.status, b.stderr).toBe(0);
    const inputs = ['--input', `A=${A}`, '--input', 'B=@random:7', '--input', 'X=@random:3', '--param', 'd=5'];
    const out = (tag: string): string[] => [
      '--out',
      `S=${join(dir, `S.${tag}.mtx`)}`,
      '--out',
      `Y=${join(dir, `Y.${tag}.mtx`)}`,
    ];
    const r = await runCliAsync([
      'run',
      prog,
      '--project',
      project,
      '--emulate',
      '--partition',
      'fpga:op0-op1',
      ...inputs,
      ...out('fpga'),
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('fpga-csim');
    const s = await runCliAsync(['run', prog, '--backend', 'reference', ...inputs, ...out('ref')]);
    expect(s.status, s.stderr).toBe(0);
    for (const v of ['S', 'Y']) {
      const got = readDense(join(dir, `${v}.fpga.mtx`));
      const want = readDense(join(dir, `${v}.ref.mtx`));
      expect(got.length).toBe(want.length);
      want.forEach((w, k) =>
        expect(Math.abs(got[k]! - w), `${v}[${k}]`).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(w))),
      );
    }
  });
});
