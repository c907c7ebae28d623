/**
 * An FPGA op reading two sparse operands sizes each one's arrays by its own
 * pattern (codegen/hls/project.ts `sizeOf`): the second operand's were sized
 * by the first's entries, so a second operand with more entries ran past its
 * allocation (DY3045 in the C simulation; on a card only part of it would be
 * uploaded). Run through `dype run --project --emulate` on an FPGA partition,
 * both ways round, against the reference. Skipped without g++.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, freshDir, runCliAsync } from '../helpers/cli.js';
import { readDense, writeRowPattern } from '../helpers/row-pattern.js';

const HAVE_GXX = spawnSync('g++', ['--version']).status === 0;
const dir = freshDir('dype-hls-two-');
afterAll(() => cleanup(dir));

const N = 40;
const PROGRAM = `kernel two(A: csr<f32>[n, n], B: csr<f32>[n, n], x: dense<f32>[n], z: dense<f32>[n]) -> (y: dense<f32>[n]) {
  y[i] = sum(j: A[i, j] * x[j]) + sum(k: B[i, k] * z[k]);
}
`;

/** An n x n pattern of `per` entries a row (at most n), values from the row and pick. */
const matrix = (name: string, per: number): string =>
  writeRowPattern(
    join(dir, name),
    N,
    N,
    per,
    (i, t) => i * 7 + t * 3,
    (i, _, t) => ((i + 2 * t) % 9) - 4,
  );

const read = readDense;

describe.skipIf(!HAVE_GXX)('an FPGA op with two sparse operands', () => {
  it(
    'runs each on its own entries, the second with more entries than the first and with fewer',
    { timeout: 300_000 },
    async () => {
      const prog = join(dir, 'two.dy');
      writeFileSync(prog, PROGRAM);
      const few = matrix('few.mtx', 1);
      const many = matrix('many.mtx', 13);
      const project = join(dir, 'P');
      const c = await runCliAsync([
        'compile',
        prog,
        '-o',
        project,
        '--targets',
        'wasm,hls,runtime',
        '--profile',
        `A=${few}`,
        '--profile',
        `B=${many}`,
      ]);
      expect(c.status, c.stderr).toBe(0);
      const b = await runCliAsync(['build', project, '--emulate'], { timeoutMs: 240_000 });
      expect(b.status, b.stderr).toBe(0);
      for (const [A, B] of [
        [few, many],
        [many, few],
      ] as const) {
        const inputs = ['--input', `A=${A}`, '--input', `B=${B}`, '--input', 'x=@random', '--input', 'z=@random:2'];
        const y = join(dir, 'y.mtx');
        const ref = join(dir, 'ref.mtx');
        const r = await runCliAsync([
          'run',
          prog,
          '--project',
          project,
          '--emulate',
          '--partition',
          'fpga:op0',
          ...inputs,
          '--out',
          `y=${y}`,
        ]);
        expect(r.status, r.stderr).toBe(0);
        const s = await runCliAsync(['run', prog, '--backend', 'reference', ...inputs, '--out', `y=${ref}`]);
        expect(s.status, s.stderr).toBe(0);
        const got = read(y);
        read(ref).forEach((v, i) =>
          expect(Math.abs(got[i]! - v), `y[${i}]`).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(v))),
        );
      }
    },
  );
});
