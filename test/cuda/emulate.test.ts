/**
 * No GPU here, so the generated device code is also run on the CPU: each
 * program's .cu is compiled as C++ against the emulation every project ships
 * (emu/cuda_runtime_api.h: threads as fibers that meet at every barrier and
 * shuffle; -DDYPE_CUDA_EMU makes launches calls), linked with its unchanged
 * dype_check driver, and run on real matrices against reference outputs of
 * `dype run --backend reference`.
 * Every variant of every op must match. This checks what the kernels
 * compute, not how fast they are or CUDA-specific behaviour (memory model,
 * occupancy); the nvcc tests check that the same text compiles for sm_90.
 * Skipped where g++ is missing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { formatMatrixMarketCoordinate } from '../../runtime/io/mtx-write.js';
import { toCsr, toDense } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { runCli } from '../helpers/cli.js';
import { columnStochastic } from '../helpers/example-inputs.js';
import {
  type Job,
  denseMtx,
  exampleProgram,
  fixtureProgram,
  lcg,
  ROOT,
  writeCsrDir,
  writeNpy,
  writeProject,
} from './helpers.js';
import { have, pool, run } from './nvcc.js';

const GXX = have('g++');
const UBSAN = ['-fsanitize=signed-integer-overflow', '-fno-sanitize-recover=signed-integer-overflow'];
if (!GXX) console.warn('test/cuda: g++ not found; skipping the CPU emulation of the generated kernels');

const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-emu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MATRICES = join(ROOT, '..', 'shared', 'data', 'matrices');

const rnd = lcg(7);
/** Programs of test/cuda/fixtures (the others are examples). */
const FIXTURES = new Set(['shapes', 'spmm64', 'walks']);
const dense = (rows: number, cols: number, nonneg = false): string => denseMtx(rows, cols, rnd, nonneg);

describe.skipIf(!GXX)('generated kernels run on a CPU emulation of CUDA', () => {
  it('match the reference in every variant of every example', async () => {
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    const file = (name: string, text: string): string => {
      const p = join(data, name);
      writeFileSync(p, text);
      return p;
    };
    // jazz: rows up to 100 entries (rows split across merge-path threads); Erdos971: 39 empty rows.
    const jazz = join(MATRICES, 'jazz.mtx');
    const erdos = join(MATRICES, 'Erdos971.mtx');
    const x198 = file('x198.mtx', dense(198, 1));
    const X198 = file('X198.mtx', dense(198, 16));
    const x472 = file('x472.mtx', dense(472, 1));
    const X472 = file('X472.mtx', dense(472, 20));
    const W1 = file('W1.mtx', dense(16, 16));
    const W2 = file('W2.mtx', dense(16, 7));
    // pagerank stops on its L1 test: it needs a column-stochastic A (raw jazz grows without bound) and r0 = 1/n.
    const jazzStochastic = file(
      'jazz-stochastic.mtx',
      formatMatrixMarketCoordinate(columnStochastic(toCsr(loadMatrix(jazz))), 'real'),
    );
    const r0 = file(
      'r0.mtx',
      `%%MatrixMarket matrix array real general\n198 1\n${'0.005050505050505051\n'.repeat(198)}`,
    );
    const src = Array.from({ length: 472 }, (_, i) => (i === 3 ? '0' : 'inf'));
    const d0 = file('d0.mtx', `%%MatrixMarket matrix array real general\n472 1\n${src.join('\n')}\n`);
    const w = file(
      'w.mtx',
      `%%MatrixMarket matrix array integer general\n198 1\n${Array.from({ length: 198 }, (_, i) => String(((i * 37) % 101) - 50)).join('\n')}\n`,
    );
    // adaptive-rows at its narrowest and widest groups: mean row length 1.5 (2 lanes, 16 rows a warp, the last warp
    // part empty) and 40 (32 lanes, rows longer than the group).
    const coo = (n: number, entries: [number, number][]): string =>
      `%%MatrixMarket matrix coordinate real general\n${n} ${n} ${entries.length}\n${entries.map(([i, j]) => `${i + 1} ${j + 1} ${((i * 7 + j * 3) % 11) - 5}`).join('\n')}\n`;
    const pairs = file(
      'pairs300.mtx',
      coo(
        300,
        Array.from({ length: 300 }, (_, i): [number, number][] =>
          i % 2 === 0
            ? [
                [i, i],
                [i, (i + 1) % 300],
              ]
            : [[i, i]],
        ).flat(),
      ),
    );
    const full = file(
      'full40.mtx',
      coo(
        40,
        Array.from({ length: 1600 }, (_, k): [number, number] => [k % 40, Math.floor(k / 40)]),
      ),
    );
    // merge-path's tiles (2048 rows + entries): a hub row of 5000 entries crosses at least three, among rows of 0-3;
    // for adaptive-rows (4 lanes a row) it and rows of 300 and 129 entries are long rows, each run by a block.
    const longRows = new Map([
      [5, 5000],
      [17, 300],
      [4000, 129],
    ]);
    const hub = file(
      'hub5000.mtx',
      coo(
        5000,
        Array.from({ length: 5000 }, (_, i): [number, number][] =>
          longRows.has(i)
            ? Array.from({ length: longRows.get(i)! }, (_, j): [number, number] => [i, j])
            : Array.from({ length: i % 4 }, (_, j): [number, number] => [i, (i * 7 + j * 13) % 5000]),
        ).flat(),
      ),
    );
    const X198x40 = file('X198x40.mtx', dense(198, 40));
    /** A Matrix Market input as NumPy: a sparse one as a .csr folder, a dense one as a float32 .npy array. */
    const npyOf = (name: string, mtx: string): string => {
      const m = loadMatrix(mtx);
      const p = join(data, name);
      if (name.endsWith('.csr')) writeCsrDir(p, toCsr(m));
      else {
        const d = toDense(m);
        writeNpy(p, d.shape, Float32Array.from(d.data));
      }
      return p;
    };
    const jobs: Job[] = [
      { prog: 'spmv', matrix: 'jazz', inputs: { A: jazz, x: x198 }, params: [], outs: ['y'] },
      {
        prog: 'spmv',
        matrix: 'hub5000',
        inputs: { A: hub, x: file('x5000.mtx', dense(5000, 1)) },
        params: [],
        outs: ['y'],
      },
      {
        prog: 'spmv',
        matrix: 'pairs300',
        inputs: { A: pairs, x: file('x300.mtx', dense(300, 1)) },
        params: [],
        outs: ['y'],
      },
      {
        prog: 'spmv',
        matrix: 'full40',
        inputs: { A: full, x: file('x40.mtx', dense(40, 1)) },
        params: [],
        outs: ['y'],
      },
      { prog: 'spmv', matrix: 'erdos', inputs: { A: erdos, x: x472 }, params: [], outs: ['y'] },
      { prog: 'spmm', matrix: 'erdos', inputs: { A: erdos, B: X472 }, params: [], outs: ['Y'] },
      // merge-path's SpMM tiles (512 rows + entries, 64 a warp): the hub row crosses tiles and warps at 20 columns;
      // 40 columns take the lanes twice over.
      {
        prog: 'spmm',
        matrix: 'hub5000',
        inputs: { A: hub, B: file('X5000x20.mtx', dense(5000, 20)) },
        params: [],
        outs: ['Y'],
      },
      {
        prog: 'spmm',
        matrix: 'jazz',
        inputs: { A: jazz, B: X198x40 },
        params: [],
        outs: ['Y'],
      },
      // adaptive-rows' SpMM form sends the hub row (5000 entries, over 1024) to its long-row kernel: the float4 one
      // at 20 columns (above), the scalar one at 7.
      {
        prog: 'spmm',
        matrix: 'hub5000',
        inputs: { A: hub, B: file('X5000x7.mtx', dense(5000, 7)) },
        params: [],
        outs: ['Y'],
      },
      // Vector columns (float4 a lane): 132 columns take warp-per-row's lanes twice, the second time on one lane.
      {
        prog: 'spmm',
        matrix: 'jazz',
        inputs: { A: jazz, B: file('X198x132.mtx', dense(198, 132)) },
        params: [],
        outs: ['Y'],
      },
      // double2 a lane where 2 divides the width (6: adaptive-rows on 4 lanes, 1 idle; 66: warp-per-row), scalar at 5.
      ...[6, 66, 5].map((k): Job => ({
        prog: 'spmm64',
        matrix: 'jazz',
        inputs: { A: jazz, B: file(`X198x${k}.f64.mtx`, dense(198, k)) },
        params: [],
        outs: ['Y'],
      })),
      // The same SpMM with NumPy inputs and references (bench/gpu's generated matrices): a .csr folder, a .npy
      // dense operand, float64 .npy references.
      {
        prog: 'spmm',
        matrix: 'jazz-npy',
        inputs: { A: jazz, B: X198x40 },
        driverInputs: { A: npyOf('jazz.csr', jazz), B: npyOf('X198x40.npy', X198x40) },
        npyRefs: true,
        params: [],
        outs: ['Y'],
      },
      // adaptive-rows over 5 columns: groups of 8 lanes (3 idle), 4 rows a warp.
      {
        prog: 'spmm',
        matrix: 'jazz',
        inputs: { A: jazz, B: file('X198x5.mtx', dense(198, 5)) },
        params: [],
        outs: ['Y'],
      },
      // Two walks of A in one op (fixtures/walks.dy); 20 columns: merge-path's vector tile (float4 a lane).
      {
        prog: 'walks',
        matrix: 'jazz',
        inputs: { A: jazz, B: file('X198x20.mtx', dense(198, 20)), Q: file('Q198x20.mtx', dense(198, 20)) },
        params: [],
        outs: ['Y', 'Z'],
      },
      { prog: 'gcn', matrix: 'jazz', inputs: { A: jazz, X: X198, W1, W2 }, params: [], outs: ['Y'] },
      { prog: 'pagerank', matrix: 'jazz', inputs: { A: jazzStochastic, r0 }, params: ['d=0.85'], outs: ['r'] },
      { prog: 'sssp', matrix: 'erdos', inputs: { A: erdos, d0 }, params: [], outs: ['d'] },
      { prog: 'attention', matrix: 'jazz', inputs: { A: jazz, Q: X198, K: X198, V: X198 }, params: [], outs: ['O'] },
      {
        prog: 'shapes',
        matrix: 'jazz',
        inputs: { A: jazz, B: jazz, x: x198, w },
        params: ['int=7'],
        outs: ['t', 'S', 'u', 'z', 'flags', 's', 'v', 'Sc'],
      },
    ];
    // Build: all programs in one translation unit, a driver per program.
    const progs = [...new Set(jobs.map((j) => j.prog))];
    for (const p of progs) {
      const d = join(dir, p);
      mkdirSync(d, { recursive: true });
      const program = FIXTURES.has(p) ? fixtureProgram(p) : exampleProgram(p);
      writeProject(d, emitCuda(program));
    }
    writeFileSync(join(dir, 'all.cpp'), progs.map((p) => `#include "${p}/${p}.cu"\n`).join(''));
    const flags = ['-std=c++17', '-DDYPE_CUDA_EMU', `-I${join(dir, progs[0]!, 'emu')}`, '-w'];
    const built = await pool(
      [
        // A signed overflow in a kernel (undefined in C++; integers wrap by docs/LANGUAGE.md) stops the run.
        () => run('g++', ['-x', 'c++', '-O1', ...flags, ...UBSAN, '-c', 'all.cpp', '-o', 'all.o'], dir),
        ...progs.map((p) => () => run('g++', ['-O0', ...flags, '-c', 'dype_check.cpp', '-o', 'check.o'], join(dir, p))),
      ],
      2,
    );
    for (const b of built) expect(b.status, `${b.cmd}\n${b.output}`).toBe(0);
    for (const p of progs) {
      const l = await run(
        'g++',
        [...UBSAN, join(dir, p, 'check.o'), join(dir, 'all.o'), '-o', join(dir, p, 'emu_check')],
        dir,
      );
      expect(l.status, `${l.cmd}\n${l.output}`).toBe(0);
    }
    // References, then the emulated driver on the same files.
    const checks = jobs.map((j, n) => {
      const refs = j.outs.map((o) => `${o}=${join(data, `ref${n}.${o}.mtx`)}`);
      const driverRefs = j.npyRefs ? j.outs.map((o) => `${o}=${join(data, `ref${n}.${o}.npy`)}`) : refs;
      const r = runCli(
        [
          'run',
          join(ROOT, FIXTURES.has(j.prog) ? 'test/cuda/fixtures' : 'examples', `${j.prog}.dy`),
          '--backend',
          'reference',
          ...Object.entries(j.inputs).flatMap(([k, v]) => ['--input', `${k}=${v}`]),
          ...j.params.flatMap((p) => ['--param', p]),
          ...refs.flatMap((o) => ['--out', o]),
        ],
        { timeoutMs: 60_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      if (j.npyRefs)
        for (const o of j.outs) {
          const d = toDense(loadMatrix(join(data, `ref${n}.${o}.mtx`)));
          writeNpy(join(data, `ref${n}.${o}.npy`), d.shape, Float64Array.from(d.data));
        }
      return () =>
        run(
          join(dir, j.prog, 'emu_check'),
          [
            ...Object.entries(j.driverInputs ?? j.inputs).flatMap(([k, v]) => ['--input', `${k}=${v}`]),
            ...j.params.flatMap((p) => ['--param', p]),
            ...driverRefs.flatMap((o) => ['--ref', o]),
            '--check-only',
          ],
          dir,
        );
    });
    const results = await pool(checks, 2);
    results.forEach((r, n) => {
      const j = jobs[n]!;
      expect(r.status, `${j.prog} on ${j.matrix}:\n${r.output}`).toBe(0);
      expect(r.output).toContain('all checks passed');
      expect(r.output).not.toMatch(/MISMATCH|no-ref/);
    });
    // Every variant was compared: one line per variant beyond the first, plus the program.
    const gcn = results[jobs.findIndex((j) => j.prog === 'gcn')]!.output;
    expect(gcn.match(/ ok /g)?.length).toBe(1 + 2 + 3 + 2 + 3);
  }, 300_000);
});
