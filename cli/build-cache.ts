/**
 * Content-addressed cache of the native libraries `dype build` makes.
 * Projects compiled from the same program generate the same CUDA and HLS
 * sources whatever the system and profiles (only plan.json differs), and a
 * g++ build of one costs 10-30 s, so a rebuild of sources already built with
 * the same compiler and flags copies the library instead.
 *
 * - Key: sha256 of the make target, every source-like file under the build
 *   folder (path and content; build outputs are not sources), the compilers'
 *   `--version` and the environment variables the generated Makefiles read.
 * - Where: `<cacheRoot>/builds/<key>/` (cacheRoot: codegen/wasm/cache.ts),
 *   the library (or a make target's outputs) and their sha256; an entry
 *   whose files do not match their checksums is treated as absent. Entries
 *   are written under a temporary name and renamed, so a concurrent reader
 *   never sees half of one.
 * - `dype build --no-cache` neither reads nor writes it.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { cacheRoot } from '../codegen/wasm/cache.js';
import { makeDirs } from '../runtime/io/files.js';

const FORMAT = 'dype-native-build-2';
const SOURCE = /\.(c|cc|cpp|cxx|h|hh|hpp|cu|cuh|map|tcl|cfg|mk|ini)$|^(Makefile|CMakeLists\.txt)$/;
/**
 * What the generated Makefiles (hls-templates/project/Makefile.hbs, codegen/cuda/templates/Makefile.hbs) read from
 * the environment that shapes a library: every variable they set with `?=` or only read is here or in
 * NOT_IN_LIBRARY (test/compile/build-cache.test.ts fails on one in neither).
 */
export const BUILD_ENV = [
  'CXX',
  'CXXFLAGS',
  'EMUFLAGS',
  'CHECKFLAGS',
  'NVCC',
  'NVCCFLAGS',
  'ARCHS',
  'XILINX_XRT',
  'PLATFORM',
];
/** The Makefiles' variables that do not change a library, with why. */
export const NOT_IN_LIBRARY: Record<string, string> = {
  KERNEL: 'the kernel csim and the hardware flow run',
  INPUTS: "csim's input files",
  OUTPUTS: "csim's output files",
  PARAMS: "csim's parameters",
  CALLER_DIR: "where csim's relative paths start",
  SPLIT: "the hardware flow's row split",
  DEVICES: "the hardware flow's devices",
  BUILD: 'dype build sets it on the make command line (BUILD=build)',
  PWD: "make's own working directory (CALLER_DIR's default)",
};

function sources(dir: string, root = dir, out: [string, string][] = []): [string, string][] {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    // The HLS project's outputs live under build/.
    if (e.isDirectory()) {
      if (!(dir === root && e.name === 'build')) sources(p, root, out);
    } else if (e.isFile() && SOURCE.test(e.name)) out.push([relative(root, p), sha(readFileSync(p))]);
  }
  return out;
}

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

function version(cmd: string): string {
  const r = spawnSync(cmd, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : `(${cmd} not found)`;
}

/** The cache key of building `target` in `dir` with this host's compilers and environment. */
export function buildKey(dir: string, target: string, env: NodeJS.ProcessEnv = process.env): string {
  return sha(
    Buffer.from(
      JSON.stringify({
        format: FORMAT,
        target,
        files: sources(dir),
        cxx: version(env['CXX'] || 'g++'),
        nvcc: target.includes('_cuda.') ? version(env['NVCC'] || 'nvcc') : '',
        env: BUILD_ENV.map((k) => [k, env[k] ?? null]),
      }),
    ),
  );
}

/**
 * Copies the cached files of `key` to `files` (a library, or a make target's
 * several outputs, each stored under its base name); false when any is
 * missing or fails its checksum, and then none is written.
 */
export function fromCache(
  key: string,
  files: string | readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const at = join(cacheRoot(env), 'builds', key);
  const outs = typeof files === 'string' ? [files] : files;
  try {
    const sums = checksums(readFileSync(join(at, 'sha256'), 'utf8'));
    const bytes = outs.map((f) => {
      const b = readFileSync(join(at, basename(f)));
      if (sums.get(basename(f)) !== sha(b)) throw new Error(`${f}: checksum`);
      return b;
    });
    outs.forEach((f, i) => {
      const tmp = `${f}.${randomBytes(6).toString('hex')}.tmp`;
      // A fresh project has no output folder yet (the HLS library's build/lib/): the copy makes it, as make would.
      mkdirSync(dirname(f), { recursive: true });
      writeFileSync(tmp, bytes[i]!, { mode: 0o755 });
      renameSync(tmp, f);
    });
    return true;
  } catch {
    return false;
  }
}

/** `sha256` of an entry: one `<hash>  <name>` line per file, as sha256sum writes them. */
function checksums(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\n')) {
    const hit = /^([0-9a-f]{64}) {2}(\S.*)$/.exec(line);
    if (hit) m.set(hit[2]!, hit[1]!);
  }
  return m;
}

/** Keeps a copy of freshly built files (names distinct by base name); a cache that cannot be written is skipped. */
export function toCache(key: string, files: string | readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  const at = join(cacheRoot(env), 'builds', key);
  const tmp = `${at}.${randomBytes(6).toString('hex')}.tmp`;
  const outs = typeof files === 'string' ? [files] : files;
  try {
    makeDirs(tmp);
    const lines = outs.map((f) => {
      copyFileSync(f, join(tmp, basename(f)));
      return `${sha(readFileSync(f))}  ${basename(f)}\n`;
    });
    writeFileSync(join(tmp, 'sha256'), lines.join(''));
    if (existsSync(at)) rmSync(tmp, { recursive: true, force: true });
    else renameSync(tmp, at);
  } catch {
    rmSync(tmp, { recursive: true, force: true });
  }
}
