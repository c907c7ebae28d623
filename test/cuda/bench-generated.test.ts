/**
 * The GPU benchmark's generated matrices (bench/gpu/generate.py on the GPU
 * machine, bench/gpu/generated.ts here for dype's picks): the two make the
 * same matrices entry for entry, and what generate.py writes (a .csr folder
 * of NumPy arrays, .npy dense inputs, float64 .npy references from SciPy)
 * passes the generated CUDA's own checking driver, run on the CPU emulation,
 * in every variant. Skipped, saying so, where python3 with NumPy and SciPy
 * (or g++) is missing.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateMatrix, specLine, type GeneratedSpec } from '../../bench/gpu/generated.js';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { exampleProgram, ROOT, writeProject } from './helpers.js';
import { have, run } from './nvcc.js';

const PY = spawnSync('python3', ['-c', 'import numpy, scipy.sparse'], { encoding: 'utf8' }).status === 0;
if (!PY) console.warn('test/cuda: python3 with NumPy and SciPy not found; skipping the generated-matrix checks');
const dir = mkdtempSync(join(tmpdir(), 'dype-bench-gen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SPECS: GeneratedSpec[] = [
  { name: 'st', kind: 'stencil3d', params: [6], seed: 7 },
  // Hubs of 300 and 900 draws over 1024 columns (duplicates merged), among 3000 R-MAT edges.
  { name: 'rm', kind: 'rmat', params: [10, 3000, 300, 900], seed: 3 },
];

/** A .npy array of the data types generate.py writes (little-endian, C order). */
function npy(path: string): Int32Array | Float32Array | Float64Array {
  const b = readFileSync(path);
  const len = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + len).toString('latin1');
  const data = b.subarray(10 + len);
  const buf = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const descr = /'descr': '([^']+)'/.exec(header)![1];
  return descr === '<i4' ? new Int32Array(buf) : descr === '<f4' ? new Float32Array(buf) : new Float64Array(buf);
}

function generate(widths: number[]): string {
  const w = join(dir, `work${widths.join('-')}`);
  mkdirSync(w, { recursive: true });
  writeFileSync(join(w, 'generated.txt'), SPECS.map((s) => specLine(s, widths)).join('\n') + '\n');
  const r = spawnSync('python3', [join(ROOT, 'bench', 'gpu', 'generate.py'), w], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return w;
}

describe.skipIf(!PY)('generated matrices of the GPU benchmark', () => {
  it('are the same entry for entry from generate.py and generated.ts', () => {
    const w = generate([4]);
    for (const s of SPECS) {
      const m = generateMatrix(s);
      const d = join(w, 'gen', `${s.name}.csr`);
      expect([...npy(join(d, 'rowPtr.npy'))]).toEqual([...m.rowPtr]);
      expect([...npy(join(d, 'colIdx.npy'))]).toEqual([...m.colIdx]);
      expect([...npy(join(d, 'vals.npy'))]).toEqual([...m.values]);
      expect(Number(readFileSync(join(d, 'cols'), 'utf8'))).toBe(m.cols);
    }
    // The stencil: 7 entries a row inside the grid, fewer on its faces; the R-MAT graph: the hub rows stand out.
    const st = generateMatrix(SPECS[0]!);
    const lens = Array.from({ length: st.rows }, (_, r) => st.rowPtr[r + 1]! - st.rowPtr[r]!);
    expect(st.colIdx.length).toBe(7 * 6 ** 3 - 6 * 6 ** 2);
    expect(Math.max(...lens)).toBe(7);
    const rm = generateMatrix(SPECS[1]!);
    const rl = Array.from({ length: rm.rows }, (_, r) => rm.rowPtr[r + 1]! - rm.rowPtr[r]!).sort((a, b) => b - a);
    // Hubs of 900 and 300 draws: about 600 and 260 distinct columns, above R-MAT's own longest rows here.
    expect(rl[0]).toBeGreaterThan(500);
    expect(rl[1]).toBeGreaterThan(220);
  });

  it.skipIf(!have('g++'))(
    'pass the generated CUDA checking driver (CPU emulation), inputs and references as written',
    async () => {
      const w = generate([8, 6]);
      for (const ex of ['spmv', 'spmm']) {
        const d = join(dir, ex);
        writeProject(d, emitCuda(exampleProgram(ex)));
        const flags = ['-std=c++17', '-DDYPE_CUDA_EMU', `-I${join(d, 'emu')}`, '-w', '-O1'];
        const b = await run(
          'g++',
          [...flags, '-x', 'c++', `${ex}.cu`, '-x', 'c++', 'dype_check.cpp', '-o', 'emu_check'],
          d,
        );
        expect(b.status, b.output).toBe(0);
        for (const s of SPECS)
          for (const k of ex === 'spmv' ? [1] : [8, 6]) {
            const g = (f: string): string => join(w, 'gen', `${s.name}${f}`);
            const args =
              k === 1
                ? ['--input', `A=${g('.csr')}`, '--input', `x=${g('-x.npy')}`, '--ref', `y=${g('-y.npy')}`]
                : ['--input', `A=${g('.csr')}`, '--input', `B=${g(`-B${k}.npy`)}`, '--ref', `Y=${g(`-Y${k}.npy`)}`];
            const r = await run(join(d, 'emu_check'), [...args, '--check-only'], d);
            expect(r.status, `${ex} ${s.name} K=${k}:\n${r.output}`).toBe(0);
            expect(r.output).toContain('all checks passed');
            expect(r.output).not.toMatch(/MISMATCH|no-ref/);
          }
        // Timed: every variant, and adaptive-rows a second time with the longest-row figure unknown (its
        // long-row pass queued whatever the rows), which bench/gpu/fit.ts anchors a queued operation on.
        const g = (f: string): string => join(w, 'gen', `${SPECS[0]!.name}${f}`);
        const inputs = ex === 'spmv' ? ['--input', `x=${g('-x.npy')}`] : ['--input', `B=${g('-B8.npy')}`];
        const csv = join(d, 'timed.csv');
        const t = await run(
          join(d, 'emu_check'),
          ['--input', `A=${g('.csr')}`, ...inputs, '--reps', '20', '--warmup', '1', '--csv', csv],
          d,
        );
        expect(t.status, t.output).toBe(0);
        const variants = readFileSync(csv, 'utf8')
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(',')[2]);
        expect(variants).toContain('adaptive-rows');
        expect(variants).toContain('adaptive-rows:longest-unknown');
      }
    },
    240_000,
  );
});
