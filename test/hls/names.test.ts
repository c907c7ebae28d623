/**
 * Program names the HLS project writes as C++ (docs/HLS.md): '.' is written '_', so a tensor `A_vals` and the
 * values of a sparse input `A` (A.vals) would be one C++ name, which is DY6208 with nothing written (the CUDA
 * target's DY6102 for the same programs); the generator's own names (the GEMM's tiles, the headers' include
 * guards) must not meet a program's: a tensor `t_W` beside the tile of W, and kernels `k` and `LAUNCH_k` in one
 * file, compile (g++, the projects' own Makefiles; skipped without g++), as do two loops over one index in one
 * kernel function, each under a label of its own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, freshDir, runCli } from '../helpers/cli.js';

const HAVE_GXX = spawnSync('g++', ['--version']).status === 0;
const dir = freshDir('dype-hls-names-');
afterAll(() => cleanup(dir));

function program(name: string, text: string): string {
  const file = join(dir, `${name}.dy`);
  writeFileSync(file, text);
  return file;
}

describe('HLS names', () => {
  it('two program names that are one C++ name are DY6208, and nothing is written', () => {
    const cases = [
      'kernel k(A: csr<f32>[m, n], A_vals: dense<f32>[n]) -> (y: dense<f32>[m]) {\n  y[i] = A[i, j] * A_vals[j];\n}\n',
      'kernel pr(A: csr<f32>[n, n], r0: dense<f32>[n], r_next: dense<f32>[n]) -> (r: dense<f32>[n]) {\n  r[i] = r0[i];\n  repeat 3 { r[i] = r_next[i] + A[i, j] * r[j]; }\n}\n',
    ];
    cases.forEach((text, i) => {
      const file = program(`collide${i}`, text);
      const out = join(dir, `collide${i}-out`);
      const r = runCli(['hls', file, '-o', out]);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/error DY6208: HLS kernel \w+ \(kernel \w+, op op\d\): .* would be declared twice/);
      expect(existsSync(out)).toBe(false);
    });
  });

  it.skipIf(!HAVE_GXX)(
    "the generator's names keep out of the program's: a tensor t_W beside W's tile, kernels k and LAUNCH_k, sibling loops' labels",
    { timeout: 240_000 },
    () => {
      const tile = program(
        'tile',
        'kernel g(X: dense<f32>[n, f], W: dense<f32>[f, h], t_W: dense<f32>[n, h]) -> (T: dense<f32>[n, h]) {\n  T[i, k] = X[i, j] * W[j, k] + t_W[i, k];\n}\n',
      );
      const guards = program(
        'guards',
        'kernel k(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }\nkernel LAUNCH_k(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }\n',
      );
      // Two sibling loops over j in one kernel function: one C++ label each (L_j, L_j_2).
      const labels = program(
        'labels',
        'kernel s(a: dense<f32>[n], c: dense<f32>[n]) -> (o: dense<f32>[n]) {\n  o[i] = a[i] * sum(j: a[j] * c[j]) + sum(j: c[j]);\n}\n',
      );
      for (const [file, target] of [
        [tile, 'build/csim/g_host'],
        [guards, 'csim-lib'],
        [labels, 'build/csim/s_host'],
      ] as const) {
        const out = join(dir, `${target.replace(/\W/g, '_')}-proj`);
        const w = runCli(['hls', file, '-o', out]);
        expect(w.status, w.stderr).toBe(0);
        const m = spawnSync('make', ['-s', '-C', out, target], { encoding: 'utf8', timeout: 200_000 });
        expect(
          m.status,
          `${file}: ${m.stderr
            .split('\n')
            .filter((l) => /error/.test(l))
            .slice(0, 3)
            .join('\n')}`,
        ).toBe(0);
      }
    },
  );
});
