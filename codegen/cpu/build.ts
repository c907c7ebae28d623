/**
 * Builds a native CPU library with the system C compiler
 * (`$CC`, else `cc`; `-O3 -march=native -pthread -ffp-contract=off`, the
 * last so that f32/f64 arithmetic rounds as the wasm backend's does) and
 * caches it: key = sha256 of the C source, the compiler, its `--version`
 * and the flags; entries are folders `<root>/native/<key>/` holding
 * `lib.so` and the source `lib.c` it was built from (root as the wasm
 * compile cache's, codegen/wasm/cache.ts). The library is compiled in a
 * temporary folder and renamed into place, so a reader never sees half of
 * one; an unwritable root builds in a temporary folder instead.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { makeDirs } from '../../runtime/io/files.js';
import { shipped } from '../cuda/templates.js';
import { CPU_EMITTER_VERSION } from './library.js';

/**
 * `-Wl,-z,nodelete`: koffi unloads a library once nothing refers to it, and
 * unloading it while its worker threads wait in its code crashes the
 * process when they wake; a library marked nodelete stays mapped until the
 * process ends.
 */
export const CPU_FLAGS = [
  '-O3',
  '-march=native',
  '-pthread',
  '-ffp-contract=off',
  '-fPIC',
  '-shared',
  '-Wl,-z,nodelete',
] as const;

/** Why there is no library: no compiler at all, or one that failed. */
export class CpuBuildError extends Error {
  constructor(
    readonly reason: 'no-compiler' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'CpuBuildError';
  }
}

export interface CpuLibraryBuild {
  path: string;
  cached: boolean;
  /** Time to find (or compile) the library. */
  ms: number;
  key: string;
  cc: string;
  /** Removes a library built outside the cache (after it is loaded); a no-op for cached ones. */
  cleanup(): void;
}

/** The C compiler asked for: $CC, else cc. */
export function cCompiler(env: NodeJS.ProcessEnv = process.env): string {
  return env.CC && env.CC.trim() !== '' ? env.CC.trim() : 'cc';
}

/**
 * $CC as make reads it: a command and the words after it (`CC="ccache gcc"`, `CC="cc -Wall"`), split at blanks, then
 * `extra`, the arguments of this call. A compiler path with a blank in it is not supported, as in make.
 */
export function ccCommand(cc: string, extra: readonly string[] = []): { file: string; args: string[] } {
  const [file, ...args] = cc.split(/\s+/).filter((w) => w !== '');
  return { file: file ?? cc, args: [...args, ...extra] };
}

const versions = new Map<string, string>();

/** The compiler's `--version` text; a CpuBuildError when it cannot be run. */
export function compilerVersion(cc: string): string {
  const have = versions.get(cc);
  if (have !== undefined) return have;
  const c = ccCommand(cc, ['--version']);
  const r = spawnSync(c.file, c.args, { encoding: 'utf8' });
  if (r.error || r.status !== 0)
    throw new CpuBuildError(
      'no-compiler',
      `no C compiler: '${cc}' ${r.error ? `cannot be run (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})` : `--version exited with ${r.status}`}`,
    );
  versions.set(cc, r.stdout);
  return r.stdout;
}

interface Pending {
  t0: number;
  key: string;
  cc: string;
  root: string | null;
  dir: string | undefined;
  work: string;
  args: string[];
}

type Ran = { error?: Error; status: number | null; stderr: string };

function done(
  p: Pick<Pending, 't0' | 'key' | 'cc'>,
  path: string,
  cached: boolean,
  cleanup: () => void,
): CpuLibraryBuild {
  return { path, cached, ms: performance.now() - p.t0, key: p.key, cc: p.cc, cleanup };
}

/** The cached library, or the folder and compiler arguments to build it in. */
function prepare(source: string, root: string | null, cc: string): CpuLibraryBuild | Pending {
  const t0 = performance.now();
  const version = compilerVersion(cc);
  const key = createHash('sha256')
    .update(JSON.stringify({ emitter: CPU_EMITTER_VERSION, cc, version, flags: CPU_FLAGS, source }))
    .digest('hex');
  const dir = root === null ? undefined : join(root, 'native', key);
  if (dir && existsSync(join(dir, 'lib.so'))) return done({ t0, key, cc }, join(dir, 'lib.so'), true, () => {});
  const work = mkdtempSync(join(tmpdir(), 'dype-native-'));
  writeFileSync(join(work, 'lib.c'), source);
  writeFileSync(join(work, 'dype_abi.h'), shipped('../native/dype_abi.h'));
  return { t0, key, cc, root, dir, work, args: [...CPU_FLAGS, '-o', join(work, 'lib.so'), join(work, 'lib.c'), '-lm'] };
}

/** The library after the compiler ran: moved into the cache where it can be. */
function finish(p: Pending, r: Ran): CpuLibraryBuild {
  const { cc, dir, root, work, key } = p;
  try {
    if (r.error) throw new CpuBuildError('no-compiler', `no C compiler: '${cc}' cannot be run (${r.error.message})`);
    if (r.status !== 0)
      throw new CpuBuildError(
        'failed',
        `'${cc} ${CPU_FLAGS.join(' ')}' failed on the generated library (exit ${r.status}): ${r.stderr.trim().split('\n').slice(0, 6).join(' | ')}`,
      );
    if (dir && root !== null) {
      try {
        makeDirs(join(root, 'native'));
        const tmp = join(root, 'native', `.${key}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
        renameSync(work, tmp);
        try {
          renameSync(tmp, dir);
        } catch {
          // Another process put the same entry in place first: use theirs.
          rmSync(tmp, { recursive: true, force: true });
        }
        if (existsSync(join(dir, 'lib.so'))) return done(p, join(dir, 'lib.so'), false, () => {});
      } catch {
        // The cache cannot be written: go on with the library where it was built.
      }
    }
    if (!existsSync(work)) throw new CpuBuildError('failed', 'the built library vanished before it was loaded');
    return done(p, join(work, 'lib.so'), false, () => rmSync(work, { recursive: true, force: true }));
  } catch (e) {
    if (existsSync(work)) rmSync(work, { recursive: true, force: true });
    throw e;
  }
}

/** Builds (or finds in the cache under `root`; null: no cache) the library of C source `source`. */
export function buildCpuLibrary(source: string, root: string | null, cc: string = cCompiler()): CpuLibraryBuild {
  const p = prepare(source, root, cc);
  if (!('args' in p)) return p;
  const c = ccCommand(cc, p.args);
  return finish(p, spawnSync(c.file, c.args, { encoding: 'utf8' }));
}

/** The same, with the compiler running while the event loop goes on (tests overlap it with other work). */
export async function buildCpuLibraryAsync(
  source: string,
  root: string | null,
  cc: string = cCompiler(),
): Promise<CpuLibraryBuild> {
  const p = prepare(source, root, cc);
  if (!('args' in p)) return p;
  const c = ccCommand(cc, p.args);
  const r = await new Promise<Ran>((resolve) =>
    execFile(c.file, c.args, { encoding: 'utf8' }, (err, _stdout, stderr) =>
      resolve(
        err && typeof err.code !== 'number'
          ? { error: err, status: null, stderr }
          : { status: err ? (err.code as number) : 0, stderr },
      ),
    ),
  );
  return finish(p, r);
}
