/**
 * Differential fuzzing of the code generators (fixed seeds, so every run is
 * the same): random well-typed programs are drawn from a grammar of the
 * language (gen/: elementwise expressions with every operator and function,
 * SpMV and its transpose over csr, csc and coo, min/max semirings, SpMM,
 * SDDMM and other sparse results in any format, dense contractions, row and
 * scalar reductions, any/all and selects, chains of temporaries, repeat
 * loops with literal or scalar counts, nested, and `until ... stable /
 * within` loops, a second sparse pattern, conditions in another dtype than
 * the values they select) in f32, f64, i32 and i64. Each program the
 * checker accepts runs on a tiny and a mid-sized input, some also on a large
 * one (hundreds of rows, a hub row) or with a dim of 0; sparse inputs have
 * empty rows. A few also run on a huge input (gen/huge.ts: thousands of rows,
 * hub rows of thousands of entries, rows at the lengths where a schedule
 * changes: CUDA merge-path rows across several tiles, adaptive-rows' long-row
 * pass, the executors' split of rows by entries over two threads), in the
 * backends that take one in seconds. Every CPU-side backend must compute
 * what the float64 reference interpreter does (backends/):
 *   - wasm: the whole-kernel executor, at 1 thread (2 on large and huge
 *     inputs, huge ones only at 2);
 *   - native C (codegen/cpu), libraries of 12 programs built with the system
 *     C compiler, likewise;
 *   - CUDA on the CPU emulation: projects of 12 programs
 *     (`make lib<prog>_cuda_emu.so`) run by the stage engine, every
 *     implementation of every op on one emulated GPU, and split over two
 *     (every implementation again on huge inputs, the first on the others);
 *   - HLS C simulation: one project of the first programs (`make csim-lib`),
 *     run by the stage engine on one emulated FPGA, and split over two; no
 *     huge inputs.
 * The compilers run one a core (at most 4) while the wasm modules are emitted.
 * Tolerances are the existing tests': f32 results 1e-4 relative
 * (test/wasm/compare.ts), f64 1e-12 where the backend adds in the
 * interpreter's order (wasm, native) and 1e-9 where it reorders sums (CUDA's
 * lanes, the HLS schedule: docs/CUDA.md), integers and bools exactly (they
 * wrap in their width on every backend). The generator keeps programs where
 * those tolerances hold (gen/checker.ts `Info`: no comparison or convergence
 * test of a value f32 rounds, no i64 past 2^50). A program a target refuses
 * with diagnostics (its documented limits) is counted, not failed.
 *
 * Forms the generator never draws (two dense widths in one op, loop bodies
 * whose values feed each other, bool matrices, reductions over several
 * indices, transposed and rank-3 layouts, inf and NaN, rows != cols with a
 * hub column) have coverage programs (backends/coverage.ts): hand-written, on
 * random tiny, mid and large inputs, checked on wasm, and in the first
 * libraries of native C, the CUDA emulation and the HLS C simulation, at the
 * default scale those marked for each (the compilers' time is the cost), all
 * of them from DYPE_FUZZ_SCALE=2 up. The bugs this fuzzer found have
 * reproducers (backends/reproducers.ts) that ride along in the first CUDA
 * library and HLS project: the tests at the end check them against the
 * reference.
 *
 * At the default scale about 45 s on two cores, 80 s with other work
 * running (most of it g++ building the CUDA emulation and C simulation
 * libraries); DYPE_FUZZ_SCALE=4 about 2.5 minutes. The coverage programs add
 * about 12 s at the default scale (81 to 94 s with some other work running,
 * 144 to 182 s with much) and about a minute from DYPE_FUZZ_SCALE=2 up, where
 * all of them are built for every backend. DYPE_FUZZ_SCALE scales the
 * program counts, DYPE_FUZZ_SEED shifts the seed (test/fuzz/util.ts) and
 * DYPE_FUZZ_ONLY picks programs by name: a failure names the three values
 * that repeat it. The parts that need gcc, or g++ and make, skip without them.
 *
 * Huge inputs: by default only the first program with a statement of SpMV's
 * shape and the first with one of SpMM's take one (2-5 s of CPU in all).
 * DYPE_FUZZ_HUGE=1 gives one to every program that fits (a third to a half
 * of them; 12 at the default scale, about 30 s more; with DYPE_FUZZ_SCALE=4
 * 4-5 minutes in all), and a failure on one names it as a fourth value;
 * DYPE_FUZZ_HUGE=0 gives none. A hunt on these paths:
 *   DYPE_FUZZ_HUGE=1 DYPE_FUZZ_SCALE=4 DYPE_FUZZ_SEED=7 npx vitest run test/fuzz/backends.test.ts
 * The counts printed say how many huge runs each backend made and in which
 * CUDA implementations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { emitHlsProject } from '../../codegen/hls/project.js';
import { emitWasm } from '../../codegen/wasm/emit.js';
import { have } from '../cuda/nvcc.js';
import { haveCompiler } from '../helpers/cc.js';
import { type Built, buildChunks, compiledProgram, CUDA, emittable, HLS, NATIVE } from './backends/build.js';
import {
  drawEntries,
  type Drawn,
  type Entry,
  expectClean,
  FUZZ_HUGE,
  HUGE_RUNS,
  Reported,
  runNative,
  runOnEngine,
  runWasm,
} from './backends/harness.js';
import {
  CUDA_REPROS,
  HLS_REPROS,
  NESTED_VECTOR_COLUMNS,
  GEMM_OF_ITSELF,
  SDDMM_OF_ITSELF,
  SECOND_OPERAND_ALONG_ANOTHER_DIM,
  sharedDeclaredTwice,
  SHARED_WALKS,
} from './backends/reproducers.js';
import { coverageEntries, coverageOn } from './backends/coverage.js';
import { Failures, FUZZ_SCALE, FUZZ_SEED_OFFSET } from './util.js';

/** Programs drawn for the checker; those it accepts run on wasm, native C and the CUDA emulation. */
const PROGRAMS = Math.max(4, Math.round(24 * FUZZ_SCALE));
/** The first this many accepted programs also run in HLS C simulation (its g++ build costs about 1 s an op). */
const HLS_PROGRAMS = Math.max(2, Math.round(8 * FUZZ_SCALE));
const TIMEOUT = 600_000 * Math.max(1, FUZZ_SCALE);
const SEED = 0xbac0e5 + FUZZ_SEED_OFFSET;
/** DYPE_FUZZ_ONLY=f3,f17: run only these programs (drawn as always, so a reported one comes back the same). */
const ONLY = process.env.DYPE_FUZZ_ONLY?.split(',');

const CC = haveCompiler();
const GXX = have('g++') && have('make');
if (!CC) console.warn('test/fuzz/backends: no C compiler; skipping the native C backend');
if (!GXX) console.warn('test/fuzz/backends: g++ or make missing; skipping the CUDA emulation and the HLS C simulation');

const REPROS = [...CUDA_REPROS, ...HLS_REPROS];
/** The coverage programs (backends/coverage.ts) with their inputs, in the first libraries of each backend. */
const COVERAGE = coverageEntries().filter((e) => ONLY === undefined || ONLY.includes(e.name));
/** Those the compiled backends take: some at the default scale (the compilers' time is the cost), all from 2 up. */
const COVERAGE_COMPILED = {
  native: coverageOn('native', COVERAGE, FUZZ_SCALE),
  cuda: coverageOn('cuda', COVERAGE, FUZZ_SCALE),
  hls: coverageOn('hls', COVERAGE, FUZZ_SCALE),
};
const work = mkdtempSync(join(tmpdir(), 'dype-fuzz-backends-'));
let drawn: Drawn;
const nativeFailures = new Reported();
const cudaFailures = new Reported();
const hlsFailures = new Reported();
const cudaRefused: Record<string, number> = {};
const hlsRefused: Record<string, number> = {};
const coverageRefused = { cuda: {} as Record<string, number>, hls: {} as Record<string, number> };
/** The coverage programs the CUDA and HLS generators emit (the others they refuse with diagnostics, or fail on). */
let coverageCuda: Promise<Entry[]> = Promise.resolve([]);
let coverageHls: Promise<Entry[]> = Promise.resolve([]);
let nativeBuilt: Promise<Built[]> = Promise.resolve([]);
let cudaBuilt: Promise<Built[]> = Promise.resolve([]);
let hlsBuilt: Promise<Built[]> = Promise.resolve([]);

/** The built libraries without their entries' huge inputs (HLS C simulation of them would take minutes). */
const withoutHuge = (built: Built[]): Built[] =>
  built.map((b) => ({
    ...b,
    list: b.list.map((e) => ({ ...e, cases: e.cases.filter(({ c }) => c.label !== 'huge') })),
  }));
/** Runs of huge inputs on a backend and their time, for the counts printed. */
const hugeCounts = (backend: string): Record<string, unknown> =>
  HUGE_RUNS[backend] ? { huge: HUGE_RUNS[backend] } : {};
/** What ran on huge inputs: runs by implementation (`<op> <impl>` and the devices). */
function hugeRuns(ran: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of ran.filter((x) => x.includes(', huge input, '))) {
    const [devices, impls] = r.split(', huge input, ')[1]!.split(': ');
    for (const impl of impls!.split(', ').map((x) => x.replace(/^\S+ /, ''))) {
      const key = `${impl}${devices!.includes('+') ? ' (2 devices)' : ''}`;
      out[key] = (out[key] ?? 0) + 1;
    }
  }
  return out;
}
/** The built libraries with only the generated programs, only the coverage programs, or only the reproducer `keep`. */
const generated = (built: Built[]): Built[] => built.map((b) => ({ ...b, list: b.list.filter((e) => !e.hand) }));
const coverage = (built: Built[]): Built[] =>
  built.map((b) => ({ ...b, list: b.list.filter((e) => COVERAGE.includes(e)) })).filter((b) => b.list.length > 0);
const only = (built: Built[], keep: Entry): Built[] =>
  built.map((b) => ({ ...b, list: b.list.filter((e) => e === keep) })).filter((b) => b.list.length > 0);
const programsIn = (built: Built[]): number => built.reduce((a, b) => a + b.list.length, 0);
/** The implementations the runs of runOnEngine chose, with how many runs each. */
function implementations(ran: readonly string[]): Record<string, number> {
  const n: Record<string, number> = {};
  for (const r of ran)
    for (const chosen of r.slice(r.indexOf(': ') + 2).split(', ')) {
      const impl = chosen.slice(chosen.indexOf(' ') + 1);
      n[impl] = (n[impl] ?? 0) + 1;
    }
  return n;
}

beforeAll(async () => {
  drawn = drawEntries(SEED, PROGRAMS, ONLY, FUZZ_HUGE);
  const { entries } = drawn;
  // The compilers run (a few at a time) while the wasm modules are emitted; the reproducers and the coverage
  // programs ride along in the first libraries of their backend.
  if (GXX) {
    coverageHls = emittable(HLS, COVERAGE_COMPILED.hls, hlsFailures, coverageRefused.hls);
    coverageCuda = emittable(CUDA, COVERAGE_COMPILED.cuda, cudaFailures, coverageRefused.cuda);
    hlsBuilt = Promise.all([coverageHls, emittable(HLS, entries, hlsFailures, hlsRefused)]).then(([cov, ok]) =>
      buildChunks(HLS, [...HLS_REPROS, ...cov, ...ok.slice(0, HLS_PROGRAMS)], hlsFailures, work),
    );
    cudaBuilt = Promise.all([coverageCuda, emittable(CUDA, entries, cudaFailures, cudaRefused)]).then(([cov, ok]) =>
      buildChunks(CUDA, [...CUDA_REPROS, ...cov, ...ok], cudaFailures, work),
    );
  }
  if (CC) nativeBuilt = buildChunks(NATIVE, [...COVERAGE_COMPILED.native, ...entries], nativeFailures, work);
  for (const e of [...entries, ...REPROS, ...COVERAGE]) e.wasm = await emitWasm(e.kernel);
}, TIMEOUT);

afterAll(async () => {
  // Builds still running (a test skipped by -t) end before their folder goes.
  for (const b of (await Promise.all([nativeBuilt, cudaBuilt, hlsBuilt])).flat()) b.cleanup?.();
  rmSync(work, { recursive: true, force: true });
}, TIMEOUT);

describe('fuzz: generated programs on every CPU-side backend equal the reference interpreter', () => {
  it(`most of ${PROGRAMS} generated programs check, and the pipeline and the reference run them`, () => {
    const { stats, failures, entries } = drawn;
    expectClean('checker', failures, { ...stats, entries: entries.length });
    expect(stats.accepted / stats.drawn).toBeGreaterThan(0.8);
  });

  it('wasm', { timeout: TIMEOUT }, async () => {
    const failures = new Reported();
    const runs = await runWasm(drawn.entries, failures);
    expectClean('wasm', failures, { programs: drawn.entries.length, runs, ...hugeCounts('wasm') });
    expect(runs).toBeGreaterThan(0);
  });

  it.skipIf(!CC)('native C', { timeout: TIMEOUT }, async () => {
    const built = generated(await nativeBuilt);
    const runs = await runNative(built, nativeFailures);
    expectClean('native', nativeFailures, {
      programs: programsIn(built),
      libraries: built.length,
      runs,
      ...hugeCounts('native'),
    });
  });

  it.skipIf(!GXX)(
    'CUDA on the CPU emulation: every implementation of every op, on one GPU and split over two',
    { timeout: TIMEOUT },
    async () => {
      const built = generated(await cudaBuilt);
      const ran = await runOnEngine('cuda-emu', 'cuda', built, cudaFailures);
      expectClean('cuda-emu', cudaFailures, {
        programs: programsIn(built),
        refused: cudaRefused,
        runs: ran.length,
        ...hugeCounts('cuda-emu'),
        ...(HUGE_RUNS['cuda-emu'] ? { hugeImpls: hugeRuns(ran) } : {}),
      });
    },
  );

  it.skipIf(!GXX)(
    `HLS C simulation of the first ${HLS_PROGRAMS} programs, on one FPGA and split over two`,
    { timeout: TIMEOUT },
    async () => {
      const built = withoutHuge(generated(await hlsBuilt));
      const ran = await runOnEngine('fpga-csim', 'fpga', built, hlsFailures);
      expectClean('fpga-csim', hlsFailures, { programs: programsIn(built), refused: hlsRefused, runs: ran.length });
    },
  );
});

// Forms the generator never draws (backends/coverage.ts), on random tiny, mid and large inputs. One that did not
// build is a failure of its backend's test above, which names it.
describe('fuzz: the coverage programs equal the reference interpreter on every CPU-side backend', () => {
  it('wasm', { timeout: TIMEOUT }, async () => {
    const failures = new Reported();
    const runs = await runWasm(COVERAGE, failures);
    expectClean('coverage, wasm', failures, { programs: COVERAGE.length, runs });
  });

  it.skipIf(!CC)('native C', { timeout: TIMEOUT }, async () => {
    const failures = new Reported();
    const built = coverage(await nativeBuilt);
    const runs = await runNative(built, failures);
    expectClean('coverage, native', failures, { programs: programsIn(built), runs });
    expect(programsIn(built)).toBe(COVERAGE_COMPILED.native.length);
  });

  it.skipIf(!GXX)('CUDA on the CPU emulation, every implementation of every op', { timeout: TIMEOUT }, async () => {
    const failures = new Reported();
    const built = coverage(await cudaBuilt);
    const ran = await runOnEngine('cuda-emu', 'cuda', built, failures);
    expectClean('coverage, cuda-emu', failures, {
      programs: programsIn(built),
      refused: coverageRefused.cuda,
      runs: ran.length,
      implementations: implementations(ran),
    });
    expect(programsIn(built)).toBe((await coverageCuda).length);
  });

  it.skipIf(!GXX)('HLS C simulation, every implementation of every op', { timeout: TIMEOUT }, async () => {
    const failures = new Reported();
    const built = coverage(await hlsBuilt);
    const ran = await runOnEngine('fpga-csim', 'fpga', built, failures);
    expectClean('coverage, fpga-csim', failures, {
      programs: programsIn(built),
      refused: coverageRefused.hls,
      runs: ran.length,
      implementations: implementations(ran),
    });
    expect(programsIn(built)).toBe((await coverageHls).length);
  });
});

// The bugs this fuzzer found (backends/reproducers.ts says what each was). A reproducer that did not build is a
// failure of its backend's test above, which names it.
describe('fuzz: the reproducers of the bugs it found equal the reference interpreter', () => {
  it('a CUDA warp-per-row kernel that walks a row twice declares its shared copy of the row once', () => {
    expect(sharedDeclaredTwice(emitCuda(compiledProgram('m1', [SHARED_WALKS.kernel])).get('m1.cu')!)).toBeUndefined();
  });

  it.skipIf(!GXX)(
    'a CUDA kernel that walks a row twice builds and runs on the emulation, warp-per-row included',
    { timeout: TIMEOUT },
    async () => {
      const failures = new Failures();
      const ran = await runOnEngine('cuda-emu', 'cuda', only(await cudaBuilt, SHARED_WALKS), failures);
      expect(
        ran.some((r) => r.includes('warp-per-row')),
        ran.length > 0 ? `runs: ${ran.join('; ')}` : 'the reproducer did not build',
      ).toBe(true);
      expect(failures.report(), failures.report().join('\n\n')).toEqual([]);
    },
  );

  it.skipIf(!GXX)(
    'the vector columns of CUDA merge-path keep the accumulator of a nested reduction per column',
    { timeout: TIMEOUT },
    async () => {
      const failures = new Failures();
      const ran = await runOnEngine('cuda-emu', 'cuda', only(await cudaBuilt, NESTED_VECTOR_COLUMNS), failures);
      expect(
        ran.some((r) => r.includes('merge-path')),
        ran.length > 0 ? `runs: ${ran.join('; ')}` : 'the reproducer did not build',
      ).toBe(true);
      expect(failures.report(), failures.report().join('\n\n')).toEqual([]);
    },
  );

  it.skipIf(!GXX)(
    'the HLS SDDMM of a matrix with itself reads the column operand from row j',
    { timeout: TIMEOUT },
    async () => {
      const failures = new Failures();
      const ran = await runOnEngine('fpga-csim', 'fpga', only(await hlsBuilt, SDDMM_OF_ITSELF), failures);
      expect(
        ran.some((r) => r.includes('sddmm')),
        ran.length > 0 ? `runs: ${ran.join('; ')}` : 'the reproducer did not build',
      ).toBe(true);
      expect(failures.report(), failures.report().join('\n\n')).toEqual([]);
    },
  );

  it.skipIf(!GXX)(
    'the HLS GEMM of a matrix with itself reads its right tile from rows j',
    { timeout: TIMEOUT },
    async () => {
      const failures = new Failures();
      const ran = await runOnEngine('fpga-csim', 'fpga', only(await hlsBuilt, GEMM_OF_ITSELF), failures);
      expect(
        ran.some((r) => r.includes('systolic-gemm')),
        ran.length > 0 ? `runs: ${ran.join('; ')}` : 'the reproducer did not build',
      ).toBe(true);
      expect(failures.report(), failures.report().join('\n\n')).toEqual([]);
    },
  );

  it('HLS emits an op whose second sparse operand is walked along another dim', async () => {
    const files = await emitHlsProject(compiledProgram('m3', [SECOND_OPERAND_ALONG_ANOTHER_DIM.kernel]));
    expect([...files.keys()].some((f) => f.endsWith('.cpp'))).toBe(true);
  });

  it.skipIf(!GXX)(
    'an op whose second sparse operand is walked along another dim runs in HLS C simulation',
    { timeout: TIMEOUT },
    async () => {
      const failures = new Failures();
      const built = only(await hlsBuilt, SECOND_OPERAND_ALONG_ANOTHER_DIM);
      const ran = await runOnEngine('fpga-csim', 'fpga', built, failures);
      expect(ran, 'the reproducer did not build').not.toEqual([]);
      expect(failures.report(), failures.report().join('\n\n')).toEqual([]);
    },
  );
});
