/**
 * Worker threads for the wasm executor: T-1 workers instantiate the same
 * module on the same shared WebAssembly.Memory; the calling thread is the
 * T-th. An op whose body is one parallel loop over rows is cut into T
 * contiguous row slices balanced by stored entries (plus one per row, so
 * empty rows count); each row is computed by exactly one thread with the
 * same code and the same in-row order, so results are bit-identical for any
 * thread count. Dispatch is synchronous: slices go through a shared control
 * block (Atomics.notify), the caller runs slice 0 and waits (Atomics.wait)
 * for the others.
 */
import { Worker } from 'node:worker_threads';

const STRIDE = 80;
const MAX_ARGS = STRIDE - 4;

/** The worker's code, run with eval (no file to locate, under tsc output or vitest alike). */
const WORKER_SOURCE = `
const { parentPort, workerData: d } = require('node:worker_threads');
const math = { exp: Math.exp, log: Math.log, tanh: Math.tanh, pow: Math.pow };
const inst = new WebAssembly.Instance(d.module, { env: { memory: d.memory }, math });
const fns = d.exports.map((n) => inst.exports[n]);
const c = new Int32Array(d.ctrl);
const b = d.base;
let seq = 0;
parentPort.postMessage('ready');
setImmediate(() => {
  for (;;) {
    Atomics.wait(c, b, seq);
    seq = Atomics.load(c, b);
    if (seq < 0) break;
    const n = c[b + 3];
    const args = new Array(n);
    for (let i = 0; i < n; i++) args[i] = c[b + 4 + i];
    let status = 1;
    try { fns[c[b + 2]](...args); } catch (e) { status = 2; }
    Atomics.store(c, b + 1, status);
    Atomics.notify(c, b + 1);
  }
});
`;

export class WasmThreadPool {
  private readonly ctrl: Int32Array;
  private readonly seqs: number[];

  private constructor(
    private readonly workers: Worker[],
    sab: SharedArrayBuffer,
    private readonly fnIndex: Map<string, number>,
  ) {
    this.ctrl = new Int32Array(sab);
    this.seqs = workers.map(() => 0);
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
    const n = threads - 1;
    const sab = new SharedArrayBuffer(Math.max(1, n) * STRIDE * 4);
    const workers: Worker[] = [];
    const ready: Promise<void>[] = [];
    for (let w = 0; w < n; w++) {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { module, memory, ctrl: sab, base: w * STRIDE, exports },
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

  /**
   * Runs fn over rows [0, rows) in the slices `cuts` (cuts[0] = 0, cuts[T] = rows):
   * slice t+1 on worker t, slice 0 on the caller (`self`). args exclude lo, hi.
   */
  run(fn: string, args: number[], cuts: number[], self: (lo: number, hi: number) => void): void {
    const c = this.ctrl;
    const f = this.fnIndex.get(fn);
    if (f === undefined) throw new Error(`wasm threads: unknown function ${fn}`);
    if (args.length + 2 > MAX_ARGS)
      throw new Error(`wasm threads: ${fn} takes too many arguments for the control block`);
    const used: number[] = [];
    for (let w = 0; w < this.workers.length && w + 2 < cuts.length; w++) {
      const [lo, hi] = [cuts[w + 1]!, cuts[w + 2]!];
      if (lo >= hi) continue;
      const b = w * STRIDE;
      c[b + 2] = f;
      c[b + 3] = args.length + 2;
      for (let i = 0; i < args.length; i++) c[b + 4 + i] = args[i]!;
      c[b + 4 + args.length] = lo;
      c[b + 5 + args.length] = hi;
      Atomics.store(c, b + 1, 0);
      this.seqs[w] = (this.seqs[w]! + 1) & 0x3fffffff;
      Atomics.store(c, b, this.seqs[w]!);
      Atomics.notify(c, b);
      used.push(w);
    }
    let failed = false;
    try {
      self(cuts[0]!, cuts[1]!);
    } finally {
      for (const w of used) {
        const b = w * STRIDE + 1;
        while (Atomics.load(c, b) === 0) Atomics.wait(c, b, 0);
        if (Atomics.load(c, b) === 2) failed = true;
      }
    }
    if (failed) throw new Error(`wasm threads: ${fn} failed on a worker`);
  }

  close(): void {
    this.workers.forEach((w, i) => {
      Atomics.store(this.ctrl, i * STRIDE, -1);
      Atomics.notify(this.ctrl, i * STRIDE);
      void w.terminate();
    });
  }
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
