/**
 * `dype build`'s cache (cli/build-cache.ts) through the built CLI, on a
 * project whose Makefile copies its one source to the library and counts
 * its runs: a rebuild of the same sources comes from the cache (make does
 * not run, the bytes are the same), a changed source or `--no-cache` runs
 * make, and a cache entry that fails its checksum is rebuilt.
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_ENV, NOT_IN_LIBRARY } from '../../cli/build-cache.js';
import { cleanup, freshDir, REPO_ROOT, runCli } from '../helpers/cli.js';

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

/** With `vars` set in this process's environment (runCli passes it on) for the call. */
function withEnv<T>(vars: Record<string, string>, f: () => T): T {
  const old = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return f();
  } finally {
    for (const [k, v] of Object.entries(old))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

describe('dype build: the HLS library, the environment, and a build that fails', () => {
  const proj = join(root, 'two');
  const hlsLib = join(proj, 'hls', 'build', 'lib', 'libq_fpga_csim.so');
  const cudaLib = join(proj, 'cuda', 'libq_cuda_emu.so');
  beforeAll(() => {
    mkdirSync(join(proj, 'cuda'), { recursive: true });
    mkdirSync(join(proj, 'hls'), { recursive: true });
    writeFileSync(
      join(proj, 'project.json'),
      JSON.stringify({ format: 'dype-project', version: 1, program: 'q', programHash: '0', kernels: [] }),
    );
    writeFileSync(join(proj, 'cuda', 'Makefile'), 'libq_cuda_emu.so: q.cu\n\tcp q.cu $@\n');
    writeFileSync(join(proj, 'cuda', 'q.cu'), 'cuda\n');
    // As the generated HLS Makefile: outputs under $(BUILD), which the environment may set (BUILD ?= build).
    writeFileSync(
      join(proj, 'hls', 'Makefile'),
      'BUILD ?= build\ncsim-lib: k.cpp\n\ttest "$$FAIL" != 1\n\tmkdir -p $(BUILD)/lib && cp k.cpp $(BUILD)/lib/libq_fpga_csim.so\n',
    );
    writeFileSync(join(proj, 'hls', 'k.cpp'), 'fpga\n');
  });
  const clean = (): void => {
    rmSync(cudaLib, { force: true });
    rmSync(join(proj, 'hls', 'build'), { recursive: true, force: true });
  };

  it('copies the HLS library from the cache into a project that has no build folder yet', () => {
    clean();
    const first = runCli(['build', proj, '--emulate', '--json']);
    expect(first.status, first.stderr).toBe(0);
    clean();
    const again = runCli(['build', proj, '--emulate', '--json']);
    expect(again.status, again.stderr).toBe(0);
    const built = (JSON.parse(again.stdout) as { built: { backend: string; cached: boolean }[] }).built;
    expect(built.map((b) => [b.backend, b.cached])).toEqual([
      ['cuda-emu', true],
      ['fpga-csim', true],
    ]);
    expect(readFileSync(hlsLib, 'utf8')).toBe('fpga\n');
  });

  it('puts the library where the runtime looks whatever BUILD the environment holds', () => {
    clean();
    const r = withEnv({ BUILD: 'elsewhere' }, () => runCli(['build', proj, '--emulate', '--no-cache']));
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(hlsLib, 'utf8')).toBe('fpga\n');
  });

  it('keys the cache on ARCHS, which the CUDA Makefile reads', () => {
    clean();
    const a = withEnv({ ARCHS: '-gencode arch=compute_90,code=sm_90' }, () =>
      runCli(['build', proj, '--emulate', '--json']),
    );
    expect(a.status, a.stderr).toBe(0);
    expect((JSON.parse(a.stdout) as { built: { cached: boolean }[] }).built[0]!.cached).toBe(false);
  });

  it('a build that fails is DY3052 and takes back every file it added, the libraries built before it too', () => {
    clean();
    const r = withEnv({ FAIL: '1' }, () => runCli(['build', proj, '--emulate', '--no-cache']));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/error DY3052: building \S+libq_fpga_csim\.so \(fpga-csim\) failed; make's last lines:/);
    expect(r.stderr).toMatch(/nothing was built/);
    expect(existsSync(cudaLib)).toBe(false);
    expect(existsSync(join(proj, 'hls', 'build'))).toBe(false);
  });

  it('a compiler that does not run is DY3040 before anything is built', () => {
    clean();
    const r = withEnv({ CXX: 'false' }, () => runCli(['build', proj, '--emulate', '--no-cache']));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/error DY3040: the cuda-emu library needs a C\+\+ compiler, and 'false --version' fails/);
    expect(existsSync(cudaLib)).toBe(false);
  });

  it('refuses a project.json whose names are not what dype compile writes, or whose target lost its Makefile', () => {
    const odd = join(root, 'odd');
    mkdirSync(join(odd, 'cuda'), { recursive: true });
    const describe = (o: object): void =>
      writeFileSync(
        join(odd, 'project.json'),
        JSON.stringify({ format: 'dype-project', version: 1, programHash: '0', kernels: [], ...o }),
      );
    describe({ program: '../x', targets: ['cuda'] });
    writeFileSync(join(odd, 'cuda', 'Makefile'), 'all:\n');
    const named = runCli(['build', odd, '--emulate']);
    expect(named.status).toBe(1);
    expect(named.stderr).toMatch(/project\.json: error DY3044: "\.\.\/x" is not a program or kernel name/);
    describe({ program: 'x', targets: ['wasm', 'cuda'] });
    rmSync(join(odd, 'cuda', 'Makefile'));
    const gone = runCli(['build', odd, '--emulate']);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(
      /Makefile: error DY3044: the project was compiled with the cuda target, but its Makefile is missing/,
    );
  });

  it('names every variable the generated Makefiles read: in the cache key, or not part of a library', () => {
    const known = new Set([...BUILD_ENV, ...Object.keys(NOT_IN_LIBRARY)]);
    const unclassified: string[] = [];
    for (const file of ['hls-templates/project/Makefile.hbs', 'codegen/cuda/templates/Makefile.hbs']) {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8').replace(/\{\{[^}]*\}\}/g, 'X');
      // Set with = or := the Makefile's own value wins over the environment's; ?= and += take the environment's.
      const own = new Set([...text.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)\s*:{0,2}=/gm)].map((m) => m[1]!));
      // A foreach's loop variable is the loop's own.
      for (const m of text.matchAll(/\$\(foreach ([A-Za-z_][A-Za-z0-9_]*),/g)) own.add(m[1]!);
      const read = [
        ...[...text.matchAll(/\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]/g)].map((m) => m[1]!),
        ...[...text.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)\s*[?+]=/gm)].map((m) => m[1]!),
      ];
      for (const v of read) if (!own.has(v) && !known.has(v)) unclassified.push(`${file}: ${v}`);
    }
    expect([...new Set(unclassified)]).toEqual([]);
  });
});
