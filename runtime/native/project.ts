/**
 * A compiled project's backends: the wasm kernels under `wasm/`, and the
 * native libraries `dype build` makes under `cuda/` and `hls/` (the real
 * ones, or with `emulate` the CPU emulation of CUDA and the C simulation of
 * the FPGA kernels; never one for the other without being asked). The
 * project's `project.json` (written by `dype compile`) names the program,
 * its hash and kernels.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, valueKind } from '../errors.js';
import type { StageBackends } from '../exec/backend.js';
import { wasmStageBackendFromDir } from '../exec/wasm-backend.js';
import { fsReason } from '../io/files.js';
import { locateJsonError } from '../system/json-locate.js';
import type { DeviceKind, SystemSpec } from '../system/types.js';
import { NATIVE_BACKENDS, type NativeFamily } from './abi.js';
import { NativeStageBackend } from './backend.js';
import { NativeLibrary } from './library.js';

/** What a family's real build and run need, for the advice when only the emulated build is there. */
const REAL_NEEDS: Record<NativeFamily, string> = {
  cuda: 'the CUDA toolkit and an NVIDIA GPU are',
  fpga: 'XRT and an FPGA card are',
  cpu: 'a C compiler is',
};

export interface ProjectInfo {
  format: 'dype-project';
  version: 1;
  program: string;
  source: string;
  programHash: string;
  kernels: string[];
}

/**
 * Parses the text of one of a compiled project's JSON files (project.json,
 * plan.json, a wasm kernel's manifest) that should hold `what` (an object).
 * Text that is not JSON (empty, cut short, binary) or JSON that is not an
 * object is InputError DY3044 naming the file and, for a syntax error, the
 * line and column where parsing failed: the project is damaged, so
 * recompiling it is the cure.
 */
export function parseProjectJson(text: string, path: string, what: string): object {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // a UTF-8 byte order mark
  let data: unknown;
  try {
    data = JSON.parse(src);
  } catch (err) {
    const { line, column, message } = locateJsonError(src, err);
    throw new InputError(
      'DY3044',
      path,
      line,
      `invalid JSON at column ${column}: ${message}; expected ${what}: recompile the project with dype compile`,
    );
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new InputError(
      'DY3044',
      path,
      undefined,
      `expected ${what} (a JSON object), got ${valueKind(data)}: recompile the project with dype compile`,
    );
  return data;
}

/** Reads `<dir>/project.json`. */
export function readProject(dir: string): ProjectInfo {
  const path = join(dir, 'project.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(
      'DY3043',
      path,
      undefined,
      `not a compiled dype project: ${fsReason(e)} (compile it with dype compile FILE.dy -o ${dir})`,
    );
  }
  const p = parseProjectJson(text, path, 'a dype project description') as ProjectInfo;
  if (
    p.format !== 'dype-project' ||
    p.version !== 1 ||
    typeof p.program !== 'string' ||
    typeof p.programHash !== 'string' ||
    !Array.isArray(p.kernels)
  )
    throw new InputError(
      'DY3044',
      path,
      undefined,
      'expected a dype project description (format dype-project, version 1): recompile the project with dype compile',
    );
  // The program and kernel names go into library file names and C symbols: C identifiers, as dype compile writes.
  const ident = /^[A-Za-z_][A-Za-z0-9_]*$/;
  const badName = [p.program, ...p.kernels].find((n) => typeof n !== 'string' || !ident.test(n));
  if (badName !== undefined)
    throw new InputError(
      'DY3044',
      path,
      undefined,
      `${JSON.stringify(badName)} is not a program or kernel name dype compile writes (a C identifier): recompile the project with dype compile`,
    );
  return p;
}

/** Where `dype build` (the projects' Makefiles) puts each library of a project. */
export function nativeLibraryPath(dir: string, program: string, family: NativeFamily, emulated: boolean): string {
  return family === 'cuda'
    ? join(dir, 'cuda', `lib${program}_cuda${emulated ? '_emu' : ''}.so`)
    : join(dir, 'hls', 'build', 'lib', `lib${program}_fpga${emulated ? '_csim' : ''}.so`);
}

/**
 * The `dype compile` target whose output builds each native family's library; none for the CPU's, which `dype run
 * --backend native` builds from the program itself (a project's CPU stages run its wasm kernels: SERVED_BY).
 */
const TARGET_OF: Record<NativeFamily, string | undefined> = { cuda: 'cuda', fpga: 'hls', cpu: undefined };

/** What serves each device kind: the wasm kernels, or a family of native libraries (every kind must say). */
export const SERVED_BY: Record<DeviceKind, 'wasm' | NativeFamily> = { cpu: 'wasm', gpu: 'cuda', fpga: 'fpga' };

/** The `dype compile` target whose output runs a device kind's stages in a project. */
export function projectTargetOf(kind: DeviceKind): string {
  const family = SERVED_BY[kind];
  return family === 'wasm' ? 'wasm' : TARGET_OF[family]!;
}

/**
 * The device kinds a project compiled with `targets` can run stages on; undefined where it builds no kernel code
 * at all (a compile of guards or a report alone plans for the whole system, and runs nothing).
 */
export function kindsServedBy(targets: readonly string[]): DeviceKind[] | undefined {
  const all = Object.keys(SERVED_BY) as DeviceKind[];
  const kinds = all.filter((k) => targets.includes(projectTargetOf(k)));
  return kinds.length > 0 ? kinds : undefined;
}

/** The device kinds a compiled project can run stages on (kindsServedBy of the targets its project.json lists). */
export function projectKinds(info: ProjectInfo): DeviceKind[] | undefined {
  const targets = (info as ProjectInfo & { targets?: unknown }).targets;
  return Array.isArray(targets) && targets.every((t) => typeof t === 'string') ? kindsServedBy(targets) : undefined;
}

export interface OpenOptions {
  /** Use the emulated builds (cuda-emu, fpga-csim): required on a host without the devices. */
  emulate: boolean;
  /** The kernel whose wasm module serves the CPU (default: the project's first): a runtime of another kernel refuses it (DY3044). */
  kernel?: string;
  /** Threads of the wasm backend (default 1). */
  threads?: number;
  /** Device kinds to open (default: every kind the system has that the project's targets serve, kindsServedBy). */
  kinds?: readonly DeviceKind[];
}

/**
 * The backends of a compiled project for the device kinds of `sys`: wasm
 * for the CPU, the cuda or cuda-emu library for GPUs, the xrt or fpga-csim
 * library for FPGAs. A library that is missing, of another ABI or program,
 * or not the build asked for is one error naming the file and the command
 * that builds it.
 */
export async function openProject(dir: string, sys: SystemSpec, o: OpenOptions): Promise<StageBackends> {
  if (typeof dir !== 'string' || !Array.isArray(sys?.devices) || typeof o?.emulate !== 'boolean')
    throw new TypeError(
      'openProject(dir, system, options): expected the project folder, a system (loadSystemFile) and { emulate: boolean }',
    );
  const info = readProject(dir);
  // By default the system's kinds the project runs: one compiled without hls has no FPGA library to open, and its
  // guards pick no FPGA partition (cli/compile.ts).
  const served = projectKinds(info);
  const kinds = o.kinds ?? [...new Set(sys.devices.map((d) => d.kind))].filter((k) => !served || served.includes(k));
  const out: StageBackends = {};
  for (const kind of kinds) {
    const family = SERVED_BY[kind];
    if (family === 'wasm') {
      const kernel = o.kernel ?? info.kernels[0]!;
      const builtFrom = {
        program: info.program,
        programHash: info.programHash,
        where: join(dir, 'project.json'),
        kernels: [kernel],
      };
      out[kind] = await wasmStageBackendFromDir(
        join(dir, 'wasm'),
        kernel,
        o.threads !== undefined ? { threads: o.threads, builtFrom } : { builtFrom },
      );
      continue;
    }
    // A project compiled without the family's target has no library to build: `dype build` would say so, so the
    // advice is the recompile (or a partition on the devices the project has).
    const targets = (info as ProjectInfo & { targets?: unknown }).targets;
    const target = TARGET_OF[family];
    if (target !== undefined && Array.isArray(targets) && !targets.includes(target))
      throw new InputError(
        'DY3043',
        join(dir, 'project.json'),
        undefined,
        `the project was compiled without the ${target} target (targets: ${targets.join(', ')}), so nothing in it runs ${kind} stages: recompile with --targets ${[...targets, target].join(',')}, or give a partition whose stages use the devices it has`,
      );
    const path = nativeLibraryPath(dir, info.program, family, o.emulate);
    // `dype build` on a host without the device builds the emulated library: "run dype build" alone would
    // build the same one again, so say which build is there and how to use it or get the other.
    if (!existsSync(path) && existsSync(nativeLibraryPath(dir, info.program, family, !o.emulate))) {
      const { real, emulated } = NATIVE_BACKENDS[family];
      throw new InputError(
        'DY3043',
        path,
        undefined,
        o.emulate
          ? `the emulated ${family} library (${emulated}) is not built, only the real one (${real}): run without --emulate (openProject's emulate: false) to use it, or dype build ${dir} --emulate`
          : `the ${family} library (${real}) is not built, only its emulated build (${emulated}): run with --emulate (openProject's emulate: true) to use it, or dype build ${dir} --real where ${REAL_NEEDS[family]}`,
      );
    }
    const lib = NativeLibrary.open(path, {
      program: info.program,
      programHash: info.programHash,
      family,
      emulated: o.emulate,
      buildCommand: `dype build ${dir}${o.emulate ? ' --emulate' : ''}`,
    });
    out[kind] = new NativeStageBackend(lib, family);
  }
  return out;
}
