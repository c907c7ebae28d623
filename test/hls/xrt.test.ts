/**
 * The XRT build of the FPGA host (-DDYPE_XRT: what `make sw_emu | hw_emu | hw` builds) and of the ABI
 * library (`make xrt-lib`), against test/hls/xrt-shim: XRT's buffer model on the CPU (a host copy and a
 * card copy per buffer object, `sync` between them, kernels that see only the card copies), the kernels
 * being the C-simulation functions. There is no XRT here; this is what checks that the XRT path compiles,
 * moves to the card what the kernels read and reads back what they write: each example's XRT host gives
 * the C simulation's output bit for bit on a real matrix. gcn, pagerank and attention between them have
 * every design (spmv, spmm, sddmm, gemm, stream, generic). PageRank's repeat trips find its packed matrix
 * on the card (hls-templates/host/dype_xrt.h keep_on_card): it crosses the link once, not once a trip.
 * Through the ABI library (as the runtime drives it), a launch whose matrix buffers the library has not
 * seen written since does no host work on the matrix at all, one after an upload of new values packs and
 * moves them, and a dense input whose allocation was not written since stays on the card too.
 * Skipped when the data directory or g++ is absent.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import koffi from 'koffi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCached } from '../helpers/make-cached.js';
import { ABI_FUNCTIONS, abiPrefix, longestRun, type AbiFunction } from '../../runtime/native/abi.js';
import {
  eachProject,
  HAVE_DATA,
  HAVE_GXX,
  MATRIX_DIR,
  exampleInputs,
  exampleKernel,
  hostArgs,
  loadCsr,
} from './example-data.js';

const RUN = HAVE_DATA && HAVE_GXX;
const EXAMPLES = ['gcn', 'pagerank', 'attention'];
const SHIM = join(import.meta.dirname, 'xrt-shim');
const run = promisify(execFile);

const work = mkdtempSync(join(tmpdir(), 'dype-xrt-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The test's source around the host program: the shim's kernel calls, dispatched by name to the C-simulation functions. */
function fixture(ex: string, kernels: string[]): string {
  return [
    `#include "host/${ex}_host.cpp"`,
    '#include <stdexcept>',
    '#include <type_traits>',
    'template <typename... A>',
    'void xrt_shim_call(const std::string& kernel, A... args) {',
    ...kernels.map(
      (k) =>
        `  if constexpr (std::is_invocable_v<decltype(${k}), A...>) if (kernel == "${k}") return (void)${k}(args...);`,
    ),
    '  throw std::runtime_error("xrt shim: no kernel " + kernel + " takes these arguments");',
    '}',
    '',
  ].join('\n');
}

/** The XRT ABI library of spmv over the stand-in, and a function reading its notes (matrix moved, kept, reused; runs; inputs moved, kept). */
function abiFixture(kernels: string[]): string {
  return [
    '#include "host/spmv_fpga_abi.cpp"',
    fixture('spmv', kernels).replace(/^#include "host\/spmv_host.cpp"\n/, ''),
    'extern "C" long long xrt_test_note(const char* kernel, int what) {',
    '  std::lock_guard<std::mutex> g(dype::cycle_notes_lock());',
    '  const dype::CycleNote& n = dype::cycle_notes()[kernel];',
    '  const long long v[] = {n.card_moved, n.card_kept, n.card_reused, n.runs, n.in_moved, n.in_kept, n.out_moved, n.out_left};',
    '  return v[what];',
    '}',
    // What crossed the link each way (the stand-in's counters).
    'extern "C" long long xrt_test_traffic(int what) {',
    '  return what == 0 ? (long long)xrt_shim::traffic().to_card : (long long)xrt_shim::traffic().from_card;',
    '}',
    '',
  ].join('\n');
}

const hosts = new Map<string, { csim: string; xrt: string }>();
let abiLib = '';
beforeAll(async () => {
  if (!RUN) return;
  await eachProject([...EXAMPLES, 'spmv'], work, async (ex, proj) => {
    const kernels = readdirSync(proj).filter((d) => new RegExp(`^${ex}_op\\d+$`).test(d));
    if (ex === 'spmv') {
      writeFileSync(join(proj, 'xrt_abi_fixture.cpp'), abiFixture(kernels));
      const inc = ['-Icsim', '-Ihost', ...kernels.map((k) => `-I${k}`), `-I${SHIM}`];
      const sources = ['xrt_abi_fixture.cpp', ...kernels.map((k) => `${k}/${k}.cpp`)];
      const flags = ['-std=c++17', '-O1', '-fPIC', '-shared', '-pthread', '-DDYPE_XRT', ...inc];
      await run('g++', [...flags, '-o', 'libspmv_xrt_test.so', ...sources], { cwd: proj, timeout: 300_000 });
      abiLib = join(proj, 'libspmv_xrt_test.so');
      return;
    }
    // The C-simulation host csim.test.ts builds too: once in a run (test/helpers/make-cached.ts), keyed by the
    // project's sources, so before the fixture joins them.
    const host = await makeCached(proj, `build/csim/${ex}_host`, [`build/csim/${ex}_host`]);
    if (host.status !== 0) throw new Error(`${host.cmd}\n${host.output}`);
    writeFileSync(join(proj, 'xrt_fixture.cpp'), fixture(ex, kernels));
    const inc = ['-Icsim', '-Ihost', ...kernels.map((k) => `-I${k}`), `-I${SHIM}`];
    const flags = ['-std=c++17', '-O1', '-Wno-unknown-pragmas', '-Wno-unused-label', '-DDYPE_XRT', ...inc];
    await run(
      'g++',
      [...flags, '-o', 'xrt_host', 'xrt_fixture.cpp', ...kernels.map((k) => `${k}/${k}.cpp`), '-pthread'],
      {
        cwd: proj,
        timeout: 300_000,
      },
    );
    // The ABI library's XRT build: compiled (its launches are the host's; the kernels come from the xclbin).
    await run('g++', [...flags, '-fsyntax-only', `host/${ex}_fpga_abi.cpp`], { cwd: proj, timeout: 300_000 });
    hosts.set(ex, { csim: join(proj, 'build', 'csim', `${ex}_host`), xrt: join(proj, 'xrt_host') });
  });
}, 600_000);

describe.skipIf(!RUN)('the XRT host and ABI library over an XRT stand-in', () => {
  for (const ex of EXAMPLES)
    it(`${ex}: compiles, and gives the C simulation's output bit for bit`, { timeout: 120_000 }, async () => {
      const { csim, xrt } = hosts.get(ex)!;
      const dir = join(work, `${ex}-run`);
      mkdirSync(dir, { recursive: true });
      const file = 'jazz.mtx';
      const { files, params } = exampleInputs(ex, loadCsr(file), dir, join(MATRIX_DIR, file));
      const { out } = exampleKernel(ex);
      await run(csim, hostArgs(files, params, out, join(dir, 'csim.mtx')), { timeout: 120_000 });
      const r = await run(xrt, hostArgs(files, params, out, join(dir, 'xrt.mtx')), {
        timeout: 120_000,
        env: { ...process.env, DYPE_XCLBIN: 'shim.xclbin' },
      });
      expect(r.stderr).toMatch(/on the FPGA/);
      expect(readFileSync(join(dir, 'xrt.mtx'), 'utf8')).toBe(readFileSync(join(dir, 'csim.mtx'), 'utf8'));
      if (ex === 'pagerank') {
        // The SpMV inside the repeat: its packed matrix moves on the first trip and is found on the card after.
        const runs = /(pagerank_op\d+): (\d+) runs, \d+ scheduled stream cycles/.exec(r.stderr);
        const card =
          /(pagerank_op\d+): packed matrix (\d+) bytes moved to the card, (\d+) bytes found there already/.exec(
            r.stderr,
          );
        expect(runs && card, r.stderr).toBeTruthy();
        expect(card![1]).toBe(runs![1]);
        const trips = Number(runs![2]);
        expect(trips).toBeGreaterThan(5);
        expect(Number(card![3])).toBe(Number(card![2]) * (trips - 1));
      }
    });
});

/** spmv's XRT ABI library over the stand-in, jazz (square: an output can be the next launch's input), and helpers. */
function openSpmvAbi() {
  process.env.DYPE_XCLBIN = 'shim.xclbin';
  const handle = koffi.load(abiLib);
  const prefix = abiPrefix('spmv', 'fpga');
  const abi = {} as Record<AbiFunction, (...args: unknown[]) => unknown>;
  for (const [name, proto] of Object.entries(ABI_FUNCTIONS))
    abi[name as AbiFunction] = handle.func(proto.replace(`${name}(`, `${prefix}${name}(`));
  const note = handle.func('long long xrt_test_note(const char* kernel, int what)');
  const traffic = handle.func('long long xrt_test_traffic(int what)');
  expect(abi.backend()).toBe('xrt');
  const A = loadCsr('jazz.mtx');
  const ptr = Int32Array.from(A.rowPtr);
  const idx = Int32Array.from(A.colIdx);
  return {
    abi,
    A,
    ptr,
    idx,
    /** The matrix packed and moved, kept, launches that found it, runs. */
    notes: (): number[] => [0, 1, 2, 3].map((w) => Number(note('spmv_op0', w))),
    /** Dense input bytes moved to the card, found there. */
    inputs: (): number[] => [4, 5].map((w) => Number(note('spmv_op0', w))),
    /** Output bytes brought back, left on the card. */
    outputs: (): number[] => [6, 7].map((w) => Number(note('spmv_op0', w))),
    /** Bytes synced to the card, from the card. */
    traffic: (): number[] => [0, 1].map((w) => Number(traffic(w))),
    /** f32 SpMV of jazz's values times `scale` with v. */
    spmv: (v: Float32Array, scale = 1): number[] =>
      Array.from({ length: A.rows }, (_, i) => {
        let acc = 0;
        for (let p = ptr[i]!; p < ptr[i + 1]!; p++) acc += scale * Math.fround(A.values[p]!) * v[idx[p]!]!;
        return acc;
      }),
    put: (data: Float32Array | Int32Array): unknown => {
      const out: unknown[] = [null];
      expect(abi.alloc(0, data.byteLength, out)).toBe(0);
      expect(abi.upload(0, out[0], 0, data, data.byteLength, null)).toBe(0);
      return out[0];
    },
    get: (buf: unknown, n: number): Float32Array => {
      const back = new Float32Array(n);
      expect(abi.download(0, back, buf, 0, back.byteLength, null)).toBe(0);
      return back;
    },
    close: (got: ArrayLike<number>, want: number[]): void =>
      Array.from(got).forEach((g, i) =>
        expect(Math.abs(g - want[i]!), `row ${i}`).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want[i]!))),
      ),
    h: abi.op_lookup('spmv', 'op0', 'serpens-spmv'),
    sizes: [A.rows, A.rows, A.cols, idx.length, longestRun(ptr), 0],
  };
}

describe.skipIf(!RUN)(
  'the XRT ABI library over the stand-in: a matrix whose buffers did not change is not packed again',
  () => {
    it("reuses the card's pack while the buffers keep their versions, and packs anew after an upload", () => {
      const { abi, notes, inputs, A, ptr, idx, put, close, h, sizes, spmv } = openSpmvAbi();
      const x = Float32Array.from({ length: A.cols }, (_, j) => ((j % 7) - 3) / 4);
      const expected = (scale: number): number[] => spmv(x, scale);
      const vals = Float32Array.from(A.values);
      const bufs = [put(ptr), put(idx), put(vals), put(x), put(new Float32Array(A.rows))];
      const y = (): number[] => {
        const back = new Float32Array(A.rows);
        expect(abi.download(0, back, bufs[4], 0, back.byteLength, null)).toBe(0);
        return Array.from(back);
      };

      expect(abi.launch(0, h, bufs, sizes, 0, -1, null)).toBe(0);
      close(y(), expected(1));
      const [moved] = notes();
      expect(moved).toBeGreaterThan(8 * idx.length);
      // The same buffers again (the launch's own output written meanwhile): the card's pack, no packing, nothing moved.
      expect(abi.launch(0, h, bufs, sizes, 0, -1, null)).toBe(0);
      close(y(), expected(1));
      expect(notes()).toEqual([moved, moved, 1, 2]);
      // x too: its allocation was not written since, so it stayed on the card.
      expect(inputs()).toEqual([x.byteLength, x.byteLength]);
      // New values in the same pattern: packed and moved again.
      expect(
        abi.upload(
          0,
          bufs[2],
          0,
          vals.map((v) => 2 * v),
          vals.byteLength,
          null,
        ),
      ).toBe(0);
      expect(abi.launch(0, h, bufs, sizes, 0, -1, null)).toBe(0);
      close(y(), expected(2));
      const after = notes();
      expect(after[0]).toBeGreaterThan(moved);
      expect(after.slice(2)).toEqual([1, 3]);
      expect(inputs()).toEqual([x.byteLength, 2 * x.byteLength]);
      // A new x moves; the matrix stays.
      x.set(x.map((v) => -v));
      expect(abi.upload(0, bufs[3], 0, x, x.byteLength, null)).toBe(0);
      expect(abi.launch(0, h, bufs, sizes, 0, -1, null)).toBe(0);
      close(y(), expected(2));
      expect(inputs()).toEqual([2 * x.byteLength, 2 * x.byteLength]);
      expect(notes().slice(2)).toEqual([2, 4]);
      // Another row range is another pack.
      expect(abi.launch(0, h, bufs, sizes, 0, 50, null)).toBe(0);
      expect(notes().slice(2)).toEqual([2, 5]);
      for (const b of bufs) expect(abi.free(0, b)).toBe(0);
    });

    it('leaves an output on the card until the host reads it: the next launch there reads it in place', () => {
      const { abi, A, ptr, idx, put, get, close, h, sizes, spmv, inputs, outputs, traffic } = openSpmvAbi();
      expect(A.rows).toBe(A.cols);
      const x = Float32Array.from({ length: A.cols }, (_, j) => ((j % 5) - 2) / 3);
      const bytes = 4 * A.rows;
      const [A0, A1, A2] = [put(ptr), put(idx), put(Float32Array.from(A.values))];
      const [X, Y, Z] = [put(x), put(new Float32Array(A.rows)), put(new Float32Array(A.rows))];
      const [in0, out0] = [inputs(), outputs()];
      // y = A x: y stays on the card.
      expect(abi.launch(0, h, [A0, A1, A2, X, Y], sizes, 0, -1, null)).toBe(0);
      expect(outputs()).toEqual([out0[0]!, out0[1]! + bytes]);
      // z = A y on the same card: y is read where it is, nothing crosses the link either way.
      const t = traffic();
      expect(abi.launch(0, h, [A0, A1, A2, Y, Z], sizes, 0, -1, null)).toBe(0);
      expect(traffic()).toEqual(t);
      expect(inputs()[1]! - in0[1]!).toBe(bytes);
      // Each comes back when read, once.
      const z = get(Z, A.rows);
      expect(traffic()).toEqual([t[0]!, t[1]! + bytes]);
      const y = get(Y, A.rows);
      expect(traffic()).toEqual([t[0]!, t[1]! + 2 * bytes]);
      expect(outputs()).toEqual([out0[0]! + 2 * bytes, out0[1]! + 2 * bytes]);
      close(y, spmv(x));
      close(z, spmv(y));
      get(Y, A.rows);
      expect(traffic()).toEqual([t[0]!, t[1]! + 2 * bytes]);
      // A write into memory the card holds replaces it: the card's copy is not fetched over it afterwards.
      expect(abi.launch(0, h, [A0, A1, A2, X, Y], sizes, 0, -1, null)).toBe(0);
      const mine = Float32Array.from({ length: A.rows }, (_, i) => i);
      expect(abi.upload(0, Y, 0, mine, bytes, null)).toBe(0);
      expect(Array.from(get(Y, A.rows))).toEqual(Array.from(mine));
      // The card keeps a few outputs per argument (OUTPUTS_KEPT, 4): the fifth sends the oldest home first
      // (the two buffers before them hold nothing now, so they go first, quietly), and each reads back right,
      // the one already home without crossing again.
      const more = [0, 1, 2, 3, 4].map(() => put(new Float32Array(A.rows)));
      const t2 = traffic();
      for (const o of more) expect(abi.launch(0, h, [A0, A1, A2, X, o], sizes, 0, -1, null)).toBe(0);
      expect(traffic()[1]! - t2[1]!).toBe(bytes);
      for (const o of more) close(get(o, A.rows), spmv(x));
      expect(traffic()[1]! - t2[1]!).toBe(5 * bytes);
      for (const b of [A0, A1, A2, X, Y, Z, ...more]) expect(abi.free(0, b)).toBe(0);
    });
  },
);
