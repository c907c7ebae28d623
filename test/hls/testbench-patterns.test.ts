/**
 * Ops over two sparse operands of different shapes on the FPGA path:
 *   - the generated testbench (`make tb`) gives each sparse operand a pattern
 *     of its own shape (codegen/hls/project.ts `testbench`): it gave every one
 *     the first operand's, so a second operand with more rows or fewer columns
 *     was read past its end (a segfault) or against a dense operand too short
 *     for its indices (a PASS on garbage). Built here with AddressSanitizer
 *     and UBSan, so a read past any buffer fails the test;
 *   - a reduction nested over a second matrix (sum(j: A[i, j] * sum(q:
 *     B[j, q] * z[q]))) sizes B's pointers by B's own rows: the HLS view
 *     model had no size for them, and since the planner's catalogue builds
 *     it, every command (the reference run too) stopped with an internal
 *     error. Now it runs on the FPGA C simulation as the reference computes.
 * Skipped without g++.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, freshDir, runCliAsync } from '../helpers/cli.js';
import { readDense, writeRowPattern } from '../helpers/row-pattern.js';

const HAVE_GXX = spawnSync('g++', ['--version']).status === 0;
// The sanitizers need their runtime libraries, which a minimal g++ install may lack.
const HAVE_ASAN =
  HAVE_GXX &&
  spawnSync('g++', ['-fsanitize=address,undefined', '-x', 'c++', '-', '-o', '/dev/null'], {
    input: 'int main() { return 0; }\n',
  }).status === 0;
const dir = freshDir('dype-hls-tb-');
afterAll(() => cleanup(dir));

const PROGRAMS: Record<string, string> = {
  // B's rows are A's columns: B's pointers run to n, which no dense buffer of the op has.
  nested: `kernel nested(A: csr<f32>[m, n], B: csr<f32>[n, p], z: dense<f32>[p]) -> (y: dense<f32>[m]) {
  y[i] = sum(j: A[i, j] * sum(q: B[j, q] * z[q]));
}
`,
  // A csc operand with other columns than the csr one.
  mixed: `kernel mixed(A: csr<f32>[m, n], B: csc<f32>[m, p], x: dense<f32>[n], z: dense<f32>[p]) -> (y: dense<f32>[m]) {
  y[i] = sum(j: A[i, j] * x[j]) + sum(q: B[i, q] * z[q]);
}
`,
  // Eight columns: the first operand's column indices would run past z.
  narrow: `kernel narrow(A: csr<f32>[m, n], B: csr<f32>[m, 8], x: dense<f32>[n], z: dense<f32>[8]) -> (y: dense<f32>[m]) {
  y[i] = sum(j: A[i, j] * x[j]) + sum(k: B[i, k] * z[k]);
}
`,
};

function program(name: string): string {
  const path = join(dir, `${name}.dy`);
  writeFileSync(path, PROGRAMS[name]!);
  return path;
}

describe.skipIf(!HAVE_ASAN)('the HLS testbench of an op with two sparse operands', () => {
  it.each(Object.keys(PROGRAMS))(
    '%s: each operand its own pattern, no read past a buffer',
    async (name) => {
      const out = join(dir, `tb-${name}`);
      const c = await runCliAsync(['compile', program(name), '-o', out, '--targets', 'hls']);
      expect(c.status, c.stderr).toBe(0);
      const tb = spawnSync(
        'make',
        [
          '-C',
          join(out, 'hls'),
          'tb',
          'CXXFLAGS=-O1 -g -std=c++17 -Wno-unknown-pragmas -Wno-unused-label -fsanitize=address,undefined -fno-sanitize-recover=all',
        ],
        { encoding: 'utf8', timeout: 240_000 },
      );
      expect(tb.status, `${tb.stdout}\n${tb.stderr}`).toBe(0);
      expect(tb.stdout).toMatch(new RegExp(`${name}_op0: PASS`));
    },
    300_000,
  );
});

/** An r x c matrix of `per` entries a row, values from the row and column. */
const matrix = (file: string, r: number, c: number, per: number): string =>
  writeRowPattern(
    join(dir, file),
    r,
    c,
    per,
    (i, t) => i * 7 + t * 5,
    (i, j) => ((i + 3 * j) % 11) - 5,
  );

const read = readDense;

describe.skipIf(!HAVE_GXX)('a reduction nested over a second sparse matrix', () => {
  it('runs on the reference and on the FPGA C simulation, with the same result', { timeout: 300_000 }, async () => {
    const file = program('nested');
    const A = matrix('A.mtx', 30, 45, 4);
    const B = matrix('B.mtx', 45, 20, 3);
    const inputs = ['--input', `A=${A}`, '--input', `B=${B}`, '--input', 'z=@random'];
    const ref = await runCliAsync([
      'run',
      file,
      '--backend',
      'reference',
      ...inputs,
      '--out',
      `y=${join(dir, 'ref.mtx')}`,
    ]);
    expect(ref.status, ref.stderr).toBe(0);
    const project = join(dir, 'P');
    const c = await runCliAsync(['compile', file, '-o', project, '--targets', 'wasm,hls']);
    expect(c.status, c.stderr).toBe(0);
    const b = await runCliAsync(['build', project, '--emulate'], { timeoutMs: 240_000 });
    expect(b.status, b.stderr).toBe(0);
    const fpga = await runCliAsync([
      'run',
      file,
      '--project',
      project,
      '--emulate',
      '--partition',
      'fpga:op0',
      ...inputs,
      '--out',
      `y=${join(dir, 'fpga.mtx')}`,
    ]);
    expect(fpga.status, fpga.stderr).toBe(0);
    expect(fpga.stdout).toMatch(/fpga-csim/);
    const want = read(join(dir, 'ref.mtx'));
    const got = read(join(dir, 'fpga.mtx'));
    expect(got).toHaveLength(30);
    for (let i = 0; i < want.length; i++)
      expect(Math.abs(got[i]! - want[i]!), `y[${i}]`).toBeLessThanOrEqual(1e-4 * (1 + Math.abs(want[i]!)));
  });
});
