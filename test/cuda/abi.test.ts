/**
 * The native ABI of the generated CUDA projects, on their CPU emulation
 * (lib<prog>_cuda_emu.so from `make emu`, g++ only):
 *
 * - dype_abi_check_emu runs every op of every example and of the shapes
 *   fixture through the ABI alone (alloc, upload, launch, copy, download),
 *   whole and split over 2 and 3 row ranges balanced by entries on different
 *   emulated devices, the slices all-gathered by copy (peer), every
 *   implementation of every op, on jazz and Erdos971, against
 *   `dype run --backend reference`; once more without peer access, so that
 *   copies are staged through the host;
 * - loaded in process through koffi with runtime/native/abi.ts's prototypes:
 *   the documented codes for a buffer of another device, a copy past an
 *   allocation's end and the other misuses, and kernels running on two
 *   threads at once.
 *
 * Skipped where g++ or make is missing.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koffi from 'koffi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileProgram } from '../../cli/compile.js';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { programHash } from '../../codegen/native/hash.js';
import {
  ABI_ERRORS,
  ABI_FUNCTIONS,
  ABI_VERSION,
  abiPrefix,
  longestRun,
  type AbiFunction,
} from '../../runtime/native/abi.js';
import { formatMatrixMarketCoordinate } from '../../runtime/io/mtx-write.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { CLI } from '../helpers/cli.js';
import { columnStochastic } from '../helpers/example-inputs.js';
import { type Job, denseMtx, exampleProgram, fixtureProgram, lcg, ROOT, writeProject } from './helpers.js';
import { makeCached } from '../helpers/make-cached.js';
import { have, pool, run } from './nvcc.js';

const TOOLS = have('g++') && have('make');
if (!TOOLS) console.warn('test/cuda: g++ or make not found; skipping the native ABI tests on the CPU emulation');

const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-abi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MATRICES = join(ROOT, '..', 'shared', 'data', 'matrices');
const PROGRAMS = ['spmv', 'spmm', 'gcn', 'pagerank', 'sssp', 'attention', 'shapes'];
// PageRank at most 20 trips: the check runs every trip through every op's implementations on 1, 2 and 3 devices,
// and what it checks is each op through the ABI, not how long the loop takes to converge.
const PAGERANK = join(dir, 'pagerank.dy');
writeFileSync(
  PAGERANK,
  readFileSync(join(ROOT, 'examples', 'pagerank.dy'), 'utf8').replace(/repeat \d+ until/, 'repeat 20 until'),
);
const source = (p: string): string =>
  p === 'shapes'
    ? join(ROOT, 'test', 'cuda', 'fixtures', 'shapes.dy')
    : p === 'pagerank'
      ? PAGERANK
      : join(ROOT, 'examples', `${p}.dy`);

/** Every program on a matrix with n rows: inputs written under dir/data. */
function jobsFor(matrix: string, path: string, n: number): Job[] {
  const data = join(dir, 'data', matrix);
  mkdirSync(data, { recursive: true });
  const rnd = lcg(11);
  const file = (name: string, text: string): string => {
    const p = join(data, name);
    writeFileSync(p, text);
    return p;
  };
  const x = file('x.mtx', denseMtx(n, 1, rnd));
  const X16 = file('X16.mtx', denseMtx(n, 16, rnd));
  const X20 = file('X20.mtx', denseMtx(n, 20, rnd));
  const W1 = file('W1.mtx', denseMtx(16, 16, rnd));
  const W2 = file('W2.mtx', denseMtx(16, 7, rnd));
  const r0 = file('r0.mtx', denseMtx(n, 1, rnd, true));
  // pagerank stops on its L1 test: a column-stochastic A (the raw pattern grows without bound and runs every trip).
  const stochastic = file(
    'A-stochastic.mtx',
    formatMatrixMarketCoordinate(columnStochastic(toCsr(loadMatrix(path))), 'real'),
  );
  const d0 = file(
    'd0.mtx',
    `%%MatrixMarket matrix array real general\n${n} 1\n${Array.from({ length: n }, (_, i) => (i === 3 ? '0' : 'inf')).join('\n')}\n`,
  );
  const w = file(
    'w.mtx',
    `%%MatrixMarket matrix array integer general\n${n} 1\n${Array.from({ length: n }, (_, i) => String(((i * 37) % 101) - 50)).join('\n')}\n`,
  );
  const A = path;
  return [
    { prog: 'spmv', matrix, inputs: { A, x }, params: [], outs: ['y'] },
    { prog: 'spmm', matrix, inputs: { A, B: X20 }, params: [], outs: ['Y'] },
    { prog: 'gcn', matrix, inputs: { A, X: X16, W1, W2 }, params: [], outs: ['Y'] },
    { prog: 'pagerank', matrix, inputs: { A: stochastic, r0 }, params: ['d=0.85'], outs: ['r'] },
    { prog: 'sssp', matrix, inputs: { A, d0 }, params: [], outs: ['d'] },
    { prog: 'attention', matrix, inputs: { A, Q: X16, K: X16, V: X16 }, params: [], outs: ['O'] },
    {
      prog: 'shapes',
      matrix,
      inputs: { A, B: A, x, w },
      params: ['int=7'],
      outs: ['t', 'S', 'u', 'z', 'flags', 's', 'v', 'Sc'],
    },
  ];
}

/** Writes the job's reference outputs with the float64 interpreter; returns the driver's arguments. */
async function checkArgs(j: Job): Promise<string[]> {
  const refs = j.outs.map((o) => `${o}=${join(dir, 'data', j.matrix, `ref-${j.prog}.${o}.mtx`)}`);
  const inputs = Object.entries(j.inputs).flatMap(([k, v]) => ['--input', `${k}=${v}`]);
  const params = j.params.flatMap((p) => ['--param', p]);
  const r = await run(
    process.execPath,
    [CLI, 'run', source(j.prog), '--backend', 'reference', ...inputs, ...params, ...refs.flatMap((o) => ['--out', o])],
    ROOT,
    60_000,
  );
  expect(r.status, `${r.cmd}\n${r.output}`).toBe(0);
  return [...inputs, ...params, ...refs.flatMap((o) => ['--ref', o])];
}

const project = (p: string): string => join(dir, p);
// The drivers' children see the default count and peers, whatever the caller's environment says.
const EMU_ENV = { ...process.env, DYPE_EMU_DEVICES: '8', DYPE_EMU_PEER: '1' };

describe.skipIf(!TOOLS)('the native ABI of CUDA projects on the CPU emulation', () => {
  beforeAll(async () => {
    for (const p of PROGRAMS)
      writeProject(
        project(p),
        emitCuda(
          p === 'shapes' ? fixtureProgram(p) : p === 'pagerank' ? compileProgram(PAGERANK).program : exampleProgram(p),
        ),
      );
    // The product's own build (`make emu`, one target at a time so that the library is the one native/partitions'
    // `dype build --emulate` builds, and built once: test/helpers/make-cached.ts); the drivers at -O0 only to keep
    // the test short (the kernels stay at the suite's EMUFLAGS).
    const built = await pool(
      PROGRAMS.map((p) => async () => {
        const lib = await makeCached(project(p), `lib${p}_cuda_emu.so`, [`lib${p}_cuda_emu.so`]);
        if (lib.status !== 0) return lib;
        return makeCached(project(p), 'dype_abi_check_emu', ['dype_abi_check_emu'], {
          vars: { CHECKFLAGS: '-O0 -std=c++17' },
        });
      }),
      2,
    );
    for (const b of built) expect(b.status, `${b.cmd}\n${b.output}`).toBe(0);
  }, 300_000);

  it('runs every op through the ABI alone, whole and split over 2 and 3 emulated devices, as the reference does', async () => {
    // jazz: rows of up to 100 entries (merge-path shares split them); Erdos971: 39 empty rows.
    const jobs = [
      ...jobsFor('jazz', join(MATRICES, 'jazz.mtx'), 198),
      ...jobsFor('erdos', join(MATRICES, 'Erdos971.mtx'), 472),
    ];
    const runs = jobs.map(
      (j) => async () => run(join(project(j.prog), 'dype_abi_check_emu'), await checkArgs(j), dir, 240_000, EMU_ENV),
    );
    const results = await pool(runs, 2);
    results.forEach((r, n) => {
      const j = jobs[n]!;
      expect(r.status, `${j.prog} on ${j.matrix}:\n${r.output}`).toBe(0);
      expect(r.output).toContain('library: program ' + j.prog + ', backend cuda-emu, 8 device(s)');
      expect(r.output).toContain('on 3 instance(s) (devices 0 1 2)');
      expect(r.output).toContain('all checks passed');
      expect(r.output).not.toMatch(/MISMATCH|no-ref/);
    });
    // Every implementation of every op, on every instance of every split: gcn's dense ops have 3
    // implementations and its aggregations 4 (the program in every op's first, then 2 + 3 + 2 + 3 runs), each
    // compared on 1 + 2 + 3 instances.
    const gcn = results[jobs.findIndex((j) => j.prog === 'gcn')]!.output;
    expect(gcn.match(/ ok /g)?.length).toBe((1 + 2 + 3 + 2 + 3) * (1 + 2 + 3));
    expect(gcn).toMatch(/op1 merge-path @2\/3 Y +ok/);
  }, 300_000);

  it('stages copies through the host where devices are no peers', async () => {
    const j = jobsFor('jazz-nopeer', join(MATRICES, 'jazz.mtx'), 198).find((x) => x.prog === 'pagerank')!;
    const args = await checkArgs(j);
    const r = await run(join(project('pagerank'), 'dype_abi_check_emu'), [...args, '--splits', '2,3'], dir, 120_000, {
      ...EMU_ENV,
      DYPE_EMU_PEER: '0',
    });
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('all checks passed');
  }, 120_000);

  describe('in process (koffi)', () => {
    // Read by the library at its first call: six emulated devices here.
    process.env['DYPE_EMU_DEVICES'] = '6';
    type Abi = { [K in AbiFunction]: ReturnType<ReturnType<typeof koffi.load>['func']> };
    const load = (prog: string): Abi => {
      const lib = koffi.load(join(project(prog), `lib${prog}_cuda_emu.so`));
      const prefix = abiPrefix(prog, 'cuda');
      const out = {} as Abi;
      for (const [name, proto] of Object.entries(ABI_FUNCTIONS))
        out[name as AbiFunction] = lib.func(proto.replace(`${name}(`, `${prefix}${name}(`));
      return out;
    };
    const alloc = (f: Abi, dev: number, bytes: number): unknown => {
      const out: unknown[] = [null];
      expect(f.alloc(dev, bytes, out)).toBe(0);
      return out[0];
    };
    /** A random CSR matrix of `rows` rows with 0..2k entries per row, and the float32 SpMV of a vector x. */
    const spmvCase = (
      rows: number,
      k: number,
    ): { ptr: Int32Array; idx: Int32Array; val: Float32Array; x: Float32Array; y: Float32Array } => {
      const rnd = lcg(5);
      const ptr = new Int32Array(rows + 1);
      const idx: number[] = [];
      for (let i = 0; i < rows; i++) {
        const len = Math.floor(rnd() * 2 * k);
        const cols = new Set<number>();
        while (cols.size < len) cols.add(Math.min(rows - 1, Math.floor(rnd() * rows)));
        idx.push(...[...cols].sort((a, b) => a - b));
        ptr[i + 1] = idx.length;
      }
      const val = Float32Array.from(idx, () => rnd() - 0.5);
      const x = Float32Array.from({ length: rows }, () => rnd());
      const y = new Float32Array(rows);
      for (let i = 0; i < rows; i++) {
        let acc = 0;
        for (let p = ptr[i]!; p < ptr[i + 1]!; p++) acc = Math.fround(acc + Math.fround(val[p]! * x[idx[p]!]!));
        y[i] = acc;
      }
      return { ptr, idx: Int32Array.from(idx), val, x, y };
    };
    /** Uploads an SpMV case to device dev: buffers in the manifest's order (rowPtr, colIdx, vals, x, y). */
    const place = (f: Abi, dev: number, c: ReturnType<typeof spmvCase>): unknown[] => {
      const arrays = [c.ptr, c.idx, c.val, c.x, new Float32Array(c.y.length)];
      return arrays.map((a) => {
        const p = alloc(f, dev, a.byteLength);
        expect(f.upload(dev, p, 0, a, a.byteLength, null)).toBe(0);
        return p;
      });
    };

    it('identifies itself and returns the documented codes for misuse', () => {
      const f = load('spmv');
      expect(f.abi_version()).toBe(ABI_VERSION);
      expect(f.program()).toBe('spmv');
      expect(f.program_hash()).toBe(programHash(exampleProgram('spmv').module));
      expect(f.backend()).toBe('cuda-emu');
      expect(f.device_count()).toBe(6);
      expect(f.device_name(5)).toMatch(/CPU emulation/);
      expect(f.device_name(6)).toBeNull();
      expect(f.op_impls('spmv', 'op0')).toBe('adaptive-rows,warp-per-row,merge-path,row-per-thread');
      expect(f.op_impls('spmv', 'op9')).toBeNull();
      const h = f.op_lookup('spmv', 'op0', 'merge-path') as number;
      expect(h).toBeGreaterThanOrEqual(0);
      expect(f.op_lookup('spmv', 'op0', 'tiled')).toBe(ABI_ERRORS.BAD_VARIANT);
      expect([f.op_buffer_count(h), f.op_size_count(h), f.op_buffer_count(99)]).toEqual([5, 6, -1]);

      const c = spmvCase(300, 6);
      const on0 = place(f, 0, c);
      const on1 = place(f, 1, c);
      const sizes = [300, 300, 300, c.idx.length, longestRun(c.ptr), 0];
      // Right: every buffer on device 0, whole and in two ranges.
      expect(f.launch(0, h, on0, sizes, 0, -1, null)).toBe(0);
      expect(f.launch(0, h, on0, sizes, 0, 120, null)).toBe(0);
      expect(f.launch(0, h, on0, sizes, 120, -1, null)).toBe(0);
      const y = new Float32Array(300);
      expect(f.download(0, y, on0[4], 0, y.byteLength, null)).toBe(0);
      expect(f.sync(0, null)).toBe(0);
      for (let i = 0; i < 300; i++) expect(y[i]).toBeCloseTo(c.y[i]!, 4);
      // adaptive-rows takes the entry count too (its lanes per row): whole and in two ranges.
      const a = f.op_lookup('spmv', 'op0', 'adaptive-rows') as number;
      y.fill(0);
      expect(f.upload(0, on0[4], 0, y, y.byteLength, null)).toBe(0);
      expect(f.launch(0, a, on0, sizes, 0, 120, null)).toBe(0);
      expect(f.launch(0, a, on0, sizes, 120, -1, null)).toBe(0);
      expect(f.download(0, y, on0[4], 0, y.byteLength, null)).toBe(0);
      expect(f.sync(0, null)).toBe(0);
      for (let i = 0; i < 300; i++) expect(y[i]).toBeCloseTo(c.y[i]!, 4);
      // A buffer of device 1 in a launch on device 0.
      expect(f.launch(0, h, [on0[0], on0[1], on0[2], on1[3], on0[4]], sizes, 0, -1, null)).toBe(ABI_ERRORS.BAD_DEVICE);
      // A copy past the end of the destination, and of the source.
      expect(f.copy(1, on1[4], 8, 0, on0[4], 0, y.byteLength, null)).toBe(ABI_ERRORS.RANGE);
      expect(f.copy(1, on1[4], 0, 0, on0[4], 4, y.byteLength, null)).toBe(ABI_ERRORS.RANGE);
      expect(f.copy(1, on1[4], 0, 0, on0[4], 0, y.byteLength, null)).toBe(0);
      expect(f.upload(0, on0[4], 1, y, y.byteLength, null)).toBe(ABI_ERRORS.RANGE);
      expect(f.download(0, y, on0[4], y.byteLength, 1, null)).toBe(ABI_ERRORS.RANGE);
      expect(f.copy(1, on0[4], 0, 0, on0[4], 0, 4, null)).toBe(ABI_ERRORS.BAD_DEVICE);
      // Devices, handles, sizes, ranges and streams.
      expect(f.launch(6, h, on0, sizes, 0, -1, null)).toBe(ABI_ERRORS.BAD_DEVICE);
      expect(f.launch(-1, h, on0, sizes, 0, -1, null)).toBe(ABI_ERRORS.BAD_DEVICE);
      expect(f.launch(0, 99, on0, sizes, 0, -1, null)).toBe(ABI_ERRORS.BAD_VARIANT);
      expect(f.launch(0, h, on0, [300, 300, 300, 2 ** 31, 0, 0], 0, -1, null)).toBe(ABI_ERRORS.TOO_LARGE);
      expect(f.launch(0, h, on0, [-1, 300, 300, c.idx.length, 0, 0], 0, -1, null)).toBe(ABI_ERRORS.BAD_SIZE);
      expect(f.launch(0, h, on0, sizes, 50, 10, null)).toBe(ABI_ERRORS.RANGE);
      expect(f.launch(0, h, on0, sizes, -5, -1, null)).toBe(ABI_ERRORS.RANGE);
      const s1: unknown[] = [null];
      expect(f.stream_create(1, s1)).toBe(0);
      expect(f.launch(0, h, on0, sizes, 0, -1, s1[0])).toBe(ABI_ERRORS.BAD_DEVICE);
      expect(f.sync(0, s1[0])).toBe(ABI_ERRORS.BAD_DEVICE);
      expect(f.launch(1, h, on1, sizes, 0, -1, s1[0])).toBe(0);
      expect(f.sync(1, s1[0])).toBe(0);
      expect(f.stream_destroy(0, s1[0])).toBe(ABI_ERRORS.BAD_DEVICE);
      expect(f.stream_destroy(1, s1[0])).toBe(0);
      // merge-path's workspace, kept per stream, grows with the call: a small call, then a larger one on one stream.
      const big = spmvCase(3000, 9);
      const onBig = place(f, 1, big);
      const s2: unknown[] = [null];
      expect(f.stream_create(1, s2)).toBe(0);
      expect(f.launch(1, h, on1, sizes, 0, -1, s2[0])).toBe(0);
      expect(f.launch(1, h, onBig, [3000, 3000, 3000, big.idx.length, longestRun(big.ptr), 0], 0, -1, s2[0])).toBe(0);
      const yBig = new Float32Array(3000);
      expect(f.download(1, yBig, onBig[4], 0, yBig.byteLength, s2[0])).toBe(0);
      expect(f.sync(1, s2[0])).toBe(0);
      for (let r = 0; r < 3000; r++) expect(yBig[r]).toBeCloseTo(big.y[r]!, 4);
      expect(f.stream_destroy(1, s2[0])).toBe(0);
      for (const p of onBig) expect(f.free(1, p)).toBe(0);
      expect(f.free(1, on0[0])).toBe(ABI_ERRORS.BAD_DEVICE);
      for (const p of on0) expect(f.free(0, p)).toBe(0);
      for (const p of on1) expect(f.free(1, p)).toBe(0);
      expect(f.error_text(ABI_ERRORS.BAD_DEVICE)).toMatch(/device/);
      expect(f.error_text(ABI_ERRORS.RANGE)).toMatch(/outside an allocation/);
      expect(f.error_text(1)).toMatch(/invalid argument/);

      // An op without a parallel loop takes no row range.
      const g = load('shapes');
      const t = g.op_lookup('shapes', 'op0', 'serial') as number;
      const xs = alloc(g, 0, 8 * 10);
      const ts = alloc(g, 0, 8);
      expect(g.launch(0, t, [xs, ts], [10, 0, 0, 0, 0, 0], 0, 5, null)).toBe(ABI_ERRORS.UNSUPPORTED);
      expect(g.launch(0, t, [xs, ts], [10, 0, 0, 0, 0, 0], 0, -1, null)).toBe(0);
      expect(g.free(0, xs)).toBe(0);
      expect(g.free(0, ts)).toBe(0);
    });

    it('runs kernels on two threads at once, each on its own device', async () => {
      const f = load('spmv');
      const h = f.op_lookup('spmv', 'op0', 'warp-per-row') as number;
      // Large enough (each launch takes a good part of a second) that the two overlap.
      const rows = 20000;
      const c = spmvCase(rows, 8);
      const sizes = [rows, rows, rows, c.idx.length, longestRun(c.ptr), 0];
      const bufs = [0, 1].map((dev) => place(f, dev, c));
      const launchAsync = (dev: number): Promise<number> =>
        new Promise((resolve, reject) =>
          f.launch.async(dev, h, bufs[dev], sizes, 0, -1, null, (err: unknown, rc: number) =>
            err ? reject(err) : resolve(rc),
          ),
        );
      expect(await Promise.all([launchAsync(0), launchAsync(1)])).toEqual([0, 0]);
      for (const dev of [0, 1]) {
        const y = new Float32Array(rows);
        expect(f.download(dev, y, bufs[dev]![4], 0, y.byteLength, null)).toBe(0);
        let worst = 0;
        for (let i = 0; i < y.length; i++) worst = Math.max(worst, Math.abs(y[i]! - c.y[i]!));
        expect(worst).toBeLessThan(1e-4);
        for (const p of bufs[dev]!) expect(f.free(dev, p)).toBe(0);
      }
    }, 120_000);
  });
});
