/**
 * On-disk cache of compiled wasm kernels for `dype run`: emitting (loading
 * binaryen, about a second, and its optimiser) is skipped when the same
 * kernel was compiled before with the same options.
 *
 * - Key: sha256 of the source text, the kernel name, WASM_EMITTER_VERSION,
 *   the emit options, and the kernel's loop IR and manifest (so a change of
 *   the compiler before the emitter misses too, whatever the source).
 * - Where: `$DYPE_CACHE_DIR`, else `$XDG_CACHE_HOME/dype`, else
 *   `~/.cache/dype`; entries under `wasm/`, one file `<key>.json` each
 *   (manifest, base64 binary and its sha256).
 * - An entry that cannot be read, parsed, or whose checksum, key, manifest or
 *   binary does not check out is treated as absent (and rewritten); a cache
 *   that cannot be written is skipped. Writes go to a temporary file in the
 *   same folder and are renamed into place, so readers never see half an entry.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Kernel } from '../../ir/module.js';
import type { WasmManifest } from '../../runtime/wasm/manifest.js';
import { makeDirs } from '../../runtime/io/files.js';
import { emitWasm, wasmManifest, WASM_EMITTER_VERSION, type EmitOptions, type EmittedWasm } from './emit.js';

const FORMAT = 'dype-wasm-cache';

/** The cache folder for an environment (DYPE_CACHE_DIR, XDG_CACHE_HOME, home). */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DYPE_CACHE_DIR) return env.DYPE_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'dype');
  return join(homedir(), '.cache', 'dype');
}

export function cacheKey(source: string, k: Kernel, opts: Pick<EmitOptions, 'shared' | 'simd'>): string {
  const shared = opts.shared ?? true;
  const h = createHash('sha256');
  h.update(
    JSON.stringify({
      emitter: WASM_EMITTER_VERSION,
      kernel: k.name,
      options: { shared, simd: opts.simd ?? true },
      source,
      loops: k.loops,
      manifest: wasmManifest(k, [], shared),
    }),
  );
  return h.digest('hex');
}

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

interface Entry {
  format: string;
  key: string;
  manifest: WasmManifest;
  binary: string;
  sha256: string;
}

/** The cached compile of `key`, or undefined when absent or not sound. */
export function readCached(dir: string, key: string): { binary: Uint8Array; manifest: WasmManifest } | undefined {
  try {
    const e = JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')) as Partial<Entry>;
    if (e.format !== FORMAT || e.key !== key || typeof e.binary !== 'string' || typeof e.sha256 !== 'string')
      return undefined;
    const m = e.manifest;
    if (!m || m.format !== 'dype-wasm-manifest' || m.version !== 1 || !Array.isArray(m.ops) || !Array.isArray(m.params))
      return undefined;
    const binary = new Uint8Array(Buffer.from(e.binary, 'base64'));
    if (sha(binary) !== e.sha256 || !WebAssembly.validate(binary)) return undefined;
    return { binary, manifest: m };
  } catch {
    return undefined;
  }
}

/** Stores an entry atomically; false when the cache folder cannot be written (the run goes on without it). */
export function writeCached(dir: string, key: string, c: { binary: Uint8Array; manifest: WasmManifest }): boolean {
  const tmp = join(dir, `.${key}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    makeDirs(dir); // not Node's recursive mkdir, which never returns under /proc
    const e: Entry = {
      format: FORMAT,
      key,
      manifest: c.manifest,
      binary: Buffer.from(c.binary).toString('base64'),
      sha256: sha(c.binary),
    };
    writeFileSync(tmp, JSON.stringify(e));
    renameSync(tmp, join(dir, `${key}.json`));
    return true;
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // The folder itself is unusable: nothing was written.
    }
    return false;
  }
}

export interface CachedCompile extends EmittedWasm {
  cached: boolean;
  key: string;
}

/**
 * Emits k (after lower-kernels) through the cache in `root` (cacheRoot() by
 * default; null: no cache). `source` is the program text k was compiled from.
 */
export async function emitWasmCached(
  source: string,
  k: Kernel,
  opts: Pick<EmitOptions, 'shared' | 'simd'> = {},
  root: string | null = cacheRoot(),
): Promise<CachedCompile> {
  const key = cacheKey(source, k, opts);
  const dir = root === null ? undefined : join(root, 'wasm');
  const hit = dir ? readCached(dir, key) : undefined;
  if (hit) return { ...hit, cached: true, key };
  const out = await emitWasm(k, opts);
  if (dir) writeCached(dir, key, out);
  return { ...out, cached: false, key };
}
