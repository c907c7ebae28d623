/**
 * Building the fuzzer's entries for the backends that compile: native C
 * libraries (codegen/cpu, the system C compiler), CUDA projects for the CPU
 * emulation (`make lib<prog>_cuda_emu.so`) and HLS projects for C simulation
 * (`make csim-lib`). Entries go in libraries of CHUNK programs, BUILD_JOBS
 * compiler runs at a time whichever backend asks; a library that does not
 * compile is built again without the kernels the compiler names.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { buildCpuLibraryAsync } from '../../../codegen/cpu/build.js';
import { cpuLibrarySource } from '../../../codegen/cpu/library.js';
import { emitCuda } from '../../../codegen/cuda/emit.js';
import { emitHlsProject } from '../../../codegen/hls/project.js';
import { DEFAULT_PLATFORM } from '../../../codegen/hls/view-model.js';
import { programHash } from '../../../codegen/native/hash.js';
import type { CompiledProgram, ProjectFiles } from '../../../codegen/project.js';
import { wasmManifest } from '../../../codegen/wasm/emit.js';
import { DiagnosticError } from '../../../ir/diagnostics.js';
import type { Kernel } from '../../../ir/module.js';
import { writeProject } from '../../cuda/helpers.js';
import { run } from '../../cuda/nvcc.js';
import { describeError, type Failures } from '../util.js';
import { type Entry, reproducer, where } from './harness.js';

/** Programs a library (one compiler run): shorter runs than one of everything, and as many as there are cores. */
const CHUNK = 12;
const BUILD_JOBS = Math.max(1, Math.min(4, availableParallelism()));
/** The program name each entry is emitted under when it is tried alone. */
const PROGRAM_NAME = 'fuzz';

/** A library of some entries' kernels: its program name, file and the hash it carries. */
export interface Built {
  program: string;
  list: Entry[];
  path: string;
  hash: string;
  cleanup?: () => void;
}

type BuildResult = { ok: true; path: string; cleanup?: () => void } | { ok: false; output: string };

/** How one backend builds a library of entries (in its own folder `dir`) and finds the kernels its compiler names. */
export interface Target {
  backend: string;
  /** The project of a program, where the backend writes one (CUDA, HLS): `emittable` tries each entry alone. */
  emit?(p: CompiledProgram): Promise<ProjectFiles>;
  build(program: string, list: Entry[], dir: string): Promise<BuildResult>;
  culprits(output: string, list: Entry[]): Entry[];
}

export function compiledProgram(name: string, kernels: readonly Kernel[]): CompiledProgram {
  return { file: `${name}.dy`, source: '', name, module: { kernels: [...kernels] } };
}

/** One project of unrelated programs: the fit check is for one card, not what C simulation runs. */
export const ROOMY = { ...DEFAULT_PLATFORM, resources: { lut: 1e12, ff: 1e12, bram: 1e12, uram: 1e12, dsp: 1e12 } };

/** At most BUILD_JOBS compiler runs at once, whichever backend asks. */
let running = 0;
const waiting: (() => void)[] = [];
async function limited<T>(job: () => Promise<T>): Promise<T> {
  // A finished run hands its place to the next one waiting.
  if (running < BUILD_JOBS) running++;
  else await new Promise<void>((go) => waiting.push(go));
  try {
    return await job();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** The entries a CUDA or HLS compiler message names (their functions and files are named after the kernel). */
const namedKernels = (output: string, list: Entry[]): Entry[] =>
  list.filter((e) => new RegExp(`\\b(dy_)?${e.name}_op\\d`).test(output));

/** The native library's functions are numbered over every op of its kernels in order (codegen/cpu/library.ts). */
function namedCpuKernels(output: string, list: Entry[]): Entry[] {
  const owner = list.flatMap((e) => (e.kernel.loops ?? []).map(() => e));
  const hit = new Set<Entry>();
  for (const m of output.matchAll(/\bdy_f(\d+)\b/g)) {
    const e = owner[Number(m[1])];
    if (e) hit.add(e);
  }
  return [...hit];
}

/** Writes the project `emit` gives for the entries into dir, then makes `goal` there. */
async function project(
  emit: (p: CompiledProgram) => Promise<ProjectFiles>,
  program: string,
  list: Entry[],
  dir: string,
  goal: string,
): Promise<{ ok: boolean; output: string }> {
  try {
    writeProject(
      dir,
      await emit(
        compiledProgram(
          program,
          list.map((e) => e.kernel),
        ),
      ),
    );
  } catch (err) {
    // What an emitter threw is a failed build's output: a kernel it names is left out and reported.
    return { ok: false, output: describeError(err) };
  }
  const r = await run('make', ['-s', '-C', dir, goal], dir, 900_000);
  return { ok: r.status === 0, output: r.output };
}

export const NATIVE: Target = {
  backend: 'native',
  async build(program, list) {
    const kernels = list.map((e) => ({ kernel: e.kernel, manifest: wasmManifest(e.kernel, [], true) }));
    const hash = programHash({ kernels: list.map((e) => e.kernel) });
    try {
      const b = await buildCpuLibraryAsync(cpuLibrarySource(program, hash, kernels), null);
      return { ok: true, path: b.path, cleanup: b.cleanup };
    } catch (err) {
      // The whole message: it holds the compiler's output, whose function names say which kernels failed.
      return { ok: false, output: err instanceof Error ? err.message : String(err) };
    }
  },
  culprits: namedCpuKernels,
};

const emitCudaProject = async (p: CompiledProgram): Promise<ProjectFiles> => emitCuda(p);

export const CUDA: Required<Target> = {
  backend: 'cuda',
  emit: emitCudaProject,
  async build(program, list, dir) {
    const r = await project(emitCudaProject, program, list, dir, `lib${program}_cuda_emu.so`);
    return r.ok ? { ok: true, path: join(dir, `lib${program}_cuda_emu.so`) } : { ok: false, output: r.output };
  },
  culprits: namedKernels,
};

const emitHls = (p: CompiledProgram): Promise<ProjectFiles> => emitHlsProject(p, { platform: ROOMY });

export const HLS: Required<Target> = {
  backend: 'hls',
  emit: emitHls,
  async build(program, list, dir) {
    const r = await project(emitHls, program, list, dir, 'csim-lib');
    return r.ok
      ? { ok: true, path: join(dir, 'build', 'lib', `lib${program}_fpga_csim.so`) }
      : { ok: false, output: r.output };
  },
  culprits: namedKernels,
};

/**
 * The entries whose kernel the target's generator emits when tried alone: a refusal with diagnostics (the target's
 * documented limits, DY6xxx) is counted in `refused`, anything else thrown is a failure.
 */
export async function emittable(
  target: Required<Target>,
  entries: readonly Entry[],
  failures: Failures,
  refused: Record<string, number>,
): Promise<Entry[]> {
  const out: Entry[] = [];
  for (const e of entries) {
    try {
      await target.emit(compiledProgram(PROGRAM_NAME, [e.kernel]));
      out.push(e);
    } catch (err) {
      if (err instanceof DiagnosticError) for (const d of err.diagnostics) refused[d.code] = (refused[d.code] ?? 0) + 1;
      else
        failures.add({
          stage: `${target.backend} emit`,
          where: where(e),
          problem: describeError(err),
          input: reproducer(e),
        });
    }
  }
  return out;
}

/** Numbers the libraries (each its own program name and folder). */
let libraries = 0;

/**
 * Libraries of `list` in chunks of CHUNK programs (each a program of its own: shorter compiles, every core busy), in
 * folders under `work`. A chunk that does not compile is built again without the kernels the compiler names (each a
 * failure), or halved where it names none of them.
 */
export async function buildChunks(target: Target, list: Entry[], failures: Failures, work: string): Promise<Built[]> {
  const attempt = async (part: Entry[]): Promise<Built[]> => {
    if (part.length === 0) return [];
    const program = `${PROGRAM_NAME}_${target.backend}${libraries++}`;
    const r = await limited(() => target.build(program, part, join(work, program)));
    if (r.ok)
      return [
        {
          program,
          list: part,
          path: r.path,
          hash: programHash({ kernels: part.map((e) => e.kernel) }),
          ...(r.cleanup ? { cleanup: r.cleanup } : {}),
        },
      ];
    const lines = r.output.split('\n');
    const errors = lines.filter((l) => /error/.test(l));
    // A compiler names the function an error is in on a line of its own before it.
    const errorsOf = (e: Entry): string[] => {
      let within = '';
      return lines.filter((l) => {
        if (/In (member )?function/.test(l)) within = l;
        return /error/.test(l) && target.culprits(`${within}\n${l}`, [e]).length > 0;
      });
    };
    const single = part.length === 1;
    const named = single ? part : target.culprits(r.output, part);
    if (single || (named.length > 0 && named.length < part.length)) {
      for (const e of named) {
        const own = errorsOf(e);
        failures.add({
          stage: `${target.backend} build`,
          where: where(e),
          problem: (own.length > 0 ? own : errors).slice(0, 3).join(' | ') || r.output.slice(0, 400),
          input: reproducer(e),
        });
      }
      return attempt(part.filter((e) => !named.includes(e)));
    }
    const half = part.length >> 1;
    return [...(await attempt(part.slice(0, half))), ...(await attempt(part.slice(half)))];
  };
  const chunks: Entry[][] = [];
  for (let i = 0; i < list.length; i += CHUNK) chunks.push(list.slice(i, i + CHUNK));
  return (await Promise.all(chunks.map(attempt))).flat();
}
