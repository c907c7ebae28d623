/**
 * The entries of the backend fuzzer (generated programs and hand-written
 * reproducers, lowered, with their inputs and the reference interpreter's
 * results) and their runs: on an executor (wasm, native C) at one thread and
 * two, and through the stage engine on emulated GPUs or FPGAs, every
 * implementation of every op on one device and split over two. Each result
 * is compared with the reference's (compare.ts).
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { wasmManifest } from '../../../codegen/wasm/emit.js';
import { compileSource } from '../../../frontend/compile.js';
import { interpretKernel } from '../../../interp/interpret.js';
import type { Kernel } from '../../../ir/module.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../../passes/index.js';
import { InputError } from '../../../runtime/errors.js';
import { seedFor } from '../../../runtime/random.js';
import { KernelEngine, Slot } from '../../../runtime/exec/index.js';
import { NativeStageBackend } from '../../../runtime/native/backend.js';
import { createNativeCpuExecutor } from '../../../runtime/native/cpu-executor.js';
import { NativeLibrary } from '../../../runtime/native/library.js';
import { loadSystemFile } from '../../../runtime/system/load.js';
import type { Tensor } from '../../../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../../../runtime/wasm/executor.js';
import type { WasmManifest } from '../../../runtime/wasm/manifest.js';
import { REPO_ROOT } from '../../helpers/cli.js';
import { TOL_F64 } from '../../wasm/compare.js';
import { type Case, makeCase, type Size } from '../gen/cases.js';
import { generate } from '../gen/generator.js';
import { hugeFits, hugeShapes } from '../gen/huge.js';
import { source } from '../gen/program.js';
import { chance, describeError, type Failure, Failures, FUZZ_SCALE, FUZZ_SEED_OFFSET, Rng } from '../util.js';
import type { Built } from './build.js';
import { firstDifference, TOL_F64_REORDERED } from './compare.js';

export interface Entry {
  /** The kernel's name: f<n> for a generated program. */
  name: string;
  src: string;
  kernel: Kernel;
  cases: { c: Case; want: Map<string, Tensor> }[];
  wasm?: { binary: Uint8Array; manifest: WasmManifest };
  /** A hand-written program, not a drawn one: the file that holds it (reproducers.ts, coverage.ts), and how to run it again. */
  hand?: string;
}

/** Failures whose first few are also printed whole: the report clips each input to 1200 characters. */
export class Reported extends Failures {
  private printed = 0;
  override add(f: Failure): void {
    if (this.printed++ < 3) console.log(`[${f.stage}] ${f.problem}\n  at ${f.where}\n${f.input}\n`);
    super.add(f);
  }
}

/** Where a failure is, with the three settings that draw its program again. */
export function where(e: Entry, c?: Case, detail = ''): string {
  const again = e.hand
    ? e.hand
    : `${c?.label === 'huge' && FUZZ_HUGE === 'all' ? 'DYPE_FUZZ_HUGE=1 ' : ''}DYPE_FUZZ_SEED=${FUZZ_SEED_OFFSET} DYPE_FUZZ_SCALE=${FUZZ_SCALE} DYPE_FUZZ_ONLY=${e.name}`;
  return `program ${e.name} (${again})${c ? `, ${c.label} input` : ''}${detail ? `, ${detail}` : ''}`;
}

export function reproducer(e: Entry, c?: Case): string {
  return `${e.src}${c ? `inputs: ${c.shapes}\nvalues: ${c.values}` : ''}`;
}

/** The kernel of a one-kernel source after the default pipeline and lower-kernels (what every backend emits from). */
export function lowered(src: string): Kernel {
  const r = compileSource(src, 'fuzz.dy');
  if (!r.module) throw new Error(r.diagnostics.map((d) => `${d.code} ${d.message}`).join('\n'));
  return runPipeline(r.module, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] }).kernels[0]!;
}

/** A hand-written program and one input as an entry of the fuzz runs (the reproducers of bugs it found). */
export function handEntry(name: string, src: string, c: Omit<Case, 'shapes' | 'values'>): Entry {
  const kernel = lowered(src);
  const full: Case = { ...c, shapes: [...c.tensors.keys()].join(', '), values: '' };
  const want = interpretKernel(kernel, c).outputs;
  return { name, src, kernel, cases: [{ c: full, want }], hand: 'test/fuzz/backends/reproducers.ts' };
}

/**
 * Which programs also run on a huge input (gen/huge.ts), of those that fit: none, all, or the first with a
 * statement of SpMV's shape and the first with one of SpMM's (`hugeShapes`; each costs 1-5 s, most of it the CUDA
 * emulation's runs).
 */
export type HugeMode = 'none' | 'first' | 'all';
/** DYPE_FUZZ_HUGE=1: every program that fits; 0: none; unset: the first of each shape. */
export const FUZZ_HUGE: HugeMode =
  process.env.DYPE_FUZZ_HUGE === '1' ? 'all' : process.env.DYPE_FUZZ_HUGE === '0' ? 'none' : 'first';

export interface Drawn {
  entries: Entry[];
  stats: {
    drawn: number;
    accepted: number;
    rejectedBy: Record<string, number>;
    cases: number;
    /** Huge inputs drawn, and the reference's time on them. */
    huge?: number;
    hugeMs?: number;
  };
  /** What the pipeline or the reference threw (an InputError of the reference only drops its case). */
  failures: Reported;
}

/**
 * `count` programs drawn from `seed`: those the checker accepts, each with a tiny and a mid-sized input, some with a
 * large one or a dim of 0, those `huge` picks with a huge one, and the reference's results. `only` keeps the
 * programs it names (all are drawn, so that each comes out as in a full run).
 */
export function drawEntries(seed: number, count: number, only?: readonly string[], huge: HugeMode = 'none'): Drawn {
  const rng = new Rng(seed);
  const d: Drawn = {
    entries: [],
    stats: { drawn: 0, accepted: 0, rejectedBy: {}, cases: 0 },
    failures: new Reported(),
  };
  const { stats } = d;
  /** The shapes still without a program that takes a huge input ('first'). */
  const wanted = new Set(['spmv', 'spmm']);
  for (let id = 0; id < count; id++) {
    const p = generate(rng, id);
    const src = source(p);
    stats.drawn++;
    const r = compileSource(src, `${p.name}.dy`);
    if (!r.module) {
      const errors = r.diagnostics.filter((x) => x.severity === 'error');
      for (const x of errors) stats.rejectedBy[x.code] = (stats.rejectedBy[x.code] ?? 0) + 1;
      // The first rejection in full, for whoever improves the generator.
      if (stats.drawn - stats.accepted === 1)
        console.log(`first rejected program:\n${src}${errors.map((x) => `${x.code} ${x.message}`).join('\n')}`);
      continue;
    }
    stats.accepted++;
    let kernel: Kernel;
    try {
      kernel = runPipeline(r.module, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] }).kernels[0]!;
    } catch (err) {
      d.failures.add({ stage: 'pipeline', where: `program ${p.name}`, problem: describeError(err), input: src });
      continue;
    }
    const e: Entry = { name: p.name, src, kernel, cases: [] };
    const sizes: Size[] = ['tiny', 'mid'];
    if (chance(rng, 0.3)) sizes.push('large');
    if (chance(rng, 0.1)) sizes.push('empty');
    // A case the reference refuses with an InputError is dropped (not a valid call); any other error is a failure.
    const take = (c: Case): boolean => {
      try {
        e.cases.push({ c, want: interpretKernel(kernel, c).outputs });
        stats.cases++;
        return true;
      } catch (err) {
        if (!(err instanceof InputError))
          d.failures.add({
            stage: 'reference',
            where: where(e, c),
            problem: describeError(err),
            input: reproducer(e, c),
          });
        return false;
      }
    };
    for (const size of sizes) take(makeCase(p, rng, size));
    const kept = only === undefined || only.includes(p.name);
    // Which programs take a huge input does not depend on `only`, and the input is drawn from a generator of its
    // own (the program's name and the seed): the other inputs, and a program's huge one, are the same whatever else
    // runs.
    let big = false;
    if (huge !== 'none' && e.cases.length > 0 && hugeFits(p)) {
      const shapes = [...hugeShapes(p)];
      big = huge === 'all' || shapes.some((x) => wanted.delete(x));
    }
    if (kept && big) {
      const c = makeCase(p, new Rng(seedFor(seed, p.name)), 'huge');
      const t0 = performance.now();
      if (take(c)) {
        stats.huge = (stats.huge ?? 0) + 1;
        stats.hugeMs = Math.round((stats.hugeMs ?? 0) + performance.now() - t0);
      }
    }
    if (e.cases.length > 0 && kept) d.entries.push(e);
  }
  return d;
}

/** Runs of huge inputs by backend, and the milliseconds they took (the reference's time is Drawn's). */
export const HUGE_RUNS: Record<string, { runs: number; ms: number }> = {};
function countHuge(backend: string, t0: number): void {
  const h = (HUGE_RUNS[backend] ??= { runs: 0, ms: 0 });
  h.runs++;
  h.ms += Math.round(performance.now() - t0);
}

/**
 * Every case on an executor at one thread but the huge ones, and the large and huge ones at two (their rows are split
 * between them).
 */
async function runExecutor(
  backend: string,
  e: Entry,
  open: (threads: number) => Promise<WasmExecutor> | WasmExecutor,
  failures: Failures,
): Promise<number> {
  let runs = 0;
  for (const threads of [1, 2]) {
    const cases = e.cases.filter(({ c }) =>
      threads === 1 ? c.label !== 'huge' : c.label === 'large' || c.label === 'huge',
    );
    if (cases.length === 0) continue;
    const exec = await open(threads);
    try {
      for (const { c, want } of cases) {
        const at = where(e, c, threads > 1 ? `${threads} threads` : '');
        try {
          const t0 = performance.now();
          const got = exec.run({ tensors: c.tensors, scalars: c.scalars }).outputs;
          runs++;
          if (c.label === 'huge') countHuge(backend, t0);
          const diff = firstDifference(e.kernel, got, want, TOL_F64);
          if (diff) failures.add({ stage: backend, where: at, problem: diff, input: reproducer(e, c) });
        } catch (err) {
          failures.add({ stage: `${backend} run`, where: at, problem: describeError(err), input: reproducer(e, c) });
        }
      }
    } finally {
      exec.close();
    }
  }
  return runs;
}

/** The entries' cases on the wasm executor (each entry's module emitted beforehand); the number of runs. */
export async function runWasm(entries: readonly Entry[], failures: Failures): Promise<number> {
  let runs = 0;
  for (const e of entries)
    runs += await runExecutor(
      'wasm',
      e,
      (threads) => createWasmExecutor(e.wasm!.binary, e.wasm!.manifest, { threads }),
      failures,
    );
  return runs;
}

/** The built entries' cases on the native CPU executor; the number of runs. */
export async function runNative(built: readonly Built[], failures: Failures): Promise<number> {
  let runs = 0;
  for (const b of built)
    for (const e of b.list)
      runs += await runExecutor(
        'native',
        e,
        (threads) =>
          createNativeCpuExecutor(b.path, wasmManifest(e.kernel, [], true), {
            threads,
            program: b.program,
            programHash: b.hash,
          }),
        failures,
      );
  return runs;
}

/**
 * Every case of the built entries through the stage engine: each implementation of each op on one device, the
 * first ones also split over two (row ranges balanced by entries). Returns each run done, as
 * `<entry>, <case> input, <devices>: <op> <implementation>, ...`.
 */
export async function runOnEngine(
  backend: string,
  family: 'cuda' | 'fpga',
  built: readonly Built[],
  failures: Failures,
): Promise<string[]> {
  const sys = loadSystemFile(join(REPO_ROOT, 'systems', 'paper-2g2f.json'));
  const kind = family === 'cuda' ? 'gpu' : 'fpga';
  const ran: string[] = [];
  for (const b of built) {
    const lib = NativeLibrary.open(b.path, {
      program: b.program,
      programHash: b.hash,
      family,
      emulated: true,
      buildCommand: 'test/fuzz/backends.test.ts',
    });
    const be = new NativeStageBackend(lib, family);
    for (const e of b.list) {
      const manifest = e.wasm!.manifest;
      const ops = manifest.ops.map((o) => o.op);
      const impls = ops.map((op) =>
        String(lib.call('op_impls', e.name, op) ?? '')
          .split(',')
          .filter((x) => x !== ''),
      );
      const variants = Math.max(1, ...impls.map((x) => x.length));
      const plans = [
        ...Array.from({ length: variants }, (_, r) => ({ devices: [`${kind}0`], r })),
        { devices: [`${kind}0`, `${kind}1`], r: 0 },
      ];
      // A huge input is split over two devices in every implementation (ranges that start past row 0, rows of
      // thousands of entries on either side), the others in the first.
      const split = Array.from({ length: variants }, (_, r) => ({ devices: [`${kind}0`, `${kind}1`], r }));
      for (const { c, want } of e.cases)
        for (const plan of c.label === 'huge' ? [...plans.slice(0, variants), ...split] : plans) {
          const chosen = Object.fromEntries(ops.map((op, i) => [op, impls[i]![plan.r % impls[i]!.length]!]));
          const detail = `${plan.devices.join(' + ')}: ${Object.entries(chosen)
            .map(([op, impl]) => `${op} ${impl}`)
            .join(', ')}`;
          // A fresh engine a run: one that threw keeps nothing for the next.
          const engine = new KernelEngine(manifest, { [kind]: be }, sys);
          const slot = new Slot();
          try {
            const t0 = performance.now();
            engine.begin(slot, engine.prepare({ tensors: c.tensors, scalars: c.scalars }));
            await engine.runStage(slot, { ops, kind, devices: plan.devices, impls: chosen });
            const got = await engine.collect(slot);
            engine.end(slot);
            ran.push(`${e.name}, ${c.label} input, ${detail}`);
            if (c.label === 'huge') countHuge(backend, t0);
            const diff = firstDifference(e.kernel, got, want, TOL_F64_REORDERED);
            if (diff)
              failures.add({ stage: backend, where: where(e, c, detail), problem: diff, input: reproducer(e, c) });
          } catch (err) {
            failures.add({
              stage: `${backend} run`,
              where: where(e, c, detail),
              problem: describeError(err),
              input: reproducer(e, c),
            });
          } finally {
            engine.close([slot]);
          }
        }
    }
  }
  return ran;
}

/** Prints the counts (so that they show in the test log) and expects no failures, reporting each distinct one. */
export function expectClean(name: string, failures: Failures, counts: Record<string, unknown>): void {
  console.log(`fuzz backends, ${name}: ${JSON.stringify(counts)}`);
  expect(failures.report(), failures.report().join('\n\n')).toEqual([]);
}
