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
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../runtime/errors.js';
import type { NativeBackendName, NativeFamily } from '../runtime/native/abi.js';
import { nativeLibraryPath, readProject } from '../runtime/native/project.js';
import { buildKey, fromCache, toCache } from './build-cache.js';
import { CliError, usage } from './errors.js';
import { positiveInt } from './int-option.js';

export interface BuildOptions {
  emulate?: boolean;
  real?: boolean;
  jobs?: string;
  json?: boolean;
  /** false with --no-cache. */
  cache?: boolean;
}

const has = (cmd: string, args: string[] = ['--version']): boolean =>
  spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

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
  const builds: Build[] = [];
  const cudaDir = join(dir, 'cuda');
  if (existsSync(join(cudaDir, 'Makefile'))) {
    const real = o.real || (!o.emulate && has('nvcc') && gpuPresent());
    const why = o.real
      ? '--real'
      : o.emulate
        ? '--emulate'
        : real
          ? 'nvcc and an NVIDIA GPU are present'
          : `${has('nvcc') ? 'no NVIDIA GPU' : 'no nvcc'} on this host`;
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
  const done: { family: string; backend: string; library: string; seconds: number; why: string; cached: boolean }[] =
    [];
  for (const b of builds) {
    const t0 = performance.now();
    const key = o.cache === false ? undefined : buildKey(b.dir, b.target);
    if (key !== undefined && fromCache(key, b.library)) {
      const seconds = (performance.now() - t0) / 1e3;
      done.push({ family: b.family, backend: b.backend, library: b.library, seconds, why: b.why, cached: true });
      continue;
    }
    const r = spawnSync('make', ['-C', b.dir, `-j${jobs}`, b.target], { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.error) throw new CliError(`dype build: cannot run make: ${r.error.message}`);
    if (r.status !== 0) {
      const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n');
      throw new CliError(`dype build: building ${b.library} (${b.backend}) failed:\n${tail}`);
    }
    if (!existsSync(b.library))
      throw new CliError(`dype build: make ${b.target} in ${b.dir} succeeded but did not write ${b.library}`);
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
