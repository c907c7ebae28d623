/**
 * `dype run` and the native CPU backend: `--backend native` builds the C
 * library once (the second run, under auto, finds it in the compile cache;
 * test/native/cpu.test.ts compares the results with wasm's); with no C compiler (CC naming a program that does
 * not exist) `auto` runs on wasm and says so (stderr note, `backend_note` in
 * --json) and `--backend native` is error DY3040. Each op runs on the
 * threads the CPU model of the system picks (`threads_per_op`).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveCompiler } from '../helpers/cc.js';
import { cleanup, example, freshDir, runCli } from '../helpers/cli.js';

const KARATE = fileURLToPath(new URL('../../../shared/data/matrices/karate.mtx', import.meta.url));
const HAVE_DATA = existsSync(KARATE);

type RunJson = {
  backend: string;
  threads: number;
  threads_per_op: Record<string, number>;
  threads_from: string;
  backend_asked?: string;
  backend_note?: string;
  compile: { cached: boolean };
  summary: unknown;
};

let work: string;
const saved = { cache: process.env.DYPE_CACHE_DIR, cc: process.env.CC };
beforeAll(() => {
  work = freshDir('dype-native-cli-');
  process.env.DYPE_CACHE_DIR = join(work, 'cache');
});
afterAll(() => {
  for (const [k, v] of [
    ['DYPE_CACHE_DIR', saved.cache],
    ['CC', saved.cc],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  cleanup(work);
});

const run = (...extra: string[]): ReturnType<typeof runCli> =>
  runCli(['run', example('spmv.dy'), '--input', `A=${KARATE}`, '--input', 'x=@ones', '--threads', '1', ...extra], {
    timeoutMs: 60_000,
  });

describe.skipIf(!HAVE_DATA)('dype run --backend native', () => {
  it.skipIf(!haveCompiler())('builds once, then the compile cache serves it', () => {
    const first = run('--backend', 'native', '--json');
    expect(first.status, first.stderr).toBe(0);
    const a = JSON.parse(first.stdout) as RunJson;
    expect(a.backend).toBe('native');
    expect(a.compile.cached).toBe(false);
    const second = JSON.parse(run('--json').stdout) as RunJson; // auto takes native
    expect(second.backend).toBe('native');
    expect(second.backend_asked).toBe('auto');
    expect(second.compile.cached).toBe(true);
    expect(second.summary).toEqual(a.summary);
  });

  it('without a C compiler: auto runs on wasm with a note, --backend native is error DY3040', () => {
    process.env.CC = join(work, 'no-such-cc');
    try {
      const r = run('--json');
      expect(r.status, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as RunJson;
      expect(j.backend).toBe('wasm');
      expect(j.backend_asked).toBe('auto');
      expect(j.backend_note).toMatch(/native backend is not available \(no C compiler: .*no-such-cc/);
      expect(r.stderr).toMatch(/^note: the native backend is not available/);
      const n = run('--backend', 'native', '--out', `y=${join(work, 'y.mtx')}`);
      expect(n.status).toBe(1);
      expect(n.stderr).toMatch(/--backend native: error DY3040: the native backend is not available: no C compiler/);
      expect(existsSync(join(work, 'y.mtx'))).toBe(false);
    } finally {
      if (saved.cc === undefined) delete process.env.CC;
      else process.env.CC = saved.cc;
    }
  });

  it.skipIf(availableParallelism() < 2)(
    "runs each op on the threads this machine's CPU model picks: karate's SpMV on one, bcsstk33's on two",
    () => {
      const pick = (matrix: string, ...extra: string[]): { j: RunJson; text: string } => {
        const args = ['run', example('spmv.dy'), '--input', `A=${matrix}`, '--input', 'x=@ones', '--threads', '2'];
        const r = runCli([...args, '--backend', 'wasm', '--json', ...extra], { timeoutMs: 60_000 });
        expect(r.status, r.stderr).toBe(0);
        const t = runCli([...args, '--backend', 'wasm', ...extra], { timeoutMs: 60_000 });
        return { j: JSON.parse(r.stdout) as RunJson, text: t.stdout };
      };
      // this-machine's wasm fit (systems/this-machine.json) keeps small SpMVs on one thread.
      const small = pick(KARATE);
      expect(small.j.threads).toBe(2);
      expect(small.j.threads_per_op).toEqual({ op0: 1 });
      expect(small.j.threads_from).toBe("the model of this-machine's cpu, the wasm backend's fit");
      expect(small.text).toContain(
        "threads per op: op0 1 (picked by the model of this-machine's cpu, the wasm backend's fit)",
      );
      const big = pick(join(KARATE, '..', 'bcsstk33.mtx'));
      expect(big.j.threads_per_op).toEqual({ op0: 2 });
      // A CPU priced by the roofline (no fitted model, no dispatch cost) takes every thread, and it says so;
      // 1138_bus (1138 rows, 4054 entries) stays on one thread with this-machine's model.
      const bus = join(KARATE, '..', '1138_bus.mtx');
      expect(pick(bus).j.threads_per_op).toEqual({ op0: 1 });
      const roofline = pick(bus, '--system', 'paper-1g1f');
      expect(roofline.j.threads_per_op).toEqual({ op0: 2 });
      expect(roofline.j.threads_from).toBe("the model of paper-1g1f's cpu, the roofline (no fitted model)");
      // Karate's 34 rows run on one thread whatever the model (the executors split 256 rows or more).
      expect(pick(KARATE, '--system', 'paper-1g1f').j.threads_per_op).toEqual({ op0: 1 });
    },
  );

  // Last: the native build it makes would be found in the cache by the first test.
  it.skipIf(availableParallelism() < 2)(
    'at 2 threads --json says where the workers ran over the timed runs: ops split, chunks run by them, joins on the caller',
    () => {
      const big = KARATE.replace('karate.mtx', 'bcsstk33.mtx');
      for (const backend of haveCompiler() ? ['native', 'wasm'] : ['wasm']) {
        const r = runCli(
          ['run', example('spmv.dy'), '--input', `A=${big}`, '--input', 'x=@ones', '--threads', '2'].concat([
            '--backend',
            backend,
            '--repeat',
            '3',
            '--json',
          ]),
          { timeoutMs: 60_000 },
        );
        expect(r.status, r.stderr).toBe(0);
        const j = JSON.parse(r.stdout) as RunJson & {
          workers: {
            split_ops: number;
            joins: number;
            joins_on_caller: number | null;
            chunks: number;
            worker_chunks: number;
          };
        };
        // 591,904 entries: the model puts the SpMV on both threads, each timed run splits it once.
        expect(Object.values(j.threads_per_op)).toEqual([2]);
        expect(j.workers.split_ops, backend).toBe(3);
        expect(j.workers.chunks).toBeGreaterThanOrEqual(6);
        expect(j.workers.worker_chunks).toBeLessThanOrEqual(j.workers.chunks);
        // A worker may join the warm-up run's op late, inside the timed runs' counts.
        expect(j.workers.joins).toBeLessThanOrEqual(4);
        if (backend === 'wasm') expect(j.workers.joins_on_caller).toBeNull();
        else if (process.platform === 'linux') expect(j.workers.joins_on_caller).not.toBeNull();
        const text = runCli(
          [
            'run',
            example('spmv.dy'),
            '--input',
            `A=${big}`,
            '--input',
            'x=@ones',
            '--threads',
            '2',
            '--backend',
            backend,
          ],
          { timeoutMs: 60_000 },
        );
        expect(text.stdout).toMatch(/^ {2}workers: 1 op run split over them, \d+% of the chunks run by them, /m);
      }
    },
  );
});
