/**
 * CPU executor of compiled wasm kernels (codegen/wasm): instantiates the
 * module with WebAssembly.instantiate only (no binaryen at run time), owns
 * one WebAssembly.Memory, lays every buffer out in it, runs the ops in
 * program order (repeat regions by count) and reads the results back as
 * runtime tensors (float64 values).
 *
 * Buffers (regions of the memory, each on a 64-byte cache line):
 *   - dense values: row-major, in the storage dtype (Float32Array for f32 ...;
 *     bool as one i32 per element); `X.next` beside X for ops that read their
 *     own result (Jacobi), swapped with X after such an op;
 *   - sparse structure, per pattern root (a sparse input) and layout: the
 *     pointers and indices of CSR and/or CSC as the ops' buffer roles ask;
 *   - sparse values, per value and layout, aligned with the root's layout.
 *     A sparse result is written in its pattern source's layout; other
 *     layouts of it that later ops read are permuted after each write.
 * Inputs are converted only when they change: a run with the very same
 * tensor objects and scalar values as the previous one (in the same or new
 * maps) reuses the copies already in memory (inputs are treated as
 * immutable), and skips binding and layout too. `updateInput` writes new
 * values of one input straight into memory; `execute()` without arguments
 * reruns on what memory holds. Results stay in memory: `resultView` is a
 * view of a dense result without copying, `results()` copies them all out.
 * The layout is reused while the shapes and stored-entry counts stay the same.
 *
 * Inputs are expected to be validated already (the CLI binds them with
 * interp/bind.ts first); the checks here are the few the executor relies on.
 */
import { MIN_SPLIT_ROWS } from '../catalogue/cpu.js';
import { converged, recordTrips, type RepeatTrips } from '../converge.js';
import { InputError } from '../errors.js';
import type { Tensor } from '../tensor.js';
import { instantiateKernel } from './instantiate.js';
import { gatheredBuffers, hostSpreadFromBytes, spreadPays, spreadThreshold, type GatherPattern } from './spread.js';
import { chunkCuts, type WasmThreadPool } from './threads.js';
import type { WasmElem, WasmManifest, WasmOp, WasmStep } from './manifest.js';
import {
  bytesOf,
  grouping,
  permuteValues,
  ProgramLayout,
  view,
  writeValues,
  type Pattern,
  type View,
} from './layout.js';

export interface WasmRunInputs {
  tensors: ReadonlyMap<string, Tensor>;
  scalars: ReadonlyMap<string, number>;
  /** Dims bound already (e.g. by interp/bind.ts); derived from the inputs when absent. */
  dims?: ReadonlyMap<string, number>;
}

export interface WasmRunResult {
  outputs: Map<string, Tensor>;
  dims: Map<string, number>;
  /** Trips each repeat region ran in the last execute(), and whether its `until` test stopped it. */
  repeats: RepeatTrips[];
}

export interface WasmExecutor {
  readonly manifest: WasmManifest;
  run(inputs: WasmRunInputs): WasmRunResult;
  /**
   * Runs the kernel and leaves its results in wasm memory (what timing measures).
   * Without inputs: reruns on the inputs of the last call as updated by `updateInput`.
   */
  execute(inputs?: WasmRunInputs): void;
  /**
   * Replaces the values of input `name` in wasm memory, in place: a dense input's
   * elements (row-major), a sparse input's stored values (same pattern, in the
   * entry order of the tensor last given), or a scalar. Needs a previous execute;
   * the next `execute()` uses them.
   */
  updateInput(name: string, values: ArrayLike<number> | number): void;
  /** The results of the last execute, as runtime tensors (copied out of wasm memory). */
  results(): WasmRunResult;
  /**
   * A dense result of the last execute as a view of wasm memory, in its storage
   * dtype, without copying (bool as 0/1 Int32Array). Valid until the next
   * execute or updateInput.
   */
  resultView(name: string): Float32Array | Float64Array | Int32Array | BigInt64Array;
  /** The memory the module runs in (for threads and tests). */
  readonly memory: KernelMemory;
  /** Threads ops run on (1: the calling thread only): the most any op runs on. */
  readonly threads: number;
  /**
   * Per op id, how many of `threads` its parallel loop runs on (at most `threads`; ops not named take all):
   * the model's pick (runtime/catalogue/cpu.ts cpuThreadsFor), so that a small op stays on one thread.
   * Results are the same for any counts.
   */
  setOpThreads(counts: ReadonlyMap<string, number>): void;
  /**
   * Whether op ran in spread walks with the current layout (WasmOp.spread, WasmExecutorOptions.spreadFromBytes);
   * undefined where it has no spread form (or the threshold is Infinity) or has not run since the layout changed.
   */
  spreadsOp(op: string): boolean | undefined;
  /**
   * Where the worker threads ran and how much of the ops they ran (counts since the pool or library began;
   * undefined with no workers): what dype calibrate reads to retake a timing whose workers did not have cores
   * of their own.
   */
  placement(): WorkerPlacement | undefined;
  /** Stops the worker threads (the executor runs single-threaded afterwards). */
  close(): void;
}

/**
 * Counts of where a native library's worker threads ran since it was loaded (one library's counts, shared by
 * every executor over it): a worker woken after an idle spell can wake on the core of the thread that launched
 * the op and stay there, and the op's threads then run one after the other (docs/PERFORMANCE.md, *Calibration
 * at two threads*).
 */
export interface WorkerPlacement {
  /** Ops launched over worker threads. */
  splitOps: number;
  /** Workers' joins of those ops (wasm: those before the op closed). */
  joins: number;
  /** Joins by a worker on the core the launching thread opened the op on; null where the backend cannot tell. */
  joinsOnCaller: number | null;
  /** The chunks those ops were cut into, and how many of them workers ran (the caller ran the rest). */
  chunks: number;
  workerChunks: number;
}

/** Linear memory the ops address by byte offset: a WebAssembly.Memory, or the native CPU library's host memory (runtime/native/cpu-executor.ts). */
export interface KernelMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  /** Grows by `pages` of 64 KiB, keeping the contents; returns the old size in pages. */
  grow(pages: number): number;
}

/** What runs the ops besides memory: one function per manifest export, taking (offsets, sizes, lo, hi). */
export interface KernelFunctions {
  readonly fns: Readonly<Record<string, unknown>>;
  /** Threads the functions split ops over themselves (a native library's worker threads); with a wasm pool, the pool's. */
  readonly threads?: number;
  /**
   * Sets the threads the functions split the next calls over (1..threads). Called before every op: the count may
   * be shared with other executors over the same library, so the setter keeps the state and skips a repeat.
   */
  readonly setThreads?: (n: number) => void;
  /** Where the functions' own worker threads ran (WasmExecutor.placement). */
  readonly placement?: () => WorkerPlacement;
  /** Called once by close(). */
  readonly close?: () => void;
}

export interface WasmExecutorOptions {
  /** Threads for ops with a parallel row loop (default 1); needs a module with shared memory. */
  threads?: number;
  /**
   * Gathered bytes from which an op with a spread form (WasmOp.spread) runs it, where most of its entries
   * gather rows a quarter of this or more from their own (runtime/wasm/spread.ts `spreadPays`): default twice
   * the host's L2; 0 always, Infinity never. Results are the same bits either way.
   */
  spreadFromBytes?: number;
}

type OpFn = (...args: number[]) => void;
/**
 * Regions start on a cache line: with 16-byte starts an SpMM's 128-byte rows of B and Y straddled three lines
 * instead of two, and the native SpMM ran up to 2x slower than on 64-byte starts (measured in a C harness on
 * bcsstk33, luxembourg_osm and Groebner_id2003_aug); the memory itself starts on a page (wasm) or 64 bytes (native).
 */
const ALIGN = 64;
const PAGE = 65536;
const FULL_HI = 0x7fffffff;

interface Region {
  elem: WasmElem;
  length: number;
  offset: number;
}

class Executor implements WasmExecutor {
  readonly memory: KernelMemory;
  private readonly fns = new Map<string, OpFn>();
  private readonly L: ProgramLayout;
  /** Regions by key; `cur` maps a key to the region it currently names (X and X.next swap). */
  private regions = new Map<string, Region>();
  private cur = new Map<string, string>();
  private signature = '';
  /** The inputs memory holds (tensor objects and scalar values per parameter), when it holds a complete set. */
  private lastInputs:
    { tensors: ReadonlyMap<string, Tensor>; scalars: ReadonlyMap<string, number>; entries: unknown[] } | undefined;
  /** The inputs of the last execute (with updateInput's replacements), for execute() without arguments. */
  private current: WasmRunInputs | undefined;
  /** Per op: the call's arguments (offsets, sizes, 0, 2^31-1), while the layout stands; undefined for ops whose buffers swap. */
  private argCache = new Map<string, number[]>();
  private patterns = new Map<string, Pattern>();
  private dims = new Map<string, number>();
  private executed = false;
  private defined = new Set<string>();
  private repeatLog = new Map<string, RepeatTrips>();
  /** Per repeat with `until`, the watched value as the trip began (reused from trip to trip). */
  private readonly snapshots = new Map<string, View>();

  private pool: WasmThreadPool | undefined;
  private cuts = new Map<string, number[]>();
  private opThreads = new Map<string, number>();

  private readonly own: KernelFunctions;
  /** Per op with a spread form: that function, the positions of the buffers it gathers, and whether the current layout's gathered rows call for it. */
  private readonly spreadFns = new Map<string, OpFn>();
  private readonly gathered = new Map<string, number[]>();
  private spreading = new Map<string, boolean>();

  constructor(
    readonly manifest: WasmManifest,
    fns: KernelFunctions,
    memory: KernelMemory,
    pool?: WasmThreadPool,
    private readonly spreadFrom = Infinity,
  ) {
    this.pool = pool;
    this.memory = memory;
    this.own = fns;
    this.L = new ProgramLayout(manifest);
    const fnOf = (name: string): OpFn => {
      const fn = fns.fns[name];
      if (typeof fn !== 'function') throw new Error(`wasm executor: the module exports no function '${name}'`);
      return fn as OpFn;
    };
    for (const o of manifest.ops) {
      this.fns.set(o.op, fnOf(o.export));
      // Functions that never spread (a native library's) need no spread form.
      if (o.spread && Number.isFinite(spreadFrom)) {
        this.spreadFns.set(o.op, fnOf(o.spread.export));
        this.gathered.set(o.op, gatheredBuffers(o, 'wasm executor'));
      }
    }
  }

  get threads(): number {
    return this.pool?.threads ?? this.own.threads ?? 1;
  }

  setOpThreads(counts: ReadonlyMap<string, number>): void {
    for (const [op, n] of counts) {
      if (!this.fns.has(op)) throw new Error(`wasm executor: setOpThreads names op '${op}', which the kernel has not`);
      if (!Number.isSafeInteger(n) || n < 1) throw new Error(`wasm executor: setOpThreads gives op ${op} ${n} threads`);
    }
    this.opThreads = new Map([...counts].map(([op, n]) => [op, Math.min(n, this.threads)]));
  }

  placement(): WorkerPlacement | undefined {
    return this.pool ? this.pool.placement() : this.own.placement?.();
  }

  private closed = false;

  close(): void {
    this.pool?.close();
    this.pool = undefined;
    if (!this.closed) this.own.close?.();
    this.closed = true;
  }

  private fail(src: string, msg: string): never {
    return this.L.fail(src, msg);
  }

  /** Lays out every region for the current dims and patterns (reusing the last layout when nothing changed). */
  private layout(): void {
    const want = this.L.regions(this.dims, this.patterns);
    const keys = [...want.keys()];
    const sig = keys.map((k) => `${k}=${want.get(k)!.elem}x${want.get(k)!.length}`).join(';');
    if (sig === this.signature) return;
    let off = ALIGN; // keep address 0 unused
    const regions = new Map<string, Region>();
    for (const k of keys) {
      const w = want.get(k)!;
      regions.set(k, { elem: w.elem, length: w.length, offset: off });
      off += Math.ceil((w.length * bytesOf(w.elem)) / ALIGN) * ALIGN;
    }
    const pages = Math.ceil(off / PAGE);
    const have = this.memory.buffer.byteLength / PAGE;
    if (pages > have) {
      if (pages > this.manifest.maxPages)
        throw new InputError(
          'DY3031',
          `kernel ${this.manifest.kernel}`,
          undefined,
          `the wasm backend needs ${off} bytes of memory; at most ${this.manifest.maxPages * PAGE} fit`,
        );
      this.memory.grow(pages - have);
    }
    this.regions = regions;
    this.cur = new Map(keys.map((k) => [k, k]));
    this.signature = sig;
    this.lastInputs = undefined;
    this.cuts.clear();
    this.argCache.clear();
    this.spreading.clear();
  }

  private region(key: string): Region {
    const r = this.regions.get(this.cur.get(key) ?? key);
    if (!r) throw new Error(`wasm executor: no region '${key}'`);
    return r;
  }

  private viewOf(key: string): View {
    const r = this.region(key);
    return view(this.memory.buffer, r.elem, r.offset, r.length);
  }

  /** Per parameter, the tensor object or scalar value given (what decides whether memory already holds the inputs). */
  private entriesOf(inputs: WasmRunInputs): unknown[] {
    return this.manifest.params.map((p) =>
      p.type.shape.length === 0 ? inputs.scalars.get(p.name) : inputs.tensors.get(p.name),
    );
  }

  private holds(inputs: WasmRunInputs): boolean {
    const last = this.lastInputs;
    if (!last || this.L.writesParams) return false;
    const ps = this.manifest.params;
    for (let i = 0; i < ps.length; i++) {
      const p = ps[i]!;
      const x = p.type.shape.length === 0 ? inputs.scalars.get(p.name) : inputs.tensors.get(p.name);
      if (!Object.is(x, last.entries[i])) return false;
    }
    return true;
  }

  private copyInputs(inputs: WasmRunInputs): void {
    if (this.holds(inputs)) return;
    const entries = this.entriesOf(inputs);
    this.L.writeInputs(
      inputs,
      this.patterns,
      (k) => this.regions.has(k),
      (k) => this.viewOf(k),
    );
    this.lastInputs = { tensors: inputs.tensors, scalars: inputs.scalars, entries };
  }

  run(inputs: WasmRunInputs): WasmRunResult {
    this.execute(inputs);
    return this.results();
  }

  execute(inputs?: WasmRunInputs): void {
    const given = inputs ?? this.current;
    if (!given) throw new Error('wasm executor: execute() without inputs before any execute(inputs)');
    this.current = given;
    this.repeatLog = new Map();
    // Memory holds these very inputs, laid out for them: only the ops to run (and the scalars that steer repeats).
    if (this.executed && this.holds(given) && (given.dims === undefined || given.dims === this.lastDimsArg)) {
      this.defined = new Set(this.manifest.params.map((p) => p.name));
      this.exec(this.manifest.program, given.scalars);
      return;
    }
    this.executed = false;
    this.lastDimsArg = given.dims;
    this.prepare(given);
    this.defined = new Set(this.manifest.params.map((p) => p.name));
    this.exec(this.manifest.program, given.scalars);
    this.executed = true;
  }

  private lastDimsArg: ReadonlyMap<string, number> | undefined;

  private prepare(inputs: WasmRunInputs): void {
    const dims = this.L.bindDims(inputs);
    // The cached arguments hold dims as size arguments and strides, and the cuts split rows a dim counts: a dim that
    // changes with every region length the same (x of another length beside y, X reshaped from 3 x 5 to 5 x 3) kept
    // the last run's values.
    if (dims.size !== this.dims.size || [...dims].some(([d, v]) => this.dims.get(d) !== v)) {
      this.argCache.clear();
      this.cuts.clear();
      this.spreading.clear();
    }
    this.dims = dims;
    const patterns = this.L.patternsOf(inputs, (n, t) =>
      this.lastInputs?.tensors.get(n) === t ? this.patterns.get(n) : undefined,
    );
    if (patterns.size !== this.patterns.size || [...patterns].some(([n, p]) => this.patterns.get(n) !== p)) {
      this.cuts.clear();
      this.spreading.clear();
    }
    this.patterns = patterns;
    this.layout();
    this.copyInputs(inputs);
  }

  updateInput(name: string, values: ArrayLike<number> | number): void {
    const cur = this.current;
    if (!cur || !this.executed) throw new Error('wasm executor: updateInput before any execute(inputs)');
    const p = this.manifest.params.find((q) => q.name === name);
    if (!p) throw new Error(`wasm executor: kernel ${this.manifest.kernel} has no parameter '${name}'`);
    const t = p.type;
    const holds = this.holds(cur);
    if (t.shape.length === 0) {
      if (typeof values !== 'number')
        throw new Error(`wasm executor: '${name}' is a scalar; updateInput expects a number`);
      if (this.L.isDim(name) && values !== this.dims.get(name))
        throw new Error(`wasm executor: '${name}' sizes a dimension; run execute(inputs) to change it`);
      const scalars = new Map(cur.scalars);
      scalars.set(name, values);
      this.current = { ...cur, scalars };
      if (this.regions.has(`D:${name}`)) writeValues(this.viewOf(`D:${name}`), [values], t.dtype);
    } else {
      if (typeof values === 'number')
        throw new Error(`wasm executor: '${name}' is a tensor; updateInput expects its values`);
      const old = cur.tensors.get(name)!;
      const data = values instanceof Float64Array ? values : Float64Array.from(values);
      let next: Tensor;
      if (t.format === 'dense') {
        const want = this.L.countOf(name, this.dims);
        if (data.length !== want) throw new Error(`wasm executor: '${name}' holds ${want} values, got ${data.length}`);
        if (old.format !== 'dense')
          throw new Error(
            `wasm executor: '${name}' was given as a sparse file for a dense parameter; run execute(inputs) instead`,
          );
        next = { format: 'dense', shape: old.shape, data };
        if (this.regions.has(`D:${name}`)) writeValues(this.viewOf(`D:${name}`), data, t.dtype);
      } else {
        if (old.format === 'dense') throw new Error(`wasm executor: '${name}' is sparse`);
        if (data.length !== old.values.length)
          throw new Error(
            `wasm executor: '${name}' has ${old.values.length} stored entries, got ${data.length} values`,
          );
        next = { ...old, values: data };
        const pat = this.patterns.get(name)!;
        for (const layout of ['csr', 'csc'] as const) {
          const key = `V:${name}:${layout}`;
          if (this.regions.has(key)) writeValues(this.viewOf(key), data, t.dtype, grouping(pat, layout).ids);
        }
      }
      const tensors = new Map(cur.tensors);
      tensors.set(name, next);
      this.current = { ...cur, tensors };
    }
    // Memory holds the updated inputs when it held the old ones.
    this.lastInputs = holds
      ? { tensors: this.current.tensors, scalars: this.current.scalars, entries: this.entriesOf(this.current) }
      : undefined;
  }

  resultView(name: string): Float32Array | Float64Array | Int32Array | BigInt64Array {
    if (!this.executed) throw new Error('resultView() before execute()');
    const r = this.manifest.results.find((q) => q.name === name);
    if (!r) throw new Error(`wasm executor: kernel ${this.manifest.kernel} has no result '${name}'`);
    if (r.type.format !== 'dense' && r.type.shape.length >= 2)
      throw new Error(`wasm executor: '${name}' is sparse; read it with results()`);
    if (!this.defined.has(name))
      this.fail(
        `kernel ${this.manifest.kernel}`,
        `'${name}' was never computed: the repeat that assigns it ran zero times`,
      );
    return this.viewOf(`D:${name}`);
  }

  results(): WasmRunResult {
    if (!this.executed) throw new Error('results() before execute()');
    const outputs = new Map<string, Tensor>();
    for (const r of this.manifest.results) {
      if (!this.defined.has(r.name))
        this.fail(
          `kernel ${this.manifest.kernel}`,
          `'${r.name}' was never computed: the repeat that assigns it ran zero times`,
        );
      outputs.set(
        r.name,
        this.L.readResult(r.name, r.type, this.dims, this.patterns, (k) => this.viewOf(k)),
      );
    }
    return { outputs, dims: new Map(this.dims), repeats: [...this.repeatLog.values()] };
  }

  private exec(steps: readonly WasmStep[], scalars: ReadonlyMap<string, number>): void {
    for (const s of steps) {
      if (s.kind === 'op') {
        this.runOp(this.L.opById.get(s.op)!);
        continue;
      }
      let n: number;
      if (typeof s.count === 'number') n = s.count;
      else {
        const v = scalars.get(s.count.param);
        if (v === undefined || !this.defined.has(s.count.param))
          this.fail(`--param ${s.count.param}`, `repeat count '${s.count.param}' is not given`);
        n = v;
        if (!Number.isSafeInteger(n) || n < 0)
          this.fail(`--param ${s.count.param}`, `repeat count must be a non-negative integer, got ${n}`);
      }
      this.trips(s, n, scalars);
    }
  }

  /** Up to n trips; with `until`, the watched value is copied before each trip and compared after it. */
  private trips(s: Extract<WasmStep, { kind: 'repeat' }>, n: number, scalars: ReadonlyMap<string, number>): void {
    const u = s.until;
    let t = 0;
    let stopped = false;
    while (t < n && !stopped) {
      const before = u ? this.snapshot(s.id, this.viewOf(`D:${u.value}`)) : undefined;
      this.exec(s.body, scalars);
      t++;
      if (u)
        stopped = converged(before as ArrayLike<number>, this.viewOf(`D:${u.value}`) as ArrayLike<number>, u.within);
    }
    recordTrips(this.repeatLog, s.id, n, u, t, stopped);
  }

  /**
   * `v` copied into the repeat's snapshot array, made once per repeat and length: a fresh copy per trip
   * (`slice`) allocated and zeroed a new buffer each time, about a third of a PageRank trip on a road graph of
   * 115k rows (docs/PERFORMANCE.md, *The examples against numpy and scipy*).
   */
  private snapshot(id: string, v: View): View {
    let snap = this.snapshots.get(id);
    if (!snap || snap.length !== v.length || snap.constructor !== v.constructor) {
      snap = v.slice();
      this.snapshots.set(id, snap);
    } else snap.set(v as never);
    return snap;
  }

  /** Whether op runs in spread walks with the current layout (undefined: it has no spread form, or has not run). */
  spreadsOp(op: string): boolean | undefined {
    return this.spreading.get(op);
  }

  /** The pattern an op's row loop walks, whose entries name the rows its spread form gathers (undefined: not known). */
  private gatherPattern(o: WasmOp): GatherPattern | undefined {
    const bal = o.balanceBy;
    const pat = bal ? this.patterns.get(bal.root) : undefined;
    if (!bal || !pat) return undefined;
    const g = grouping(pat, bal.layout);
    const inner = bal.layout === 'csr' ? pat.ci : pat.ri;
    const ids = g.ids;
    return {
      ptr: g.ptr,
      at: ids ? (q) => inner[ids[q]!]! : (q) => inner[q]!,
      gatheredRows: bal.layout === 'csr' ? pat.cols : pat.rows,
    };
  }

  /** Arguments of one op's function: buffer offsets, then sizes. */
  private args(o: WasmOp): number[] {
    return [
      ...this.L.keys.get(o.op)!.map((k) => this.region(k).offset),
      ...this.L.sizesOf(o, this.dims, this.patterns),
    ];
  }

  private runOp(o: WasmOp): void {
    for (const v of this.L.reads.get(o.op)!) {
      if (!this.defined.has(v))
        this.fail(
          `kernel ${this.manifest.kernel}`,
          `'${v}' was never computed: the repeat that assigns it ran zero times`,
        );
    }
    let args = this.argCache.get(o.op);
    if (!args) {
      args = this.args(o);
      if (!this.L.swapping.has(o.op)) this.argCache.set(o.op, args);
    }
    // Weighed once per layout and pattern: the gathered bytes come from the one, the rows' distances the other.
    const gathered = this.gathered.get(o.op);
    if (gathered && !this.spreading.has(o.op)) {
      const keys = this.L.keys.get(o.op)!;
      const bytesAt = (q: number): number => {
        const r = this.region(keys[q]!);
        return r.length * bytesOf(r.elem);
      };
      this.spreading.set(
        o.op,
        spreadPays(gathered, bytesAt, this.spreadFrom, () => this.gatherPattern(o)),
      );
    }
    const spread = this.spreading.get(o.op) === true;
    const fn = spread ? this.spreadFns.get(o.op)! : this.fns.get(o.op)!;
    const threads = this.opThreads.get(o.op) ?? this.threads;
    if (!this.pool) {
      this.own.setThreads?.(threads);
      fn(...args, 0, FULL_HI);
      this.afterOp(o);
      return;
    }
    const rows =
      o.splittable && o.splitRange !== undefined
        ? typeof o.splitRange === 'number'
          ? o.splitRange
          : (this.dims.get(o.splitRange) ?? 0)
        : 0;
    if (threads > 1 && rows >= MIN_SPLIT_ROWS) {
      const key = `${o.op}:${rows}:${threads}`;
      let cuts = this.cuts.get(key);
      if (!cuts) {
        const bal = o.balanceBy;
        const pat = bal ? this.patterns.get(bal.root) : undefined;
        const ptr = bal && pat ? grouping(pat, bal.layout).ptr : undefined;
        cuts = chunkCuts(rows, threads, ptr && ptr.length === rows + 1 ? ptr : undefined);
        this.cuts.set(key, cuts);
      }
      const a = args;
      this.pool.run(spread ? o.spread!.export : o.export, a, cuts, (lo, hi) => fn(...a, lo, hi), threads);
    } else fn(...args, 0, FULL_HI);
    this.afterOp(o);
  }

  /** Makes the op's result current: swaps X and X.next, permutes a sparse result into its other layouts. */
  private afterOp(o: WasmOp): void {
    const { key: outKey } = this.L.outOf(o);
    let key = outKey;
    if (outKey.endsWith('.next')) {
      key = outKey.slice(0, -5);
      const a = this.cur.get(key)!;
      this.cur.set(key, this.cur.get(outKey)!);
      this.cur.set(outKey, a);
    }
    this.defined.add(o.result);
    const others = this.L.otherLayouts(o, (k) => this.regions.has(k));
    if (others.length === 0) return;
    const pat = this.patterns.get(this.manifest.roots[o.result] ?? o.result)!;
    for (const x of others) permuteValues(pat, x.from, x.to, this.viewOf(key), this.viewOf(x.key));
  }
}

/** Instantiates a compiled kernel (WebAssembly only) and returns its executor. */
export async function createWasmExecutor(
  binary: Uint8Array,
  manifest: WasmManifest,
  opts: WasmExecutorOptions = {},
): Promise<WasmExecutor> {
  const spreadFrom = spreadThreshold(opts.spreadFromBytes, hostSpreadFromBytes(), 'wasm executor');
  const { memory, instance, pool } = await instantiateKernel(binary, manifest, opts.threads ?? 1, 'wasm executor');
  return new Executor(manifest, { fns: instance.exports }, memory, pool, spreadFrom);
}

/**
 * An executor over other functions and memory with the wasm calling convention (the native CPU library's).
 * Ops run their spread forms only with a finite `spreadFromBytes` (default never), whose functions `fns` must hold.
 */
export function executorOver(
  manifest: WasmManifest,
  fns: KernelFunctions,
  memory: KernelMemory,
  opts: { spreadFromBytes?: number } = {},
): WasmExecutor {
  const spreadFrom = spreadThreshold(opts.spreadFromBytes, Infinity, 'wasm executor');
  return new Executor(manifest, fns, memory, undefined, spreadFrom);
}
