/**
 * The native CPU target (codegen/cpu, runtime/native/cpu-executor.ts): every
 * example, in f32 and in f64, on small real matrices, equals the reference
 * interpreter within the wasm tests' tolerance (test/wasm/compare.ts), and
 * the wasm backend bit for bit at one thread where both add in the same
 * order (every example but attention, whose exp is the C library's here and
 * V8's in wasm); at 2 threads (west0479's 479 rows are split; karate's 34
 * are not) it equals itself at 1. One library holds all
 * twelve kernels (one C compile, about 3 s); the wasm modules are emitted
 * once per kernel. Skipped without a C compiler or the matrices.
 */
import { spawnSync } from 'node:child_process';
import koffi from 'koffi';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCpuLibraryAsync, cCompiler, type CpuLibraryBuild } from '../../codegen/cpu/build.js';
import { haveCompiler } from '../helpers/cc.js';
import { cpuLibrarySource } from '../../codegen/cpu/library.js';
import { LANE_WIDTHS } from '../../codegen/cpu/emit.js';
import { PAIR_MIN_ENTRIES } from '../../codegen/cpu/pairs.js';
import { wasmManifest } from '../../codegen/wasm/emit.js';
import type { Kernel } from '../../ir/module.js';
import { interpretKernel } from '../../interp/interpret.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { cpuImplOf } from '../../runtime/catalogue/cpu.js';
import { abiPrefix } from '../../runtime/native/abi.js';
import { NativeLibrary } from '../../runtime/native/library.js';
import { createNativeCpuExecutor } from '../../runtime/native/cpu-executor.js';
import type { CsrMatrix, SparseMatrix, Tensor } from '../../runtime/tensor.js';
import type { WasmExecutor, WorkerPlacement } from '../../runtime/wasm/executor.js';
import { exampleInputs, rand } from '../helpers/example-inputs.js';
import {
  compileWasm,
  expectClose,
  expectIdentical,
  loopKernel,
  toMaps,
  TOL_F32,
  TOL_F64,
  type Compiled,
} from '../wasm/compare.js';

const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const EXAMPLES = ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'];
/** Where the C library's exp and V8's may round differently. */
const HOST_MATH = new Set(['attention']);

const READY = existsSync(MATRIX_DIR) && haveCompiler();

interface Variant {
  ex: string;
  dtype: 'f32' | 'f64';
  kernel: Kernel;
  wasm?: Compiled;
}

/** Whether taskset (util-linux) runs here. */
function haveTaskset(): boolean {
  return spawnSync('taskset', ['--version']).status === 0;
}

/** The first CPU this process may run on (/proc/self/status), to hold a child to. */
function firstAllowedCpu(): number {
  const list = /^Cpus_allowed_list:\s*(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'));
  if (!list) throw new Error('/proc/self/status has no Cpus_allowed_list');
  return Number(list[1]);
}

/** Whether this system honours MADV_HUGEPAGE (Linux with transparent huge pages in `always` or `madvise` mode). */
function thpAsked(): boolean {
  try {
    return /\[(always|madvise)\]/.test(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'));
  } catch {
    return false;
  }
}

/** The VmFlags of the mapping that holds address `at` (/proc/self/smaps), '' where none does. */
function vmFlagsAt(at: bigint): string {
  let inside = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range) inside = BigInt(`0x${range[1]}`) <= at && at < BigInt(`0x${range[2]}`);
    else if (inside && line.startsWith('VmFlags:')) return line;
  }
  return '';
}

describe.skipIf(!READY)('native CPU backend: examples on real matrices', () => {
  const variants: Variant[] = [];
  let build: CpuLibraryBuild;
  /** The built library opened again by this test (the same dlopen handle as the executors'). */
  const openLibrary = (): NativeLibrary =>
    NativeLibrary.open(build.path, {
      program: 'examples',
      programHash: 'test',
      family: 'cpu',
      emulated: false,
      buildCommand: 'test/native/cpu.test.ts',
    });
  const execs = new Map<string, WasmExecutor>();
  const threaded = new Map<string, WasmExecutor>();

  beforeAll(async () => {
    for (const ex of EXAMPLES) {
      const src = readFileSync(join(EXAMPLES_DIR, `${ex}.dy`), 'utf8');
      variants.push({ ex, dtype: 'f32', kernel: loopKernel(src, `${ex}.dy`) });
      const f64 = src.replaceAll('f32', 'f64').replace(/kernel (\w+)/, 'kernel $1_f64');
      variants.push({ ex, dtype: 'f64', kernel: loopKernel(f64, `${ex}_f64.dy`) });
    }
    const kernels = variants.map((v) => ({ kernel: v.kernel, manifest: wasmManifest(v.kernel, [], true) }));
    // The C compile runs while the wasm modules are emitted.
    const building = buildCpuLibraryAsync(cpuLibrarySource('examples', 'test', kernels), null);
    for (const v of variants) v.wasm = await compileWasm(v.kernel);
    build = await building;
    for (const [i, v] of variants.entries()) {
      const o = { program: 'examples', programHash: 'test' };
      execs.set(v.kernel.name, createNativeCpuExecutor(build.path, kernels[i]!.manifest, { ...o, threads: 1 }));
      threaded.set(v.kernel.name, createNativeCpuExecutor(build.path, kernels[i]!.manifest, { ...o, threads: 2 }));
    }
  }, 120_000);

  afterAll(() => {
    for (const e of [...execs.values(), ...threaded.values()]) e.close();
    build?.cleanup();
  });

  const check = (v: Variant, A: SparseMatrix, inputs: ReturnType<typeof exampleInputs>, what: string): void => {
    const maps = toMaps(inputs);
    const want = interpretKernel(v.kernel, maps).outputs;
    const got = execs.get(v.kernel.name)!.run(maps).outputs;
    const viaWasm = v.wasm!.exec.run(toMaps(inputs)).outputs;
    const two = threaded.get(v.kernel.name)!.run(toMaps(inputs)).outputs;
    for (const [name, t] of want) {
      const tol = v.dtype === 'f32' ? TOL_F32 : TOL_F64;
      expectClose(got.get(name)!, t, tol, `${what}: ${name} vs reference`);
      if (!HOST_MATH.has(v.ex)) expectIdentical(got.get(name)!, viaWasm.get(name)!, `${what}: ${name} vs wasm`);
      else
        expectClose(got.get(name)!, viaWasm.get(name)!, v.dtype === 'f32' ? 1e-6 : 1e-12, `${what}: ${name} vs wasm`);
      expectIdentical(two.get(name)!, got.get(name)!, `${what}: ${name} at 2 threads`);
    }
    expect(A.rows).toBeGreaterThan(0);
  };

  for (const file of ['karate.mtx', 'west0479.mtx']) {
    it(file, () => {
      const A = toCsr(loadMatrix(join(MATRIX_DIR, file)));
      for (const v of variants) check(v, A, exampleInputs(v.ex, A), `${v.kernel.name}/${file}`);
    });
  }

  it('spmm over 35 columns: full column blocks and a remainder (f32 and f64)', () => {
    const A = toCsr(loadMatrix(join(MATRIX_DIR, 'cora.cites')));
    for (const v of variants.filter((x) => x.ex === 'spmm'))
      check(v, A, { tensors: { A, B: rand([A.cols, 35], 'B35') } }, `${v.kernel.name}/cora/35`);
  });

  it('spmm at the widths with their own copies (codegen/cpu/emit.ts LANE_WIDTHS) and at others, equal to wasm bit for bit and to the reference', () => {
    const A = toCsr(loadMatrix(join(MATRIX_DIR, 'cora.cites')));
    const source = cpuLibrarySource('examples', 'test', [
      {
        kernel: variants.find((x) => x.ex === 'spmm')!.kernel,
        manifest: wasmManifest(variants.find((x) => x.ex === 'spmm')!.kernel, [], true),
      },
    ]);
    // Every width has its copy; f32 blocks are 32 columns, and the copy for half a block (16) prefers 256-bit
    // vectors where gcc targets x86 (DY_HALF_BLOCK), the others not.
    for (const w of LANE_WIDTHS) expect(source).toContain(`case ${w}: dy_f0_w${w}(`);
    expect(source).toMatch(
      /DY_HALF_BLOCK __attribute__\(\(optimize\("no-tree-loop-vectorize"\)\)\) static void dy_f0_w16\(/,
    );
    expect(source.match(/^DY_HALF_BLOCK /gm)).toHaveLength(1);
    // Widths without a copy run the general one, its last columns in blocks down to one lane (LaneTail).
    for (const w of [...LANE_WIDTHS, 1, 3, 7, 40, 45])
      for (const v of variants.filter((x) => x.ex === 'spmm'))
        check(v, A, { tensors: { A, B: rand([A.cols, w], `B${w}`) } }, `${v.kernel.name}/cora/${w}`);
  });

  it('spmv keeps its f32 fold scalar at every size (codegen/cpu/folds.ts), f64 as the compiler prints it: past 1 MiB of rows both equal wasm bit for bit', () => {
    const source = cpuLibrarySource('examples', 'test', [
      {
        kernel: variants.find((x) => x.ex === 'spmv')!.kernel,
        manifest: wasmManifest(variants.find((x) => x.ex === 'spmv')!.kernel, [], true),
      },
    ]);
    expect(source).toMatch(/__attribute__\(\(optimize\("no-tree-loop-vectorize"\)\)\) static void dy_f0\(/);
    expect(source).not.toMatch(/dy_f0_(seq|gather)/);
    const spmvF64 = variants.find((x) => x.ex === 'spmv' && x.dtype === 'f64')!.kernel;
    const f64 = cpuLibrarySource('examples', 'test', [{ kernel: spmvF64, manifest: wasmManifest(spmvF64, [], true) }]);
    expect(f64).toMatch(/\nstatic void dy_f0\(/);
    // 300,000 rows of 1-5 entries at hashed columns: 1.2 MB of f32 rows (2.4 MB of f64), past the 1 MiB the
    // library once took a vectorised f32 copy from.
    const rows = 300_000;
    const rowPtr = new Int32Array(rows + 1);
    for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i]! + 1 + ((Math.imul(i, 0x9e3779b1) >>> 29) % 5);
    const colIdx = new Int32Array(rowPtr[rows]!);
    for (let i = 0; i < rows; i++) {
      let c = Math.imul(i + 7, 0x85ebca6b) >>> 0;
      for (let p = rowPtr[i]!; p < rowPtr[i + 1]!; p++)
        // Steps of 1..50,000, at most five a row: the row's columns never meet again modulo rows (each position once).
        colIdx[p] = c = (c + 1 + ((Math.imul(p, 0x27d4eb2f) >>> 14) % 50_000)) % rows;
      colIdx.subarray(rowPtr[i]!, rowPtr[i + 1]!).sort();
    }
    const values = Float64Array.from(colIdx, (c, p) => ((c * 31 + p) % 17) / 8 - 1);
    const A = { format: 'csr' as const, rows, cols: rows, rowPtr, colIdx, values };
    for (const v of variants.filter((x) => x.ex === 'spmv'))
      check(v, A, exampleInputs('spmv', A), `${v.kernel.name}/300k`);
  });

  it('rows run two cursors (codegen/cpu/pairs.ts) where a call holds PAIR_MIN_ENTRIES entries a row or more: spmv, pagerank and sssp at 1, 2 and 3 threads equal wasm bit for bit and the reference', () => {
    const source = cpuLibrarySource(
      'examples',
      'test',
      variants
        .filter((x) => x.ex === 'spmv')
        .map((v) => ({ kernel: v.kernel, manifest: wasmManifest(v.kernel, [], true) })),
    );
    // f32 and f64: each op's one function pairs.
    expect(source.match(new RegExp(`>= ${PAIR_MIN_ENTRIES}LL \\* \\(`, 'g'))).toHaveLength(2);
    // 1,001 rows (an odd count) of 0 to 40 entries, mostly long, some empty and some of one entry: every lockstep
    // length, either cursor left to finish alone. 999 rows whose first 40 hold 300 entries each and the rest 1-4
    // (skewed, as Groebner_id2003_aug): the halves split by entries, far from the middle row.
    const csr = (lens: number[]): CsrMatrix => {
      const rows = lens.length;
      const rowPtr = new Int32Array(rows + 1);
      for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i]! + lens[i]!;
      const colIdx = new Int32Array(rowPtr[rows]!);
      for (let i = 0; i < rows; i++)
        for (let p = rowPtr[i]!; p < rowPtr[i + 1]!; p++) colIdx[p] = (i + (p - rowPtr[i]!) * 3) % rows;
      for (let i = 0; i < rows; i++) colIdx.subarray(rowPtr[i]!, rowPtr[i + 1]!).sort();
      const values = Float64Array.from(colIdx, (c, p) => ((c * 31 + p) % 17) / 8 - 1 + 1e-7 * p);
      expect(rowPtr[rows]! / rows).toBeGreaterThanOrEqual(PAIR_MIN_ENTRIES);
      return { format: 'csr', rows, cols: rows, rowPtr, colIdx, values };
    };
    const mixed = csr(
      Array.from({ length: 1001 }, (_, i) => (i % 97 === 0 ? 0 : i % 13 === 0 ? 1 : 5 + ((i * 7919) % 36))),
    );
    const skewed = csr(Array.from({ length: 999 }, (_, i) => (i < 40 ? 300 : 1 + (i % 4))));
    const o = { program: 'examples', programHash: 'test' };
    for (const A of [mixed, skewed, toCsr(loadMatrix(join(MATRIX_DIR, 'dnn_n1024-l1.mtx')))])
      for (const v of variants.filter((x) => ['spmv', 'pagerank', 'sssp'].includes(x.ex))) {
        check(v, A, exampleInputs(v.ex, A), `${v.kernel.name}/${A.rows} rows`);
        const manifest = wasmManifest(v.kernel, [], true);
        const three = createNativeCpuExecutor(build.path, manifest, { ...o, threads: 3 });
        try {
          const want = v.wasm!.exec.run(toMaps(exampleInputs(v.ex, A))).outputs;
          const got = three.run(toMaps(exampleInputs(v.ex, A))).outputs;
          for (const [name, t] of want) expectIdentical(got.get(name)!, t, `${v.kernel.name}: ${name} on 3 threads`);
        } finally {
          three.close();
        }
      }
  });

  it("the library's threads claim chunks: 2 and 3 threads, and 2 of a 3-thread pool, equal one thread bit for bit, run after run", () => {
    // bcsstk13's 2,003 rows of up to 95 entries: 8-12 chunks an op, claimed in an order each run decides; x new
    // each run, so that a chunk nobody ran would leave the last run's values.
    const A = toCsr(loadMatrix(join(MATRIX_DIR, 'bcsstk13.mtx')));
    const o = { program: 'examples', programHash: 'test' };
    for (const v of variants.filter((x) => x.ex === 'spmv')) {
      const manifest = wasmManifest(v.kernel, [], true);
      const three = createNativeCpuExecutor(build.path, manifest, { ...o, threads: 3 });
      try {
        for (let rep = 0; rep < 10; rep++) {
          const inputs = { tensors: { A, x: rand([A.cols], `x${rep}`) } };
          const want = execs.get(v.kernel.name)!.run(toMaps(inputs)).outputs;
          for (const [e, count] of [
            [threaded.get(v.kernel.name)!, 2],
            [three, 3],
            [three, 2],
          ] as const) {
            e.setOpThreads(new Map(manifest.ops.map((op) => [op.op, count])));
            const got = e.run(toMaps(inputs)).outputs;
            for (const [name, t] of want) expectIdentical(got.get(name)!, t, `${v.kernel.name}: ${name} on ${count}`);
          }
        }
      } finally {
        three.close();
      }
    }
  });

  it('the library is what the loader expects: its backend is native, its ops are the catalogue CPU implementations', () => {
    const outputs = execs
      .get('spmv')!
      .run(toMaps(exampleInputs('spmv', toCsr(loadMatrix(join(MATRIX_DIR, 'karate.mtx'))))));
    expect(outputs.outputs.get('y')!.format).toBe('dense');
    expect(execs.get('spmv')!.threads).toBe(1);
    expect(threaded.get('spmv')!.threads).toBe(2);
    // The thread count is the library's (one dlopen for both executors): each sets its own before its ops.
    const lib = openLibrary();
    const inForce = lib.bind('int set_threads(int n)') as (n: number) => number;
    const karate = toMaps(exampleInputs('spmv', toCsr(loadMatrix(join(MATRIX_DIR, 'karate.mtx')))));
    for (const [e, n] of [
      [threaded, 2],
      [execs, 1],
      [threaded, 2],
    ] as const) {
      e.get('spmv')!.run(karate);
      expect(inForce(0)).toBe(n);
    }
    const t: Tensor = outputs.outputs.get('y')!;
    expect(t.format === 'dense' && t.shape).toEqual([34]);
  });

  it('alloc puts a buffer of 2 MiB or more on a 2 MiB boundary with huge pages asked for (Linux), a smaller one on 64 bytes', () => {
    const lib = openLibrary();
    for (const [bytes, align] of [
      [1000, 64n],
      [(2 << 20) - 64, 64n],
      [2 << 20, 2n << 20n],
      [(5 << 20) + 3, 2n << 20n],
    ] as const) {
      const out: unknown[] = [null];
      expect(lib.call('alloc', 0, bytes, out), `${bytes} bytes`).toBe(0);
      const at = koffi.address(out[0]) as bigint;
      expect(at % align, `${bytes} bytes at 0x${at.toString(16)}`).toBe(0n);
      // Every byte asked for is writable (the rounding up to whole huge pages is the library's).
      new Uint8Array(koffi.view(out[0], bytes)).fill(7);
      if (bytes >= 2 << 20 && thpAsked()) expect(vmFlagsAt(at), `${bytes} bytes: madvised`).toContain('hg');
      expect(lib.call('free', 0, out[0])).toBe(0);
    }
  });

  it('launch refuses a negative size with DYPE_ERR_BAD_SIZE before it reads a buffer, as the CUDA stubs do', () => {
    const lib = openLibrary();
    const spmv = variants.find((v) => v.ex === 'spmv' && v.dtype === 'f64')!.kernel;
    const op = wasmManifest(spmv, [], true).ops[0]!;
    const h = lib.call('op_lookup', spmv.name, op.op, cpuImplOf(op)) as number;
    expect(h).toBeGreaterThanOrEqual(0);
    const launch = lib.bind(
      'int launch(int dev, int handle, const void *buffers, const void *sizes, int64_t row_begin, int64_t row_end, void *stream)',
    ) as (...a: unknown[]) => number;
    const nb = lib.call('op_buffer_count', h) as number;
    const ns = lib.call('op_size_count', h) as number;
    // Null buffers: a launch that got past the sizes would fault on them.
    const buffers = new BigUint64Array(nb);
    for (let i = 0; i < op.sizes.length; i++) {
      const sizes = new BigInt64Array(ns).fill(34n);
      sizes[i] = -1n;
      expect(launch(0, h, buffers, sizes, 0n, -1n, null), `size ${op.sizes[i]}`).toBe(-1);
    }
    expect(lib.errorText(-1)).toBe('bad size');
  });

  it("placement counts the launches split over workers, their joins, and the joins on the caller's core", () => {
    const e = threaded.get('spmv')!;
    const A = toCsr(loadMatrix(join(MATRIX_DIR, 'west0479.mtx')));
    e.execute(toMaps(exampleInputs('spmv', A)));
    const before = e.placement()!;
    for (let i = 0; i < 20; i++) e.execute();
    const after = e.placement()!;
    // west0479's 479 rows are split at 2 threads; karate's 34 (below) are not.
    expect(after.splitOps - before.splitOps).toBe(20);
    expect(after.joins).toBeGreaterThanOrEqual(before.joins);
    // Each split op is cut into 2 chunks or more, some of which the workers may run.
    expect(after.chunks - before.chunks).toBeGreaterThanOrEqual(40);
    expect(after.workerChunks - before.workerChunks).toBeLessThanOrEqual(after.chunks - before.chunks);
    if (process.platform === 'linux') {
      expect(after.joinsOnCaller).not.toBeNull();
      expect(after.joinsOnCaller! - before.joinsOnCaller!).toBeLessThanOrEqual(after.joins - before.joins + 1);
    }
    threaded.get('spmv')!.run(toMaps(exampleInputs('spmv', toCsr(loadMatrix(join(MATRIX_DIR, 'karate.mtx'))))));
    expect(e.placement()!.splitOps).toBe(after.splitOps);
    // One executor's counts are its library's: the one-thread executor over the same file reads the same.
    expect(execs.get('spmv')!.placement()!.splitOps).toBe(after.splitOps);
  });

  it.skipIf(process.platform !== 'linux' || !haveTaskset())(
    "a process held to one core: every worker's join is on the caller's core, and placement says so",
    () => {
      // A Node process under taskset runs the library's spmv at 2 threads with a pause between calls (the worker
      // parks, and each launch wakes it): the worker can only run on the caller's core.
      const dir = mkdtempSync(join(tmpdir(), 'dype-placement-'));
      try {
        const spmv = variants.find((v) => v.ex === 'spmv' && v.dtype === 'f32')!.kernel;
        const manifest = join(dir, 'manifest.json');
        writeFileSync(manifest, JSON.stringify(wasmManifest(spmv, [], true)));
        const script = join(dir, 'packed.mjs');
        writeFileSync(
          script,
          `const [dist, lib, manifestFile] = process.argv.slice(2);
const { readFileSync } = await import('node:fs');
const { createNativeCpuExecutor } = await import(dist + '/runtime/native/cpu-executor.js');
const { generatedMatrix } = await import(dist + '/runtime/generate.js');
const ex = createNativeCpuExecutor(lib, JSON.parse(readFileSync(manifestFile, 'utf8')), { threads: 2, program: 'examples', programHash: 'test' });
const A = generatedMatrix(4000, 8);
const x = { format: 'dense', shape: [A.cols], data: new Float64Array(A.cols).fill(1) };
const pause = new Int32Array(new SharedArrayBuffer(4));
// The warm-up's worker joins in the pause after it, not between the readings below.
ex.execute({ tensors: new Map([['A', A], ['x', x]]), scalars: new Map() });
Atomics.wait(pause, 0, 0, 5);
const before = ex.placement();
for (let i = 0; i < 30; i++) { ex.execute(); Atomics.wait(pause, 0, 0, 2); }
const after = ex.placement();
ex.close();
console.log(JSON.stringify({ before, after }));
`,
        );
        const dist = pathToFileURL(fileURLToPath(new URL('../../dist', import.meta.url))).href;
        const run = spawnSync(
          'taskset',
          ['-c', String(firstAllowedCpu()), process.execPath, script, dist, build.path, manifest],
          {
            encoding: 'utf8',
            timeout: 60_000,
          },
        );
        expect(run.status, run.stderr).toBe(0);
        const { before, after } = JSON.parse(run.stdout) as Record<'before' | 'after', WorkerPlacement>;
        expect(after.splitOps - before.splitOps).toBe(30);
        const joins = after.joins - before.joins;
        expect(joins).toBeGreaterThan(0);
        expect(after.joinsOnCaller! - before.joinsOnCaller!).toBe(joins);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("set_threads is the calling thread's: another thread of the process keeps its own count", () => {
    // A C program that opens the library, sets 3 threads on its main thread, and reads the count a second thread
    // sees (1, the default) and sets (2) before the main thread reads its own again (3).
    const dir = mkdtempSync(join(tmpdir(), 'dype-threads-'));
    try {
      const sym = `${abiPrefix('examples', 'cpu')}set_threads`;
      const src = join(dir, 'threads.c');
      writeFileSync(
        src,
        `#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
typedef int (*set_fn)(int);
static set_fn set;
static int seen, after;
static void *other(void *a) { (void)a; seen = set(0); after = set(2); return NULL; }
int main(int argc, char **argv) {
  (void)argc;
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) { fprintf(stderr, "%s\\n", dlerror()); return 2; }
  set = (set_fn)dlsym(lib, "${sym}");
  if (!set) return 3;
  set(3);
  pthread_t t;
  pthread_create(&t, NULL, other, NULL);
  pthread_join(t, NULL);
  printf("%d %d %d\\n", seen, after, set(0));
  return 0;
}
`,
      );
      const exe = join(dir, 'threads');
      const cc = spawnSync(cCompiler(), ['-O1', '-pthread', src, '-o', exe, '-ldl'], { encoding: 'utf8' });
      expect(cc.status, cc.stderr).toBe(0);
      const run = spawnSync(exe, [build.path], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe('1 2 3');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
