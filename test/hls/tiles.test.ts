/**
 * The sparse-row kernels over several row tiles, dense column tiles and
 * column windows, in C simulation against the interpreter. The real
 * matrices of csim.test.ts fit one row tile (522,240 SpMV rows, 65,536 SpMM
 * rows) and at most a few windows, so the per-channel processes, the loader
 * and the write-back would never leave their first tile there. Here the
 * emitted projects are rebuilt with 3 row slots a PE and 64-column windows
 * (the header's macros and the launch's packer arguments, the only places
 * those numbers live): adder_dcop_05 then spans 5 SpMV tiles and 19 SpMM
 * tiles of 29 windows each, with its 1,310-entry row shared, and SpMM runs
 * K = 20 in three dense tiles of 8 (the last partial).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FPGA_DESIGN_DEFAULTS } from '../../runtime/plan/fpga-designs.js';
import { formatMatrixMarketArray } from '../../runtime/io/mtx-write.js';
import { Rng } from '../../runtime/random.js';
import { example, runCli } from '../helpers/cli.js';
import {
  HAVE_DATA,
  HAVE_GXX,
  MATRIX_DIR,
  exampleInputs,
  exampleKernel,
  expectCloseToReference,
  hostArgs,
  loadCsr,
  readArray,
  referenceResult,
} from './example-data.js';

const SLOTS = 3;
const WIN = 64;
const work = mkdtempSync(join(tmpdir(), 'dype-hls-tiles-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The project of `ex` with op `op`'s design shrunk to SLOTS row slots and WIN-column windows. */
function smallTiles(ex: string, op: string, design: 'spmv' | 'spmm'): string {
  const proj = join(work, ex);
  const r = runCli(['hls', example(`${ex}.dy`), '-o', proj]);
  expect(r.status, r.stderr).toBe(0);
  const c = FPGA_DESIGN_DEFAULTS[design];
  const patch = (file: string, from: string, to: string): void => {
    const path = join(proj, op, file);
    const text = readFileSync(path, 'utf8');
    expect(text, `${file}: ${from}`).toContain(from);
    writeFileSync(path, text.split(from).join(to));
  };
  patch(`${op}.h`, `#define ${op}_ROW_SLOTS ${c.rowSlots}\n`, `#define ${op}_ROW_SLOTS ${SLOTS}\n`);
  patch(`${op}.h`, `#define ${op}_COL_WIN ${c.colWindow}\n`, `#define ${op}_COL_WIN ${WIN}\n`);
  const pe = `${c.channels}, ${c.pesPerChannel}`;
  patch(`${op}_launch.h`, `${pe}, ${c.rowSlots}, ${c.colWindow}, `, `${pe}, ${SLOTS}, ${WIN}, `);
  execFileSync('make', ['-s', '-C', proj, `build/csim/${ex}_host`], { timeout: 300_000 });
  return join(proj, 'build', 'csim', `${ex}_host`);
}

describe.skipIf(!(HAVE_DATA && HAVE_GXX))('sparse-row kernels over many row tiles, dense tiles and windows', () => {
  for (const [ex, op, design] of [
    ['sssp', 'sssp_op2', 'spmv'],
    ['spmm', 'spmm_op0', 'spmm'],
  ] as const) {
    it(`${ex} (${design}) on adder_dcop_05 equals the interpreter`, { timeout: 300_000 }, () => {
      const host = smallTiles(ex, op, design);
      const file = 'adder_dcop_05.mtx';
      const dir = join(work, `${ex}-run`);
      execFileSync('mkdir', ['-p', dir]);
      const A = loadCsr(file);
      const { files, params } = exampleInputs(ex, A, dir, join(MATRIX_DIR, file));
      if (ex === 'spmm') {
        const rng = new Rng(17);
        const data = Float64Array.from({ length: A.cols * 20 }, () => rng.uniform(-1, 1));
        writeFileSync(files['B']!, formatMatrixMarketArray({ format: 'dense', shape: [A.cols, 20], data }, 'real'));
      }
      const { kernel, out } = exampleKernel(ex);
      const outPath = join(dir, 'out.mtx');
      const run = spawnSync(host, hostArgs(files, params, out, outPath), { encoding: 'utf8', timeout: 120_000 });
      expect(run.status, run.stderr).toBe(0);
      // The schedule the host printed: shared rows were folded (the long row left its lane).
      expect(run.stdout + run.stderr).toMatch(
        new RegExp(`${op}: \\d+ runs?, \\d+ scheduled stream cycles and [1-9]\\d* folding`),
      );
      expectCloseToReference(`${ex} on ${file}`, readArray(outPath), referenceResult(kernel, out, files, params));
    });
  }
});
