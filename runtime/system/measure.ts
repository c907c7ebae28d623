/**
 * A rough memory-bandwidth probe for this machine's CPU, the source of the
 * `memBandwidthGBs` figure in systems/this-machine.json until calibration
 * refits it. Two STREAM-like kernels over Float64Arrays much larger than the
 * caches, best of several repetitions, optionally on several worker threads at
 * once (each with its own arrays, started together):
 *  - sum:  s += a[i] with four accumulators; counts 8 bytes read per element.
 *  - copy: dst.set(src) (a memcpy); counts 16 bytes per element (read + write,
 *          the STREAM convention, which ignores the write-allocate read).
 *
 * Run: npx tsc -p tsconfig.json; node dist/runtime/system/measure.js [--mb 200] [--threads N] [--reps 5]
 */

import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

export interface BandwidthResult {
  threads: number;
  /** Size of each thread's source array, MB (10^6 bytes). */
  mbPerThread: number;
  reps: number;
  /** Best aggregate read bandwidth of the sum kernel, GB/s (10^9 bytes/s). */
  sumGBs: number;
  /** Best aggregate bandwidth of the copy kernel, GB/s, read + write bytes. */
  copyGBs: number;
}

interface RepTimes {
  sumMs: number[];
  copyMs: number[];
}

function sum4(a: Float64Array): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const n = a.length - (a.length % 4);
  for (let i = 0; i < n; i += 4) {
    s0 += a[i]!;
    s1 += a[i + 1]!;
    s2 += a[i + 2]!;
    s3 += a[i + 3]!;
  }
  for (let i = n; i < a.length; i++) s0 += a[i]!;
  return s0 + s1 + s2 + s3;
}

/** Times each kernel `reps` times on fresh arrays of `mb` MB; `barrier` synchronises threads before each timed run. */
function timeKernels(mb: number, reps: number, barrier: (step: number) => void): RepTimes & { checksum: number } {
  const n = Math.max(1, Math.floor((mb * 1e6) / 8));
  const src = new Float64Array(n);
  const dst = new Float64Array(n);
  for (let i = 0; i < n; i++) src[i] = i & 1023; // touch every page before timing
  dst.fill(1);
  const out: RepTimes & { checksum: number } = { sumMs: [], copyMs: [], checksum: 0 };
  let step = 0;
  for (let r = 0; r < reps; r++) {
    barrier(step++);
    let t = performance.now();
    out.checksum += sum4(src);
    out.sumMs.push(performance.now() - t);
    barrier(step++);
    t = performance.now();
    dst.set(src);
    out.copyMs.push(performance.now() - t);
    out.checksum += dst[n - 1]!;
  }
  return out;
}

function summarise(threads: number, mb: number, reps: number, perThread: RepTimes[]): BandwidthResult {
  const best = (pick: (t: RepTimes) => number[], bytesPerThread: number): number => {
    let bestGBs = 0;
    for (let r = 0; r < reps; r++) {
      const slowest = Math.max(...perThread.map((t) => pick(t)[r]!));
      bestGBs = Math.max(bestGBs, (threads * bytesPerThread) / (slowest / 1e3) / 1e9);
    }
    return bestGBs;
  };
  const bytes = Math.floor((mb * 1e6) / 8) * 8;
  return {
    threads,
    mbPerThread: mb,
    reps,
    sumGBs: best((t) => t.sumMs, bytes),
    copyGBs: best((t) => t.copyMs, 2 * bytes),
  };
}

/** Measures on the calling thread only. */
export function measureMemoryBandwidth(opts: { mb?: number; reps?: number } = {}): BandwidthResult {
  const mb = opts.mb ?? 200;
  const reps = opts.reps ?? 5;
  const t = timeKernels(mb, reps, () => {});
  return summarise(1, mb, reps, [t]);
}

/**
 * Measures with `threads` worker threads at once, each on its own `mb / threads`
 * MB arrays. Needs the compiled module (a worker runs this file), so it is for
 * the command line and calibration scripts, not for tests run from source.
 */
export async function measureMemoryBandwidthThreads(
  opts: { mb?: number; reps?: number; threads?: number } = {},
): Promise<BandwidthResult> {
  const threads = opts.threads ?? availableParallelism();
  const mb = (opts.mb ?? 200) / threads;
  const reps = opts.reps ?? 5;
  const shared = new Int32Array(new SharedArrayBuffer(4));
  const results = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<RepTimes>((resolve, reject) => {
          const w = new Worker(fileURLToPath(import.meta.url), {
            workerData: { membw: true, mb, reps, threads, shared },
          });
          w.once('message', (m: RepTimes) => resolve(m));
          w.once('error', reject);
        }),
    ),
  );
  return summarise(threads, mb, reps, results);
}

function workerMain(): void {
  const { mb, reps, threads, shared } = workerData as { mb: number; reps: number; threads: number; shared: Int32Array };
  const barrier = (step: number): void => {
    Atomics.add(shared, 0, 1);
    const target = threads * (step + 1);
    for (;;) {
      const v = Atomics.load(shared, 0);
      if (v >= target) break;
      Atomics.wait(shared, 0, v, 1);
    }
  };
  const t = timeKernels(mb, reps, barrier);
  parentPort!.postMessage({ sumMs: t.sumMs, copyMs: t.copyMs });
}

async function cliMain(argv: string[]): Promise<void> {
  const arg = (name: string, dflt: number): number => {
    const i = argv.indexOf(name);
    const v = i >= 0 ? Number(argv[i + 1]) : dflt;
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: expected a positive number`);
    return v;
  };
  const mb = arg('--mb', 200);
  const reps = arg('--reps', 5);
  const threads = arg('--threads', availableParallelism());
  const one = measureMemoryBandwidth({ mb, reps });
  const all = await measureMemoryBandwidthThreads({ mb, reps, threads });
  const row = (r: BandwidthResult): string =>
    `threads ${r.threads}  ${r.mbPerThread.toFixed(0)} MB/thread  sum ${r.sumGBs.toFixed(1)} GB/s  copy ${r.copyGBs.toFixed(1)} GB/s (best of ${r.reps})`;
  console.log(row(one));
  console.log(row(all));
}

if (!isMainThread && (workerData as { membw?: boolean } | null)?.membw === true) workerMain();
else if (isMainThread && process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  cliMain(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(2);
  });
}
