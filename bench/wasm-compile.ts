/**
 * Compile time of the wasm backend on gcn (every kernel of examples/gcn.dy),
 * each figure in a fresh node process so that "first" means first:
 *   - first compile: import binaryen, lower-kernels, emit (validate, optimise) every kernel;
 *   - a second compile in the same process (binaryen loaded);
 *   - a compile-cache hit (codegen/wasm/cache.ts) in a fresh process;
 *   - `dype check examples/gcn.dy` cold, and `dype run` of gcn on cora with
 *     --no-cache against a warm cache (whole command, wall clock).
 * Medians of RUNS processes; prints a table and saves bench/results/wasm-compile.json.
 *   npm run build && node dist/bench/wasm-compile.js [RUNS]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const RUNS = Number(process.argv[2] ?? 5);
const GCN = join(root, 'examples', 'gcn.dy');
const CORA = join(root, '..', 'shared', 'data', 'matrices', 'cora.cites');

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** In a child: compile gcn's kernels `times` times (through the cache in `cache` when given); prints ms per compile as JSON. */
async function child(times: number, cache: string | undefined): Promise<void> {
  const t0 = performance.now();
  const { compileSource } = await import('../frontend/compile.js');
  const { DEFAULT_PIPELINE, runPipeline } = await import('../passes/index.js');
  const { emitWasm } = await import('../codegen/wasm/emit.js');
  const { emitWasmCached } = await import('../codegen/wasm/cache.js');
  const source = readFileSync(GCN, 'utf8');
  const out: { ms: number; kernels: number; bytes: number; cached: boolean }[] = [];
  let start = t0;
  for (let t = 0; t < times; t++) {
    const m = runPipeline(compileSource(source, 'gcn.dy').module!, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] });
    let bytes = 0;
    let cached = true;
    for (const k of m.kernels) {
      const r = cache ? await emitWasmCached(source, k, {}, cache) : { ...(await emitWasm(k)), cached: false };
      bytes += r.binary.length;
      cached &&= r.cached;
    }
    const now = performance.now();
    out.push({ ms: now - start, kernels: m.kernels.length, bytes, cached });
    start = now;
  }
  process.stdout.write(JSON.stringify(out));
}

function spawnJson(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { ms: number; kernels: number; bytes: number; cached: boolean }[] {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { ms: number; kernels: number; bytes: number; cached: boolean }[];
}

function wall(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [join(root, 'dist', 'cli', 'main.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`dype ${args.join(' ')} failed: ${r.stderr}`);
  return ms;
}

async function main(): Promise<void> {
  const cache = mkdtempSync(join(tmpdir(), 'dype-compile-bench-'));
  try {
    const first: number[] = [];
    const second: number[] = [];
    const hit: number[] = [];
    let kernels = 0;
    let bytes = 0;
    for (let r = 0; r < RUNS; r++) {
      const [a, b] = spawnJson(['--child', '2']);
      first.push(a!.ms);
      second.push(b!.ms);
      kernels = a!.kernels;
      bytes = a!.bytes;
    }
    spawnJson(['--child', '1', cache]);
    for (let r = 0; r < RUNS; r++) {
      const [h] = spawnJson(['--child', '1', cache]);
      if (!h!.cached) throw new Error('expected a cache hit');
      hit.push(h!.ms);
    }
    const check = Array.from({ length: RUNS }, () => wall(['check', GCN]));
    const runArgs = [
      'run',
      GCN,
      '--input',
      `A=${CORA}`,
      '--input',
      'X=@random',
      '--input',
      'W1=@random',
      '--input',
      'W2=@random',
      '--param',
      'f=16',
      '--param',
      'h=16',
      '--param',
      'c=7',
      '--threads',
      '1',
    ];
    const runCold = Array.from({ length: RUNS }, () => wall([...runArgs, '--no-cache']));
    wall(runArgs, { DYPE_CACHE_DIR: cache });
    const runWarm = Array.from({ length: RUNS }, () => wall(runArgs, { DYPE_CACHE_DIR: cache }));
    const load = loadavg();
    const rows = [
      ['first compile of gcn (binaryen import + lower + emit, all kernels)', median(first)],
      ['second compile in the same process', median(second)],
      ['compile-cache hit, fresh process', median(hit)],
      ['dype check examples/gcn.dy (whole command, cold)', median(check)],
      ['dype run gcn on cora --no-cache (whole command)', median(runCold)],
      ['dype run gcn on cora, cache hit (whole command)', median(runWarm)],
    ] as const;
    console.log(
      `gcn: ${kernels} kernel(s), ${bytes} bytes of wasm; medians of ${RUNS}; load average ${load.map((x) => x.toFixed(2)).join(' ')}`,
    );
    for (const [what, ms] of rows) console.log(`${what.padEnd(70)} ${ms.toFixed(0).padStart(6)} ms`);
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(
      join(root, 'bench', 'results', 'wasm-compile.json'),
      JSON.stringify(
        { runs: RUNS, loadavg: load, kernels, bytes, rows: rows.map(([what, ms]) => ({ what, ms })) },
        null,
        2,
      ),
    );
    console.log('wrote bench/results/wasm-compile.json');
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(Number(process.argv[3]), process.argv[4]);
else await main();
