/**
 * CPU executor of compiled wasm kernels (codegen/wasm): instantiates the
 * module with WebAssembly.instantiate only (no binaryen at run time), owns
 * one WebAssembly.Memory, lays every buffer out in it, runs the ops in
 * program order (repeat regions by count) and reads the results back as
 * runtime tensors (float64 values).
 *
 * Buffers (regions of the memory, 16-byte aligned):
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
import { InputError } from '../errors.js';
import type { Tensor } from '../tensor.js';
import { balancedCuts, WasmThreadPool } from './threads.js';
import type { WasmBuffer, WasmElem, WasmManifest, WasmOp, WasmStep, WasmValueType } from './manifest.js';
import { gather, permutationTo, pointers } from '../entry-order.js';

export interface WasmRunInputs {
  tensors: ReadonlyMap<string, Tensor>;
  scalars: ReadonlyMap<string, number>;
  /** Dims bound already (e.g. by interp/bind.ts); derived from the inputs when absent. */
  dims?: ReadonlyMap<string, number>;
}

export interface WasmRunResult {
  outputs: Map<string, Tensor>;
  dims: Map<string, number>;
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
  readonly memory: WebAssembly.Memory;
  /** Threads ops run on (1: the calling thread only). */
  readonly threads: number;
  /** Stops the worker threads (the executor runs single-threaded afterwards). */
  close(): void;
}

export interface WasmExecutorOptions {
  /** Threads for ops with a parallel row loop (default 1); needs a module with shared memory. */
  threads?: number;
}

/** Fewer rows than this run on the calling thread alone (dispatch costs more than it saves). */
const MIN_SPLIT_ROWS = 256;

type OpFn = (...args: number[]) => void;
type View = Float32Array | Float64Array | Int32Array | BigInt64Array;

/** Stored-entry list of a pattern root and its groupings by row (CSR) and column (CSC). */
interface Pattern {
  rows: number;
  cols: number;
  ri: Int32Array;
  ci: Int32Array;
  order: 'row' | 'col';
  /** Per layout: pointers, and entry ids in layout order (undefined: identity). */
  groups: { csr?: Grouping; csc?: Grouping };
}

interface Grouping {
  ptr: Int32Array;
  ids: Int32Array | undefined;
  /** Layout position of each entry id (undefined: identity). */
  inv?: Int32Array | undefined;
}

const HOST: Record<string, (...a: number[]) => number> = { exp: Math.exp, log: Math.log, tanh: Math.tanh, pow: Math.pow };
const ALIGN = 16;
const PAGE = 65536;
const FULL_HI = 0x7fffffff;

const bytesOf = (e: WasmElem): number => (e === 'f64' || e === 'i64' ? 8 : 4);

function view(buf: ArrayBufferLike, e: WasmElem, off: number, n: number): View {
  switch (e) {
    case 'f32':
      return new Float32Array(buf, off, n);
    case 'f64':
      return new Float64Array(buf, off, n);
    case 'i64':
      return new BigInt64Array(buf, off, n);
    default:
      return new Int32Array(buf, off, n);
  }
}

/** Writes float64 values into a storage view (bool as 0/1, i64 as BigInt). */
function writeValues(v: View, src: ArrayLike<number>, e: WasmElem, ids?: Int32Array): void {
  const n = v.length;
  if (v instanceof BigInt64Array) {
    for (let q = 0; q < n; q++) v[q] = BigInt(Math.trunc(src[ids ? ids[q]! : q]!));
    return;
  }
  if (e === 'bool') {
    for (let q = 0; q < n; q++) v[q] = src[ids ? ids[q]! : q]! !== 0 ? 1 : 0;
    return;
  }
  if (!ids && (src instanceof Float64Array || src instanceof Int32Array)) {
    v.set(src.length === n ? src : src.subarray(0, n));
    return;
  }
  for (let q = 0; q < n; q++) v[q] = src[ids ? ids[q]! : q]!;
}

function readValues(v: View): Float64Array {
  if (v instanceof BigInt64Array) {
    const out = new Float64Array(v.length);
    for (let q = 0; q < v.length; q++) out[q] = Number(v[q]!);
    return out;
  }
  // Copy out of shared memory first (a plain memcpy), then convert: reading a
  // view over a SharedArrayBuffer element by element, or converting it in
  // place, takes V8's slow paths (measured 6 ms against 50-125 ms for 3.6M
  // f32 values).
  const plain = v.slice();
  return plain instanceof Float64Array ? plain : Float64Array.from(plain);
}

// ---- patterns (the interpreter's entry order, re-implemented: the runtime may not import interp/) ----

function patternOf(t: Tensor): Pattern {
  switch (t.format) {
    case 'csr': {
      const ri = new Int32Array(t.colIdx.length);
      for (let r = 0; r < t.rows; r++) ri.fill(r, t.rowPtr[r]!, t.rowPtr[r + 1]!);
      return { rows: t.rows, cols: t.cols, ri, ci: t.colIdx, order: 'row', groups: {} };
    }
    case 'csc': {
      const ci = new Int32Array(t.rowIdx.length);
      for (let c = 0; c < t.cols; c++) ci.fill(c, t.colPtr[c]!, t.colPtr[c + 1]!);
      return { rows: t.rows, cols: t.cols, ri: t.rowIdx, ci, order: 'col', groups: {} };
    }
    case 'coo':
      return { rows: t.rows, cols: t.cols, ri: t.rowIdx, ci: t.colIdx, order: 'row', groups: {} };
    case 'dense':
      throw new Error('internal: a dense tensor has no pattern');
  }
}

function grouping(p: Pattern, layout: 'csr' | 'csc'): Grouping {
  const hit = p.groups[layout];
  if (hit) return hit;
  const by = layout === 'csr' ? 'row' : 'col';
  const perm = permutationTo(p, by);
  const g: Grouping = { ptr: pointers(by === 'row' ? p.ri : p.ci, perm, by === 'row' ? p.rows : p.cols), ids: p.order === by ? undefined : perm };
  return (p.groups[layout] = g);
}

function inverse(g: Grouping): Int32Array | undefined {
  if (g.inv !== undefined || !g.ids) return g.inv;
  const inv = new Int32Array(g.ids.length);
  for (let q = 0; q < inv.length; q++) inv[g.ids[q]!] = q;
  return (g.inv = inv);
}

/** A sparse result as a tensor of the declared format (the interpreter's toTensor). */
function sparseTensor(p: Pattern, values: Float64Array, format: WasmValueType['format']): Tensor {
  if (format === 'dense') {
    const data = new Float64Array(p.rows * p.cols);
    for (let k = 0; k < p.ri.length; k++) data[p.ri[k]! * p.cols + p.ci[k]!] = values[k]!;
    return { format: 'dense', shape: [p.rows, p.cols], data };
  }
  if (format === 'csc') {
    const perm = permutationTo(p, 'col');
    return { format: 'csc', rows: p.rows, cols: p.cols, colPtr: pointers(p.ci, perm, p.cols), rowIdx: gather(p.ri, perm), values: gather(values, perm) };
  }
  const perm = permutationTo(p, 'row');
  const rowIdx = gather(p.ri, perm);
  const colIdx = gather(p.ci, perm);
  const vals = gather(values, perm);
  return format === 'csr'
    ? { format: 'csr', rows: p.rows, cols: p.cols, rowPtr: pointers(p.ri, perm, p.rows), colIdx, values: vals }
    : { format: 'coo', rows: p.rows, cols: p.cols, rowIdx, colIdx, values: vals };
}

// ---- buffer keys ----

/** The memory region a manifest buffer lives in. */
function regionKey(b: WasmBuffer, roots: Record<string, string>): string {
  const next = b.name.endsWith('.next') ? '.next' : '';
  switch (b.role) {
    case 'dense':
    case 'scalar':
      return `D:${b.of}${next}`;
    case 'values':
      return `V:${b.of}:${b.layout ?? 'csr'}${next}`;
    default: {
      const root = roots[b.of] ?? b.of;
      const part = b.role === 'rowPtr' || b.role === 'colPtr' ? 'ptr' : 'idx';
      return `S:${root}:${b.layout ?? (b.role === 'rowPtr' || b.role === 'colIdx' ? 'csr' : 'csc')}:${part}`;
    }
  }
}

interface Region {
  elem: WasmElem;
  length: number;
  offset: number;
}

class Executor implements WasmExecutor {
  readonly memory: WebAssembly.Memory;
  private readonly fns = new Map<string, OpFn>();
  private readonly opById: Map<string, WasmOp>;
  /** Region keys of each op's buffers, in buffer order. */
  private readonly keys = new Map<string, string[]>();
  /** Layouts in which each sparse value is read or written. */
  private readonly layoutsOf = new Map<string, Set<'csr' | 'csc'>>();
  /** Regions by key; `cur` maps a key to the region it currently names (X and X.next swap). */
  private regions = new Map<string, Region>();
  private cur = new Map<string, string>();
  private signature = '';
  /** The inputs memory holds (tensor objects and scalar values per parameter), when it holds a complete set. */
  private lastInputs: { tensors: ReadonlyMap<string, Tensor>; scalars: ReadonlyMap<string, number>; entries: unknown[] } | undefined;
  /** The inputs of the last execute (with updateInput's replacements), for execute() without arguments. */
  private current: WasmRunInputs | undefined;
  /** Per op: the call's arguments (offsets, sizes, 0, 2^31-1), while the layout stands; undefined for ops whose buffers swap. */
  private argCache = new Map<string, number[]>();
  /** Ops reading or writing a buffer that swaps with its `.next`: offsets change between calls. */
  private readonly swapping = new Set<string>();
  /** Per op: the values its input buffers hold (checked to have been computed). */
  private readonly reads = new Map<string, string[]>();
  private patterns = new Map<string, Pattern>();
  private dims = new Map<string, number>();
  private executed = false;
  private defined = new Set<string>();
  /** Some op assigns a parameter: its copy in memory changes, so inputs are copied on every run. */
  private readonly writesParams: boolean;

  private pool: WasmThreadPool | undefined;
  private cuts = new Map<string, number[]>();

  constructor(
    readonly manifest: WasmManifest,
    instance: WebAssembly.Instance,
    memory: WebAssembly.Memory,
    pool?: WasmThreadPool,
  ) {
    this.pool = pool;
    this.memory = memory;
    this.writesParams = manifest.ops.some((o) => manifest.params.some((p) => p.name === o.result));
    this.opById = new Map(manifest.ops.map((o) => [o.op, o]));
    const nexts = new Set(manifest.ops.flatMap((o) => o.buffers.filter((b) => b.name.endsWith('.next')).map((b) => b.of)));
    for (const o of manifest.ops) {
      const fn = instance.exports[o.export];
      if (typeof fn !== 'function') throw new Error(`wasm executor: the module exports no function '${o.export}'`);
      this.fns.set(o.op, fn as OpFn);
      this.keys.set(
        o.op,
        o.buffers.map((b) => regionKey(b, manifest.roots)),
      );
      if (o.buffers.some((b) => nexts.has(b.of) && (b.role === 'dense' || b.role === 'scalar' || b.role === 'values'))) this.swapping.add(o.op);
      this.reads.set(o.op, [...new Set(o.buffers.filter((b) => b.name !== o.out).map((b) => b.of))]);
      for (const b of o.buffers) {
        if (b.role === 'values') {
          let s = this.layoutsOf.get(b.of);
          if (!s) this.layoutsOf.set(b.of, (s = new Set()));
          s.add(b.layout ?? 'csr');
        }
      }
    }
  }

  get threads(): number {
    return this.pool?.threads ?? 1;
  }

  close(): void {
    this.pool?.close();
    this.pool = undefined;
  }

  private fail(src: string, msg: string): never {
    throw new InputError('DY3015', src, undefined, msg);
  }

  private bindDims(inputs: WasmRunInputs): Map<string, number> {
    const dims = new Map<string, number>(inputs.dims ?? []);
    for (const [n, v] of inputs.scalars) if (!dims.has(n) && this.isDim(n)) dims.set(n, v);
    for (const p of this.manifest.params) {
      const shape = p.type.shape;
      if (shape.length === 0) continue;
      const t = inputs.tensors.get(p.name);
      if (!t) this.fail(`--input ${p.name}`, `missing input '${p.name}'`);
      const got = t.format === 'dense' ? t.shape : [t.rows, t.cols];
      // A vector may come as n x 1 or 1 x n.
      const fit = shape.length === 1 && got.length === 2 ? [got[0]! * got[1]!] : got;
      if (fit.length !== shape.length) this.fail(`--input ${p.name}`, `'${p.name}' has ${shape.length} dimension(s) but the input is ${got.join(' x ')}`);
      shape.forEach((d, i) => {
        if (typeof d === 'number') {
          if (d !== fit[i]) this.fail(`--input ${p.name}`, `dimension ${i + 1} of '${p.name}' must be ${d}, found ${fit[i]}`);
        } else if (dims.has(d)) {
          if (dims.get(d) !== fit[i]) this.fail(`--input ${p.name}`, `dim '${d}' is ${dims.get(d)} but ${fit[i]} from dimension ${i + 1} of '${p.name}'`);
        } else dims.set(d, fit[i]!);
      });
    }
    return dims;
  }

  private isDim(n: string): boolean {
    return this.manifest.params.some((p) => p.type.shape.includes(n));
  }

  private countOf(v: string): number {
    const t = this.manifest.values[v];
    if (!t) throw new Error(`wasm executor: unknown value '${v}'`);
    return t.shape.reduce<number>((a, d) => a * (typeof d === 'number' ? d : this.dims.get(d) ?? 0), 1);
  }

  private nnzOf(root: string): number {
    return this.patterns.get(root)?.ri.length ?? 0;
  }

  /** Lays out every region for the current dims and patterns (reusing the last layout when nothing changed). */
  private layout(): void {
    const want = new Map<string, { elem: WasmElem; length: number }>();
    const roots = this.manifest.roots;
    for (const o of this.manifest.ops) {
      o.buffers.forEach((b, i) => {
        const key = this.keys.get(o.op)![i]!;
        let length: number;
        if (b.role === 'dense' || b.role === 'scalar') length = this.countOf(b.of);
        else {
          const root = roots[b.of] ?? b.of;
          const p = this.patterns.get(root);
          if (!p) throw new Error(`wasm executor: no pattern for '${b.of}' (root '${root}')`);
          if (b.role === 'values' || b.role === 'colIdx' || b.role === 'rowIdx') length = p.ri.length;
          else length = (b.role === 'rowPtr' ? p.rows : p.cols) + 1;
        }
        want.set(key, { elem: b.elem, length });
      });
    }
    // Dense results read back even if no op reads them.
    for (const r of this.manifest.results) if (r.type.format === 'dense' && !want.has(`D:${r.name}`)) want.set(`D:${r.name}`, { elem: r.type.dtype, length: this.countOf(r.name) });
    // A value X written as X.next needs both regions.
    for (const k of [...want.keys()]) {
      if (k.endsWith('.next')) {
        const base = k.slice(0, -5);
        if (!want.has(base)) want.set(base, want.get(k)!);
      }
    }
    const keys = [...want.keys()].sort();
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
      if (pages > this.manifest.maxPages) throw new InputError('DY3031', `kernel ${this.manifest.kernel}`, undefined, `the wasm backend needs ${off} bytes of memory; at most ${this.manifest.maxPages * PAGE} fit`);
      this.memory.grow(pages - have);
    }
    this.regions = regions;
    this.cur = new Map(keys.map((k) => [k, k]));
    this.signature = sig;
    this.lastInputs = undefined;
    this.cuts.clear();
    this.argCache.clear();
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
    return this.manifest.params.map((p) => (p.type.shape.length === 0 ? inputs.scalars.get(p.name) : inputs.tensors.get(p.name)));
  }

  private holds(inputs: WasmRunInputs): boolean {
    const last = this.lastInputs;
    if (!last || this.writesParams) return false;
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
    for (const p of this.manifest.params) {
      const t = p.type;
      if (t.shape.length === 0) {
        const v = inputs.scalars.get(p.name);
        if (v === undefined) this.fail(`--param ${p.name}`, `missing scalar '${p.name}'`);
        if (this.regions.has(`D:${p.name}`)) writeValues(this.viewOf(`D:${p.name}`), [v], t.dtype);
        continue;
      }
      const x = inputs.tensors.get(p.name)!;
      if (t.format === 'dense') {
        if (!this.regions.has(`D:${p.name}`)) continue;
        const v = this.viewOf(`D:${p.name}`);
        if (x.format === 'dense') writeValues(v, x.data, t.dtype);
        else {
          // A sparse file for a dense parameter: densify.
          const pat = patternOf(x);
          const data = new Float64Array(pat.rows * pat.cols);
          for (let e = 0; e < pat.ri.length; e++) data[pat.ri[e]! * pat.cols + pat.ci[e]!] = x.values[e]!;
          writeValues(v, data, t.dtype);
        }
        continue;
      }
      if (x.format === 'dense') this.fail(`--input ${p.name}`, `'${p.name}' is ${t.format}: expected a sparse matrix, found a dense array`);
      const pat = this.patterns.get(p.name)!;
      for (const layout of ['csr', 'csc'] as const) {
        const ptrKey = `S:${p.name}:${layout}:ptr`;
        const idxKey = `S:${p.name}:${layout}:idx`;
        const valKey = `V:${p.name}:${layout}`;
        if (!this.regions.has(ptrKey) && !this.regions.has(idxKey) && !this.regions.has(valKey)) continue;
        const g = grouping(pat, layout);
        if (this.regions.has(ptrKey)) (this.viewOf(ptrKey) as Int32Array).set(g.ptr);
        if (this.regions.has(idxKey)) {
          const minor = layout === 'csr' ? pat.ci : pat.ri;
          const v = this.viewOf(idxKey) as Int32Array;
          if (g.ids) for (let q = 0; q < v.length; q++) v[q] = minor[g.ids[q]!]!;
          else v.set(minor);
        }
        if (this.regions.has(valKey)) writeValues(this.viewOf(valKey), x.values, t.dtype, g.ids);
      }
    }
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
    this.dims = this.bindDims(inputs);
    const patterns = new Map<string, Pattern>();
    for (const p of this.manifest.params) {
      if (p.type.format === 'dense' || p.type.shape.length !== 2) continue;
      const t = inputs.tensors.get(p.name);
      if (!t) this.fail(`--input ${p.name}`, `missing input '${p.name}'`);
      if (t.format === 'dense') this.fail(`--input ${p.name}`, `'${p.name}' is ${p.type.format}: expected a sparse matrix, found a dense array`);
      const same = this.lastInputs?.tensors.get(p.name) === t ? this.patterns.get(p.name) : undefined;
      patterns.set(p.name, same ?? patternOf(t));
    }
    if (patterns.size !== this.patterns.size || [...patterns].some(([n, p]) => this.patterns.get(n) !== p)) this.cuts.clear();
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
      if (typeof values !== 'number') throw new Error(`wasm executor: '${name}' is a scalar; updateInput expects a number`);
      if (this.isDim(name) && values !== this.dims.get(name)) throw new Error(`wasm executor: '${name}' sizes a dimension; run execute(inputs) to change it`);
      const scalars = new Map(cur.scalars);
      scalars.set(name, values);
      this.current = { ...cur, scalars };
      if (this.regions.has(`D:${name}`)) writeValues(this.viewOf(`D:${name}`), [values], t.dtype);
    } else {
      if (typeof values === 'number') throw new Error(`wasm executor: '${name}' is a tensor; updateInput expects its values`);
      const old = cur.tensors.get(name)!;
      const data = values instanceof Float64Array ? values : Float64Array.from(values);
      let next: Tensor;
      if (t.format === 'dense') {
        const want = this.countOf(name);
        if (data.length !== want) throw new Error(`wasm executor: '${name}' holds ${want} values, got ${data.length}`);
        if (old.format !== 'dense') throw new Error(`wasm executor: '${name}' was given as a sparse file for a dense parameter; run execute(inputs) instead`);
        next = { format: 'dense', shape: old.shape, data };
        if (this.regions.has(`D:${name}`)) writeValues(this.viewOf(`D:${name}`), data, t.dtype);
      } else {
        if (old.format === 'dense') throw new Error(`wasm executor: '${name}' is sparse`);
        if (data.length !== old.values.length) throw new Error(`wasm executor: '${name}' has ${old.values.length} stored entries, got ${data.length} values`);
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
    this.lastInputs = holds ? { tensors: this.current.tensors, scalars: this.current.scalars, entries: this.entriesOf(this.current) } : undefined;
  }

  resultView(name: string): Float32Array | Float64Array | Int32Array | BigInt64Array {
    if (!this.executed) throw new Error('resultView() before execute()');
    const r = this.manifest.results.find((q) => q.name === name);
    if (!r) throw new Error(`wasm executor: kernel ${this.manifest.kernel} has no result '${name}'`);
    if (r.type.format !== 'dense' && r.type.shape.length >= 2) throw new Error(`wasm executor: '${name}' is sparse; read it with results()`);
    if (!this.defined.has(name)) this.fail(`kernel ${this.manifest.kernel}`, `'${name}' was never computed: the repeat that assigns it ran zero times`);
    return this.viewOf(`D:${name}`);
  }

  results(): WasmRunResult {
    if (!this.executed) throw new Error('results() before execute()');
    const outputs = new Map<string, Tensor>();
    for (const r of this.manifest.results) {
      if (!this.defined.has(r.name)) this.fail(`kernel ${this.manifest.kernel}`, `'${r.name}' was never computed: the repeat that assigns it ran zero times`);
      outputs.set(r.name, this.readResult(r.name, r.type));
    }
    return { outputs, dims: new Map(this.dims) };
  }

  private readResult(name: string, t: WasmValueType): Tensor {
    if (t.format === 'dense' || t.shape.length < 2) {
      const shape = t.shape.map((d) => (typeof d === 'number' ? d : this.dims.get(d)!));
      return { format: 'dense', shape, data: readValues(this.viewOf(`D:${name}`)) };
    }
    const root = this.manifest.roots[name] ?? name;
    const pat = this.patterns.get(root)!;
    const layouts = this.layoutsOf.get(name) ?? new Set(['csr' as const]);
    const layout = layouts.has('csr') ? 'csr' : 'csc';
    const inLayout = readValues(this.viewOf(`V:${name}:${layout}`));
    const ids = grouping(pat, layout).ids;
    let values = inLayout;
    if (ids) {
      values = new Float64Array(inLayout.length);
      for (let q = 0; q < ids.length; q++) values[ids[q]!] = inLayout[q]!;
    }
    return sparseTensor(pat, values, t.format);
  }

  private exec(steps: readonly WasmStep[], scalars: ReadonlyMap<string, number>): void {
    for (const s of steps) {
      if (s.kind === 'op') {
        this.runOp(this.opById.get(s.op)!);
        continue;
      }
      let n: number;
      if (typeof s.count === 'number') n = s.count;
      else {
        const v = scalars.get(s.count.param);
        if (v === undefined || !this.defined.has(s.count.param)) this.fail(`--param ${s.count.param}`, `repeat count '${s.count.param}' is not given`);
        n = v;
        if (!Number.isSafeInteger(n) || n < 0) this.fail(`--param ${s.count.param}`, `repeat count must be a non-negative integer, got ${n}`);
      }
      for (let t = 0; t < n; t++) this.exec(s.body, scalars);
    }
  }

  /** Arguments of one op's function: buffer offsets, then sizes. */
  private args(o: WasmOp): number[] {
    const keys = this.keys.get(o.op)!;
    const args = keys.map((k) => this.region(k).offset);
    for (const s of o.sizes) {
      const m = /^nnz\((.+)\)$/.exec(s);
      args.push(m ? this.nnzOf(this.manifest.roots[m[1]!] ?? m[1]!) : (this.dims.get(s) ?? 0));
    }
    return args;
  }

  private runOp(o: WasmOp): void {
    for (const v of this.reads.get(o.op)!) {
      if (!this.defined.has(v)) this.fail(`kernel ${this.manifest.kernel}`, `'${v}' was never computed: the repeat that assigns it ran zero times`);
    }
    let args = this.argCache.get(o.op);
    if (!args) {
      args = this.args(o);
      if (!this.swapping.has(o.op)) this.argCache.set(o.op, args);
    }
    const fn = this.fns.get(o.op)!;
    const rows = this.pool && o.splittable && o.splitRange !== undefined ? (typeof o.splitRange === 'number' ? o.splitRange : (this.dims.get(o.splitRange) ?? 0)) : 0;
    if (this.pool && rows >= MIN_SPLIT_ROWS) {
      const key = `${o.op}:${rows}`;
      let cuts = this.cuts.get(key);
      if (!cuts) {
        const bal = o.balanceBy;
        const pat = bal ? this.patterns.get(bal.root) : undefined;
        const ptr = bal && pat ? grouping(pat, bal.layout).ptr : undefined;
        cuts = balancedCuts(rows, this.pool.threads, ptr && ptr.length === rows + 1 ? ptr : undefined);
        this.cuts.set(key, cuts);
      }
      const a = args;
      this.pool.run(o.export, a, cuts, (lo, hi) => fn(...a, lo, hi));
    } else fn(...args, 0, FULL_HI);
    this.afterOp(o);
  }

  /** Makes the op's result current: swaps X and X.next, permutes a sparse result into its other layouts. */
  private afterOp(o: WasmOp): void {
    const outBuf = o.buffers.find((b) => b.name === o.out)!;
    const outKey = this.keys.get(o.op)![o.buffers.indexOf(outBuf)]!;
    let key = outKey;
    if (outKey.endsWith('.next')) {
      key = outKey.slice(0, -5);
      const a = this.cur.get(key)!;
      this.cur.set(key, this.cur.get(outKey)!);
      this.cur.set(outKey, a);
    }
    this.defined.add(o.result);
    if (outBuf.role !== 'values') return;
    const from = outBuf.layout ?? 'csr';
    const pat = this.patterns.get(this.manifest.roots[o.result] ?? o.result)!;
    for (const to of this.layoutsOf.get(o.result) ?? []) {
      if (to === from || !this.regions.has(`V:${o.result}:${to}`)) continue;
      const src = this.viewOf(key);
      const dst = this.viewOf(`V:${o.result}:${to}`);
      // dst[q'] = value of entry ids_to[q'] = src[inv_from[ids_to[q']]].
      const idsTo = grouping(pat, to).ids;
      const invFrom = inverse(grouping(pat, from));
      for (let q = 0; q < dst.length; q++) {
        const e = idsTo ? idsTo[q]! : q;
        (dst as Float64Array)[q] = (src as Float64Array)[invFrom ? invFrom[e]! : e]!;
      }
    }
  }
}

/** Instantiates a compiled kernel (WebAssembly only) and returns its executor. */
export async function createWasmExecutor(binary: Uint8Array, manifest: WasmManifest, opts: WasmExecutorOptions = {}): Promise<WasmExecutor> {
  const threads = opts.threads ?? 1;
  if (!Number.isSafeInteger(threads) || threads < 1) throw new Error(`wasm executor: threads must be an integer >= 1, got ${threads}`);
  if (threads > 1 && !manifest.sharedMemory) throw new Error('wasm executor: threads need a module compiled with shared memory');
  if (manifest.format !== 'dype-wasm-manifest' || manifest.version !== 1) throw new Error('wasm executor: not a dype wasm manifest (version 1)');
  const memory = new WebAssembly.Memory({ initial: 1, maximum: manifest.maxPages, shared: manifest.sharedMemory } as WebAssembly.MemoryDescriptor);
  const math: Record<string, (...a: number[]) => number> = {};
  for (const n of manifest.imports) {
    const f = HOST[n];
    if (!f) throw new Error(`wasm executor: the module imports an unknown host function math.${n}`);
    math[n] = f;
  }
  const module = await WebAssembly.compile(binary as Uint8Array<ArrayBuffer>);
  const instance = await WebAssembly.instantiate(module, { env: { memory }, math });
  const pool = threads > 1 ? await WasmThreadPool.create(module, memory, manifest.ops.map((o) => o.export), threads) : undefined;
  return new Executor(manifest, instance, memory, pool);
}
