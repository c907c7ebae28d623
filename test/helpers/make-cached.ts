/**
 * `make TARGET` in a generated project through `dype build`'s
 * content-addressed cache (cli/build-cache.ts): the suite builds the same
 * libraries and hosts of the examples in several files (the CUDA emulation
 * libraries in cuda/abi and native/partitions, the C-simulation hosts in
 * hls/csim, hls/xrt and hls/tiles, the csim libraries in hls/abi and
 * `dype build`), and g++ takes 5-25 s for each. Within one run (the cache
 * is the run's own folder, test/global-setup.ts) each is compiled once:
 * the same target over the same sources, compilers and variables is copied
 * from the cache, and a worker that finds another building it waits for
 * that build (a lock folder beside the entry) instead of compiling it too.
 * Without variables the key is `dype build`'s own, so the libraries it
 * built are found here and the other way round.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildKey, fromCache, toCache } from '../../cli/build-cache.js';
import { cacheRoot } from '../../codegen/wasm/cache.js';
import { run } from '../cuda/nvcc.js';

export interface MakeResult {
  cmd: string;
  status: number;
  output: string;
  /** The outputs came from the cache; make did not run. */
  cached: boolean;
}

export interface MakeOptions {
  /** Variables on make's command line (`NAME=VALUE`), part of the key. */
  vars?: Readonly<Record<string, string>>;
  timeoutMs?: number;
}

/** A build that holds the lock longer than this is taken to have died; the waiter builds itself. */
const STALE_MS = 600_000;

function keyOf(dir: string, target: string, vars: Readonly<Record<string, string>>): string {
  // Command-line variables override the environment's, so they shape the key as the environment does.
  const base = buildKey(dir, target, { ...process.env, ...vars });
  const extra = Object.entries(vars).sort(([a], [b]) => (a < b ? -1 : 1));
  return extra.length === 0
    ? base
    : createHash('sha256')
        .update(JSON.stringify([base, extra]))
        .digest('hex');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Takes the lock of `key`; false while another process holds it (and it is not stale). */
function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock, { recursive: false });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_MS) rmSync(lock, { recursive: true, force: true });
    } catch {
      // Released between the two calls.
    }
    return false;
  }
}

/**
 * Builds `target` in `dir` (`make -s -C dir target VARS`), or copies `outputs` (paths relative to `dir`, what the
 * target writes) from the cache. A failed build is reported as make reported it and cached nowhere.
 */
export async function makeCached(
  dir: string,
  target: string,
  outputs: readonly string[],
  opts: MakeOptions = {},
): Promise<MakeResult> {
  const vars = opts.vars ?? {};
  const timeoutMs = opts.timeoutMs ?? 300_000;
  const key = keyOf(dir, target, vars);
  const files = outputs.map((o) => join(dir, o));
  const args = ['-s', '-C', dir, target, ...Object.entries(vars).map(([k, v]) => `${k}=${v}`)];
  const cmd = `make ${args.join(' ')}`;
  mkdirSync(join(cacheRoot(), 'builds'), { recursive: true });
  const lock = join(cacheRoot(), 'builds', `${key}.lock`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (fromCache(key, files)) return { cmd, status: 0, output: '', cached: true };
    if (tryLock(lock)) break;
    if (Date.now() > deadline) return { cmd, status: 1, output: `waited ${timeoutMs} ms for ${lock}`, cached: false };
    await sleep(250);
  }
  try {
    // Another worker may have finished between our look and our lock.
    if (fromCache(key, files)) return { cmd, status: 0, output: '', cached: true };
    const r = await run('make', args, dir, timeoutMs);
    if (r.status === 0) toCache(key, files);
    return { ...r, cached: false };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
