/**
 * `dype build DIR [--emulate | --real] [--jobs N] [--json]`: builds a
 * compiled project's native libraries with its own Makefiles. Per family,
 * the real library where its toolchain and device exist (CUDA: nvcc and an
 * NVIDIA GPU; FPGA: XRT and a card), else the emulated one (CUDA on a CPU
 * emulation, the FPGA kernels in C simulation; g++ only). `--emulate`
 * builds the emulated ones, `--real` the real ones whatever the host has (a
 * CUDA library can be cross-built with nvcc alone). Prints what it built and
 * which backend each library runs as. Libraries built before from the
 * same sources with the same compilers come from the build cache
 * (cli/build-cache.ts) unless `--no-cache`.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ccCommand } from '../codegen/cpu/build.js';
import { InputError } from '../runtime/errors.js';
import type { NativeBackendName, NativeFamily } from '../runtime/native/abi.js';
import { nativeLibraryPath, readProject } from '../runtime/native/project.js';
import { buildKey, fromCache, toCache } from './build-cache.js';
import { usage } from './errors.js';
import { positiveInt } from './int-option.js';

export interface BuildOptions {
  emulate?: boolean;
  real?: boolean;
  jobs?: string;
  json?: boolean;
  /** false with --no-cache. */
  cache?: boolean;
}

/** Whether a compiler given as a command line (`$CXX` may be `ccache g++`) answers --version. */
function compilerRuns(cmd: string): boolean {
  const c = ccCommand(cmd, ['--version']);
  return spawnSync(c.file, c.args, { stdio: 'ignore' }).status === 0;
}

/**
 * Why this host cannot make build `b` (a missing toolchain), checked for every build before any runs, so a build
 * that cannot work fails at once with DY3040 rather than after the others have written their libraries.
 */
function toolchainProblem(b: Build, env: NodeJS.ProcessEnv): string | undefined {
  if (b.backend === 'cuda') {
    const nvcc = env['NVCC'] || 'nvcc';
    return compilerRuns(nvcc) ? undefined : `the cuda library needs nvcc, and '${nvcc} --version' fails here`;
  }
  const cxx = env['CXX'] || 'g++';
  if (!compilerRuns(cxx))
    return `the ${b.backend} library needs a C++ compiler, and '${cxx} --version' fails here (set CXX to one)`;
  if (b.backend === 'xrt') {
    const xrt = env['XILINX_XRT'] || '/opt/xilinx/xrt';
    if (!existsSync(join(xrt, 'include', 'xrt', 'xrt_device.h')))
      return `the xrt library needs XRT's headers, and ${join(xrt, 'include', 'xrt')} has none (set XILINX_XRT to an XRT install)`;
  }
  return undefined;
}

/** Every file and folder under `dir` (paths), to take back what a failed build added. */
function listTree(dir: string, out = new Set<string>()): Set<string> {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    out.add(p);
    if (e.isDirectory()) listTree(p, out);
  }
  return out;
}

/** Removes what is under `dir` now and was not in `before` (deepest first), leaving what was there. */
function removeAdded(dir: string, before: ReadonlySet<string>): void {
  const added = [...listTree(dir)].filter((p) => !before.has(p)).sort((a, b) => b.length - a.length);
  for (const p of added) rmSync(p, { recursive: true, force: true });
}

/** An NVIDIA GPU this process can see. */
function gpuPresent(): boolean {
  const r = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' });
  return r.status === 0 && /GPU \d+:/.test(r.stdout);
}

/** An FPGA card XRT can see. */
function fpgaPresent(): boolean {
  if (!process.env['XILINX_XRT']) return false;
  const r = spawnSync('xbutil', ['examine'], { encoding: 'utf8' });
  return r.status === 0 && /\[\d{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d\]/i.test(r.stdout);
}

interface Build {
  family: NativeFamily;
  backend: NativeBackendName;
  dir: string;
  target: string;
  library: string;
  why: string;
}

export function buildCommand(dir: string, o: BuildOptions, stdout: (s: string) => void): void {
  if (o.emulate && o.real) throw usage('--emulate and --real exclude each other');
  const jobs = o.jobs === undefined ? 2 : positiveInt('--jobs', o.jobs, 1);
  const info = readProject(dir);
  // A target the project was compiled with whose Makefile is gone would be skipped without a word.
  const targets = (info as { targets?: unknown }).targets;
  for (const [target, sub] of [
    ['cuda', 'cuda'],
    ['hls', 'hls'],
  ] as const)
    if (Array.isArray(targets) && targets.includes(target) && !existsSync(join(dir, sub, 'Makefile')))
      throw new InputError(
        'DY3044',
        join(dir, sub, 'Makefile'),
        undefined,
        `the project was compiled with the ${target} target, but its Makefile is missing: recompile the project with dype compile`,
      );
  const builds: Build[] = [];
  const cudaDir = join(dir, 'cuda');
  if (existsSync(join(cudaDir, 'Makefile'))) {
    const real = o.real || (!o.emulate && compilerRuns('nvcc') && gpuPresent());
    const why = o.real
      ? '--real'
      : o.emulate
        ? '--emulate'
        : real
          ? 'nvcc and an NVIDIA GPU are present'
          : `${compilerRuns('nvcc') ? 'no NVIDIA GPU' : 'no nvcc'} on this host`;
    builds.push(
      real
        ? {
            family: 'cuda',
            backend: 'cuda',
            dir: cudaDir,
            target: `lib${info.program}_cuda.so`,
            library: nativeLibraryPath(dir, info.program, 'cuda', false),
            why,
          }
        : {
            family: 'cuda',
            backend: 'cuda-emu',
            dir: cudaDir,
            target: `lib${info.program}_cuda_emu.so`,
            library: nativeLibraryPath(dir, info.program, 'cuda', true),
            why,
          },
    );
  }
  const hlsDir = join(dir, 'hls');
  if (existsSync(join(hlsDir, 'Makefile'))) {
    const real = o.real || (!o.emulate && fpgaPresent());
    const why = o.real
      ? '--real'
      : o.emulate
        ? '--emulate'
        : real
          ? 'XRT and an FPGA card are present'
          : 'no FPGA card (XRT) on this host';
    builds.push(
      real
        ? {
            family: 'fpga',
            backend: 'xrt',
            dir: hlsDir,
            target: 'xrt-lib',
            library: nativeLibraryPath(dir, info.program, 'fpga', false),
            why,
          }
        : {
            family: 'fpga',
            backend: 'fpga-csim',
            dir: hlsDir,
            target: 'csim-lib',
            library: nativeLibraryPath(dir, info.program, 'fpga', true),
            why,
          },
    );
  }
  if (builds.length === 0)
    throw new InputError(
      'DY3043',
      dir,
      undefined,
      'the project has no native targets: compile it with dype compile FILE.dy -o DIR (targets cuda, hls)',
    );
  for (const b of builds) {
    const problem = toolchainProblem(b, process.env);
    if (problem) throw new InputError('DY3040', b.dir, undefined, `${problem}; nothing was built`);
    try {
      accessSync(b.dir, constants.W_OK);
    } catch {
      throw new InputError('DY3017', b.dir, undefined, 'cannot write into the project folder; nothing was built');
    }
  }
  const done: { family: string; backend: string; library: string; seconds: number; why: string; cached: boolean }[] =
    [];
  // All or nothing: a build that fails takes back every file this command added to the project (the libraries
  // built before it included), as every dype command leaves no output behind when it fails.
  const before = new Map(builds.map((b) => [b.dir, listTree(b.dir)]));
  const failed = (why: string): never => {
    for (const [d, had] of before) removeAdded(d, had);
    throw new InputError('DY3052', dir, undefined, `${why}; nothing was built`);
  };
  for (const b of builds) {
    const t0 = performance.now();
    const key = o.cache === false ? undefined : buildKey(b.dir, b.target);
    if (key !== undefined && fromCache(key, b.library)) {
      const seconds = (performance.now() - t0) / 1e3;
      done.push({ family: b.family, backend: b.backend, library: b.library, seconds, why: b.why, cached: true });
      continue;
    }
    // BUILD is where the HLS Makefile puts its outputs: the library's path (nativeLibraryPath) is fixed.
    const r = spawnSync('make', ['-C', b.dir, `-j${jobs}`, b.target, 'BUILD=build'], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (r.error) failed(`cannot run make: ${r.error.message}`);
    if (r.status !== 0) {
      const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n');
      failed(`building ${b.library} (${b.backend}) failed; make's last lines:\n${tail}\n`);
    }
    if (!existsSync(b.library)) failed(`make ${b.target} in ${b.dir} succeeded but did not write ${b.library}`);
    if (key !== undefined) toCache(key, b.library);
    done.push({
      family: b.family,
      backend: b.backend,
      library: b.library,
      seconds: (performance.now() - t0) / 1e3,
      why: b.why,
      cached: false,
    });
  }
  if (o.json) {
    stdout(`${JSON.stringify({ project: dir, program: info.program, built: done }, null, 2)}\n`);
    return;
  }
  for (const d of done)
    stdout(
      `built ${d.library}: backend ${d.backend} (${d.why}), ${d.cached ? 'from the build cache (same sources and compilers), ' : ''}${d.seconds.toFixed(1)} s\n`,
    );
}
