/**
 * The compile cache of `dype run` (codegen/wasm/cache.ts). Through the built
 * CLI with DYPE_CACHE_DIR set to a fresh folder: the second run of the same
 * program hits (`--json` field compile.cached) with the same results,
 * `--no-cache` neither reads nor writes. In process (emitWasmCached, what the
 * CLI calls): an edited source misses, every kind of
 * damaged entry (garbage, truncated, empty, tampered binary, wrong key) reads
 * as absent and is rewritten, and an unwritable cache folder only costs the
 * cache. Needs `npx tsc -p tsconfig.json` first (dist/).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheKey, cacheRoot, emitWasmCached, readCached } from '../../codegen/wasm/cache.js';
import { example, runCli, type CliResult } from '../helpers/cli.js';
import { loopKernel } from './compare.js';

const KARATE = join(example('..'), '..', 'shared', 'data', 'matrices', 'karate.mtx');
const HAVE_DATA = existsSync(KARATE);

let work: string;
let saved: string | undefined;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'dype-cache-test-'));
  saved = process.env.DYPE_CACHE_DIR;
});
afterAll(() => {
  if (saved === undefined) delete process.env.DYPE_CACHE_DIR;
  else process.env.DYPE_CACHE_DIR = saved;
  rmSync(work, { recursive: true, force: true });
});

type RunJson = { compile: { cached: boolean; ms: number }; summary: unknown };

/** `dype run FILE --json` with the cache in `cache`. */
function run(file: string, cache: string, ...extra: string[]): { r: CliResult; json: RunJson } {
  process.env.DYPE_CACHE_DIR = cache;
  const r = runCli(
    [
      'run',
      file,
      '--input',
      `A=${KARATE}`,
      '--input',
      'x=@ones',
      '--threads',
      '1',
      '--backend',
      'wasm',
      '--json',
      ...extra,
    ],
    { timeoutMs: 60_000 },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return { r, json: JSON.parse(r.stdout) as RunJson };
}

const entries = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.json'));

describe.skipIf(!HAVE_DATA)('dype run: compile cache', () => {
  it('the second run hits with the same results; --no-cache neither reads nor writes', () => {
    const cache = join(work, 'cli');
    const first = run(example('spmv.dy'), cache);
    expect(first.json.compile.cached).toBe(false);
    expect(first.json.compile.ms).toBeGreaterThan(0);
    const second = run(example('spmv.dy'), cache);
    expect(second.json.compile.cached).toBe(true);
    expect(second.json.summary).toEqual(first.json.summary);
    const names = entries(join(cache, 'wasm'));
    expect(names).toHaveLength(1);
    // No temporary files left behind.
    expect(readdirSync(join(cache, 'wasm'))).toEqual(names);
    // With the entry present, --no-cache compiles anyway (no read) and leaves the entry untouched (no write).
    const entry = join(cache, 'wasm', names[0]!);
    const before = statSync(entry).mtimeMs;
    const off = run(example('spmv.dy'), cache, '--no-cache');
    expect(off.json.compile.cached).toBe(false);
    expect(off.json.summary).toEqual(first.json.summary);
    expect(statSync(entry).mtimeMs).toBe(before);
    expect(readdirSync(join(cache, 'wasm'))).toEqual(names);
  });
  it('text output says where the compile came from', () => {
    process.env.DYPE_CACHE_DIR = join(work, 'cli');
    const r = runCli([
      'run',
      example('spmv.dy'),
      '--input',
      `A=${KARATE}`,
      '--input',
      'x=@ones',
      '--threads',
      '1',
      '--backend',
      'wasm',
    ]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/compile: [\d.]+ ms measured \(from the compile cache\)/);
  });
});

describe('compile cache: keys and damaged entries (in process)', () => {
  const src =
    'kernel k(A: csr<f32>[m, n], B: dense<f32>[n, h]) -> (Y: dense<f32>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }';
  it('keys differ by source text, kernel options and SIMD; the root follows the environment', () => {
    const k = loopKernel(src);
    const base = cacheKey(src, k, {});
    expect(cacheKey(src, k, {})).toBe(base);
    expect(cacheKey(`${src}\n`, k, {})).not.toBe(base);
    expect(cacheKey(src, k, { simd: false })).not.toBe(base);
    expect(cacheKey(src, k, { shared: false })).not.toBe(base);
    expect(cacheRoot({ DYPE_CACHE_DIR: '/x/y' })).toBe('/x/y');
    expect(cacheRoot({ XDG_CACHE_HOME: '/c' })).toBe(join('/c', 'dype'));
    expect(cacheRoot({ HOME: '/h' })).toMatch(/\.cache[/\\]dype$/);
  });
  it('an edited source misses; damaged entries read as absent and are rewritten; an unwritable folder costs only the cache', async () => {
    const root = join(work, 'proc');
    const k = loopKernel(src);
    const a = await emitWasmCached(src, k, {}, root);
    expect(a.cached).toBe(false);
    const b = await emitWasmCached(src, k, {}, root);
    expect(b.cached).toBe(true);
    expect(b.binary).toEqual(a.binary);
    expect(b.manifest).toEqual(a.manifest);
    expect((await emitWasmCached(`${src} # edited`, k, {}, root)).cached).toBe(false);
    const dir = join(root, 'wasm');
    const path = join(dir, `${a.key}.json`);
    const good = readFileSync(path, 'utf8');
    const entry = JSON.parse(good) as { binary: string; key: string };
    const flipped = Buffer.from(entry.binary, 'base64');
    flipped[flipped.length - 1] ^= 0xff;
    const damaged = [
      'not json {',
      good.slice(0, good.length >> 1),
      '',
      '{}',
      JSON.stringify({ ...entry, binary: flipped.toString('base64') }),
      JSON.stringify({ ...entry, key: 'other' }),
    ];
    for (const bad of damaged) {
      writeFileSync(path, bad);
      expect(readCached(dir, a.key)).toBeUndefined();
      const again = await emitWasmCached(src, k, {}, root);
      expect(again.cached).toBe(false);
      expect(readFileSync(path, 'utf8')).toBe(good);
    }
    const file = join(work, 'a-file');
    writeFileSync(file, 'x');
    const c = await emitWasmCached(src, k, {}, file);
    expect(c.cached).toBe(false);
    expect(c.binary).toEqual(a.binary);
  });
});
