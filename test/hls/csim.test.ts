/**
 * C simulation of every example on real matrices against the reference
 * interpreter. Each example's project is written by the BUILT cli
 * (`dype hls`, so the templates must be found from dist/), its host program
 * compiled once with g++ through the project's Makefile, then run on every
 * matrix. Tolerance (the kernels compute f32 in f32, with the nonzeros of a
 * row accumulated in the order the host schedules them; the interpreter in
 * float64): |hls - ref| <= 1e-4 * max(1, |ref|), non-finite values equal.
 * Matrices: cora.cites (edge list, empty rows), Erdos971 (empty rows),
 * adder_dcop_05 (one near-dense row), karate, west0479 (explicit zeros),
 * jazz (dense-ish, integer values), and for spmv and spmm the rectangular
 * lp_ship04l (42 empty rows) and ca-GrQc (5,242 columns: two SpMV windows of
 * 4,096, six SpMM windows of 1,024, loaded into alternating halves while the
 * window before streams). (olm1000 is left out: its entries of +-4.6e4
 * cancel, so f32 input rounding alone exceeds the bound, for any backend.)
 * The six projects are built two at a time (two cores) before the runs.
 * Skipped when the data directory or g++ is absent.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCached } from '../helpers/make-cached.js';
import {
  eachProject,
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

const RUN = HAVE_DATA && HAVE_GXX;
const SQUARE = ['cora.cites', 'Erdos971.mtx', 'adder_dcop_05.mtx', 'karate.mtx', 'west0479.mtx', 'jazz.mtx'];
const ANY = ['lp_ship04l.mtx', 'ca-GrQc.mtx'];
const EXAMPLES = ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'];
const ANY_SHAPE = new Set(['spmv', 'spmm']);

const work = mkdtempSync(join(tmpdir(), 'dype-hls-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const built = new Map<string, string>();
beforeAll(async () => {
  if (!RUN) return;
  await eachProject(EXAMPLES, work, async (ex, proj) => {
    // One g++ build per example: the Makefile's csim binary (shared with xrt.test.ts: test/helpers/make-cached.ts).
    const host = `build/csim/${ex}_host`;
    const r = await makeCached(proj, host, [host]);
    if (r.status !== 0) throw new Error(`${r.cmd}\n${r.output}`);
    built.set(ex, join(proj, 'build', 'csim', `${ex}_host`));
  });
}, 400_000);

describe.skipIf(!RUN)('C simulation of every example on real matrices equals the interpreter', () => {
  for (const ex of EXAMPLES) {
    it(`${ex}`, { timeout: 300_000 }, () => {
      const host = built.get(ex)!;
      if (ex === 'attention') {
        // Every kernel's own testbench (sddmm, spmv with max, generic, spmv, spmm): random data with
        // empty rows and a dense row, the kernel with its host packing against the plain loop nest.
        const tb = spawnSync('make', ['-s', '-C', join(work, ex), 'tb'], { encoding: 'utf8', timeout: 300_000 });
        expect(tb.status, tb.stderr).toBe(0);
        expect(tb.stdout.trim().split('\n')).toEqual([0, 1, 2, 3, 4].map((i) => `attention_op${i}: PASS`));
      }
      const { kernel, out } = exampleKernel(ex);
      for (const file of [...SQUARE, ...(ANY_SHAPE.has(ex) ? ANY : [])]) {
        const dir = join(work, `${ex}-${file}`);
        execFileSync('mkdir', ['-p', dir]);
        const A = loadCsr(file);
        const { files, params } = exampleInputs(ex, A, dir, join(MATRIX_DIR, file));
        const outPath = join(dir, 'out.mtx');
        const run = spawnSync(host, hostArgs(files, params, out, outPath), { encoding: 'utf8', timeout: 120_000 });
        expect(run.status, `${ex} on ${file}: ${run.stderr}`).toBe(0);
        const data = readArray(outPath);
        expectCloseToReference(`${ex} on ${file}`, data, referenceResult(kernel, out, files, params));
        if (ex === 'gcn' && file === 'adder_dcop_05.mtx') {
          // The documented command: make -C DIR csim with paths relative to where make was started.
          const rel = (p: string): string => (p.startsWith(dir) ? p.slice(dir.length + 1) : p);
          const mk = spawnSync(
            'make',
            [
              '-s',
              '-C',
              join(work, ex),
              'csim',
              `INPUTS=${Object.entries(files)
                .map(([k, v]) => `${k}=${rel(v)}`)
                .join(' ')}`,
              `OUTPUTS=${out}=y.mtx`,
            ],
            { cwd: dir, env: { ...process.env, PWD: dir }, encoding: 'utf8', timeout: 120_000 },
          );
          expect(mk.status, mk.stderr).toBe(0);
          expect(readArray(join(dir, 'y.mtx'))).toEqual(data);
        }
      }
    });
  }
});
