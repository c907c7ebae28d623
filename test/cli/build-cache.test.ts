/**
 * `dype build`'s cache (cli/build-cache.ts) through the built CLI, on a
 * project whose Makefile copies its one source to the library and counts
 * its runs: a rebuild of the same sources comes from the cache (make does
 * not run, the bytes are the same), a changed source or `--no-cache` runs
 * make, and a cache entry that fails its checksum is rebuilt.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, freshDir, runCli } from '../helpers/cli.js';

const root = freshDir('dype-build-cache-');
const dir = join(root, 'proj');
const cache = join(root, 'cache');
const lib = join(dir, 'cuda', 'libp_cuda_emu.so');
const runs = (): number =>
  readFileSync(join(dir, 'cuda', 'runs.log'), 'utf8')
    .split('\n')
    .filter(Boolean).length;
let saved: string | undefined;

beforeAll(() => {
  saved = process.env.DYPE_CACHE_DIR;
  process.env.DYPE_CACHE_DIR = cache;
  mkdirSync(join(dir, 'cuda'), { recursive: true });
  writeFileSync(
    join(dir, 'project.json'),
    JSON.stringify({ format: 'dype-project', version: 1, program: 'p', programHash: '0', kernels: [] }),
  );
  writeFileSync(join(dir, 'cuda', 'Makefile'), 'libp_cuda_emu.so: p.cu\n\techo run >> runs.log\n\tcp p.cu $@\n');
  writeFileSync(join(dir, 'cuda', 'p.cu'), 'one\n');
});
afterAll(() => {
  if (saved === undefined) delete process.env.DYPE_CACHE_DIR;
  else process.env.DYPE_CACHE_DIR = saved;
  cleanup(root);
});

function build(...extra: string[]): { cached: boolean; text: string } {
  rmSync(lib, { force: true });
  const r = runCli(['build', dir, '--emulate', '--json', ...extra]);
  expect(r.status, r.stderr).toBe(0);
  const j = JSON.parse(r.stdout) as { built: { cached: boolean; library: string }[] };
  expect(j.built.map((b) => b.library)).toEqual([lib]);
  return { cached: j.built[0]!.cached, text: readFileSync(lib, 'utf8') };
}

describe('dype build cache', () => {
  it('builds once, then copies the same sources’ library from the cache without running make', () => {
    expect(build()).toEqual({ cached: false, text: 'one\n' });
    expect(runs()).toBe(1);
    expect(build()).toEqual({ cached: true, text: 'one\n' });
    expect(runs()).toBe(1);
    rmSync(lib);
    const r = runCli(['build', dir, '--emulate']);
    expect(r.stdout).toMatch(/^built \S+libp_cuda_emu\.so: backend cuda-emu \(--emulate\), from the build cache/);
  });

  it('a changed source misses; --no-cache always runs make', () => {
    writeFileSync(join(dir, 'cuda', 'p.cu'), 'two\n');
    expect(build()).toEqual({ cached: false, text: 'two\n' });
    expect(runs()).toBe(2);
    expect(build('--no-cache')).toEqual({ cached: false, text: 'two\n' });
    expect(runs()).toBe(3);
  });

  it('an entry that fails its checksum is rebuilt, not copied', () => {
    const entries = readdirSync(join(cache, 'builds'));
    for (const e of entries) writeFileSync(join(cache, 'builds', e, 'libp_cuda_emu.so'), 'corrupt\n');
    expect(build()).toEqual({ cached: false, text: 'two\n' });
    expect(runs()).toBe(4);
  });
});
