/**
 * Worker threads for the wasm executor: T-1 workers instantiate the same
 * module on the same shared WebAssembly.Memory; the calling thread is the
 * T-th. An op whose body is one parallel loop over rows is cut into chunks
 * of contiguous rows balanced by stored entries (plus one per row, so empty
 * rows count), several per thread, and every thread claims the next chunk
 * from one shared counter until none is left: the caller starts at once, and
 * a worker that wakes late (after a park, a worker's wake-up takes tens of
 * microseconds and more) takes only what is still unclaimed, so an op on T
 * threads costs little more than on one where the others cannot help. Each
 * row is computed by exactly one thread with the same code and the same
 * in-row order, so results are bit-identical for any thread count or claim
 * order. A worker that has run out of chunks watches for the next op for
 * SPIN_US before it parks, and the caller skips the wake-up call (a futex
 * wake: 7-20 us of the caller's own time on the 2-vCPU development machine,
 * docs/PERFORMANCE.md *Threads per op*) while it does; since
 * the caller never waits for a chunk nobody has claimed, a spinning worker
 * that loses its core to other work delays nothing but its own chunks. The
 * watch ends early when another pool or the native CPU library begins an op
 * on several threads (noteCpuWork): the spin would hold a core that op needs.
 */
import { Worker } from 'node:worker_threads';
import type { WorkerPlacement } from './executor.js';

/** Chunks an op is cut into per thread: enough that a late worker still finds work and the last chunk is short. */
export const CHUNKS_PER_THREAD = 4;
/** No chunk of fewer rows than this (a claim and a call cost about a hundred nanoseconds). */
export const MIN_CHUNK_ROWS = 32;
/** At most this many chunks an op (the claim word keeps the index in 16 bits, the control block their cuts). */
export const MAX_CHUNKS = 256;
const MAX_ARGS = 60;

// The control block, an Int32Array over a SharedArrayBuffer.
const SEQ = 0; // the op's sequence number, 1..2^30-1 (workers wait on it; -1 stops them)
const NEXT = 1; // (seq & 0x7fff) << 16 | the next unclaimed chunk; index 0xffff once the op is closed
const DONE = 2; // chunks finished
const FAIL = 3; // 1 when a worker's chunk threw
const FN = 4;
const NARGS = 5;
const NCH = 6;
const HELPERS = 7; // workers that may join the op (its thread count - 1); each takes a place on waking
const JOINED = 8; // places taken
const SPINNERS = 9; // workers watching SEQ instead of parked on it
const ARGS = 10;
const CUTS = ARGS + MAX_ARGS;
const WORDS = CUTS + MAX_CHUNKS + 1;
const CLOSED = 0xffff;
/** Polls of DONE before the caller sleeps on it: a worker's last chunk usually ends within them. */
const SPIN = 4000;
/**
 * How long a worker watches for the next op before it parks: long enough for the ops of one call and calls in a
 * loop to find it awake (docs/PERFORMANCE.md, *Threads per op*), short enough to cost little CPU when none comes.
 */
export const SPIN_US = 50;

/** Ops begun in this process on more than one thread, by any pool or native library: a spinning worker parks when it moves. */
const ACTIVITY = new Int32Array(new SharedArrayBuffer(4));

/**
 * Says that an op on several threads begins outside this pool (the native CPU library's launches): the wasm
 * workers watching for their own next op park rather than hold a core it needs (runtime/native/cpu-executor.ts).
 */
export function noteCpuWork(): void {
  Atomics.add(ACTIVITY, 0, 1);
}

/**
 * The worker's code, run with eval (no file to locate, under tsc output or vitest alike). A claim is a
 * compare-exchange on NEXT carrying the op's tag, so a worker still holding an older op's parameters cannot
 * take a chunk of a newer one: were the 15-bit tag to come round again, the claim is re-read against SEQ
 * (set before NEXT opens) and the chunk run with the newer op's parameters.
 */
const WORKER_SOURCE = `
const { parentPort, workerData: d } = require('node:worker_threads');
const math = { exp: Math.exp, log: Math.log, tanh: Math.tanh, pow: Math.pow };
const inst = new WebAssembly.Instance(d.module, { env: { memory: d.memory }, math });
const fns = d.exports.map((n) => inst.exports[n]);
const c = new Int32Array(d.ctrl);
const act = new Int32Array(d.activity);
const [SEQ, NEXT, DONE, FAIL, FN, NARGS, NCH, HELPERS, JOINED, SPINNERS, ARGS, CUTS, SPIN_US] = d.words;
let seq = 0, nch = 0, run = null, cuts = null;
function load() {
  const n = c[NARGS];
  const args = new Array(n);
  for (let i = 0; i < n; i++) args[i] = c[ARGS + i];
  run = fns[c[FN]].bind(null, ...args);
  nch = c[NCH];
  cuts = c.slice(CUTS, CUTS + nch + 1);
}
parentPort.postMessage('ready');
setImmediate(() => {
  for (;;) {
    const s = Atomics.load(c, SEQ);
    if (s < 0) break;
    if (s !== seq) {
      seq = s;
      load();
      // An op on fewer threads than the pool: the places are taken in waking order, the rest sit it out.
      if (Atomics.add(c, JOINED, 1) >= Atomics.load(c, HELPERS)) nch = 0;
    }
    for (;;) {
      const v = Atomics.load(c, NEXT);
      const k = v & 0xffff;
      if ((v >>> 16) !== (seq & 0x7fff) || k >= nch) break;
      if (Atomics.compareExchange(c, NEXT, v, v + 1) !== v) continue;
      const now = Atomics.load(c, SEQ);
      if (now !== seq) { seq = now; load(); if (k >= nch) break; }
      try { run(cuts[k], cuts[k + 1]); } catch (e) { Atomics.store(c, FAIL, 1); }
      if (Atomics.add(c, DONE, 1) === nch - 1) Atomics.notify(c, DONE);
    }
    // Counted as spinning before the last look at SEQ, uncounted before parking: the caller's store of SEQ and
    // its read of SPINNERS are ordered against these, so a skipped wake-up finds SEQ already changed.
    // Another pool's op (or a native library's: noteCpuWork) ends the watch: this spin would hold a core it needs.
    // SEQ is stored before the activity count moves, so seeing the count move and SEQ not is another's op.
    Atomics.add(c, SPINNERS, 1);
    const until = performance.now() + SPIN_US;
    const others = Atomics.load(act, 0);
    let moved = false;
    for (let i = 1; !moved; i++) {
      moved = Atomics.load(c, SEQ) !== seq;
      if (moved || Atomics.load(act, 0) !== others) break;
      if ((i & 63) === 0 && performance.now() > until) break;
    }
    Atomics.sub(c, SPINNERS, 1);
    if (!moved) Atomics.wait(c, SEQ, seq);
  }
});
`;

export class WasmThreadPool {
  private readonly ctrl: Int32Array;
  private seq = 0;
  /** WorkerPlacement's counts (no core is known: a worker cannot ask which one it is on). */
  private readonly counts: WorkerPlacement = { splitOps: 0, joins: 0, joinsOnCaller: null, chunks: 0, workerChunks: 0 };

  private constructor(
    private readonly workers: Worker[],
    sab: SharedArrayBuffer,
    private readonly fnIndex: Map<string, number>,
  ) {
    this.ctrl = new Int32Array(sab);
  }

  get threads(): number {
    return this.workers.length + 1;
  }

  static async create(
    module: WebAssembly.Module,
    memory: WebAssembly.Memory,
    exports: string[],
    threads: number,
  ): Promise<WasmThreadPool> {
    const sab = new SharedArrayBuffer(WORDS * 4);
    const workers: Worker[] = [];
    const ready: Promise<void>[] = [];
    for (let w = 0; w < threads - 1; w++) {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          module,
          memory,
          ctrl: sab,
          activity: ACTIVITY.buffer,
          exports,
          words: [SEQ, NEXT, DONE, FAIL, FN, NARGS, NCH, HELPERS, JOINED, SPINNERS, ARGS, CUTS, SPIN_US],
        },
      });
      worker.unref();
      ready.push(
        new Promise((res, rej) => {
          worker.once('message', () => res());
          worker.once('error', rej);
        }),
      );
      workers.push(worker);
    }
    await Promise.all(ready);
    return new WasmThreadPool(workers, sab, new Map(exports.map((e, i) => [e, i])));
  }

  /** Counts of the ops run on more than one thread since the pool began (runtime/wasm/executor.ts WorkerPlacement). */
  placement(): WorkerPlacement {
    return { ...this.counts };
  }

  /**
   * Runs fn over the chunks `cuts` (cuts[0] = lo, ascending, the last = hi; chunk k is rows [cuts[k],
   * cuts[k+1])) on the caller (`self`) and the workers, each claiming the next chunk until none is left; returns
   * when every claimed chunk has finished. At most `threads` threads (the caller included) take part. args
   * exclude lo, hi.
   */
  run(
    fn: string,
    args: number[],
    cuts: readonly number[],
    self: (lo: number, hi: number) => void,
    threads = this.threads,
  ): void {
    const c = this.ctrl;
    const f = this.fnIndex.get(fn);
    if (f === undefined) throw new Error(`wasm threads: unknown function ${fn}`);
    if (args.length > MAX_ARGS) throw new Error(`wasm threads: ${fn} takes too many arguments for the control block`);
    const nch = cuts.length - 1;
    if (nch < 1 || nch > MAX_CHUNKS) throw new Error(`wasm threads: ${nch} chunks, expected 1..${MAX_CHUNKS}`);
    c[FN] = f;
    c[NARGS] = args.length;
    for (let i = 0; i < args.length; i++) c[ARGS + i] = args[i]!;
    c[NCH] = nch;
    for (let k = 0; k <= nch; k++) c[CUTS + k] = cuts[k]!;
    const helpers = Math.max(0, Math.min(threads, this.threads) - 1);
    Atomics.store(c, HELPERS, helpers);
    Atomics.store(c, JOINED, 0);
    Atomics.store(c, DONE, 0);
    Atomics.store(c, FAIL, 0);
    this.seq = (this.seq % 0x3fffffff) + 1;
    const tag = (this.seq & 0x7fff) << 16;
    Atomics.store(c, SEQ, this.seq);
    Atomics.store(c, NEXT, tag);
    noteCpuWork();
    if (helpers > Atomics.load(c, SPINNERS)) Atomics.notify(c, SEQ, helpers);
    let error: unknown;
    let failed = false;
    let own = 0;
    try {
      for (;;) {
        const v = Atomics.load(c, NEXT);
        const k = v & 0xffff;
        if (k >= nch) break;
        if (Atomics.compareExchange(c, NEXT, v, v + 1) !== v) continue;
        own++;
        try {
          self(cuts[k]!, cuts[k + 1]!);
        } finally {
          Atomics.add(c, DONE, 1);
        }
      }
    } catch (e) {
      error = e;
      failed = true;
    }
    // Close the op: no claim after this one, then wait for the chunks taken before it.
    const claimed = Math.min(Atomics.exchange(c, NEXT, tag | CLOSED) & 0xffff, nch);
    for (let spins = 0; ; spins++) {
      const d = Atomics.load(c, DONE);
      if (d >= claimed) break;
      // A worker notifies only on the op's last chunk; short of that (the caller failed) poll.
      if (spins >= SPIN) Atomics.wait(c, DONE, d, claimed === nch ? Infinity : 1);
    }
    if (helpers > 0) {
      const n = this.counts;
      n.splitOps++;
      n.joins += Math.min(Atomics.load(c, JOINED), helpers);
      n.chunks += nch;
      n.workerChunks += claimed - own;
    }
    if (failed) throw error;
    if (Atomics.load(c, FAIL) !== 0) throw new Error(`wasm threads: ${fn} failed on a worker`);
  }

  close(): void {
    Atomics.store(this.ctrl, SEQ, -1);
    Atomics.notify(this.ctrl, SEQ);
    for (const w of this.workers) void w.terminate();
  }
}

/** Chunks for an op of `rows` rows on `threads` threads (1 when it is not worth splitting). */
export function chunksFor(rows: number, threads: number): number {
  if (threads <= 1) return 1;
  return Math.max(1, Math.min(MAX_CHUNKS, threads * CHUNKS_PER_THREAD, Math.floor(rows / MIN_CHUNK_ROWS)));
}

/** The chunks `run` takes for rows [0, rows) on `threads` threads, balanced by the row pointers `ptr` where given. */
export function chunkCuts(rows: number, threads: number, ptr?: Int32Array): number[] {
  return balancedCuts(rows, chunksFor(rows, threads), ptr);
}

/** Cuts rows [0, ptr.length - 1) into `parts` contiguous slices of about equal entries + rows. */
export function balancedCuts(rows: number, parts: number, ptr?: Int32Array): number[] {
  const cuts = [0];
  const total = (ptr ? ptr[rows]! - ptr[0]! : 0) + rows;
  let r = 0;
  for (let t = 1; t < parts; t++) {
    const target = (total * t) / parts;
    while (r < rows && (ptr ? ptr[r]! - ptr[0]! : 0) + r < target) r++;
    cuts.push(r);
  }
  cuts.push(rows);
  return cuts;
}
