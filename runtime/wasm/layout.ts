/**
 * What the manifest of a compiled kernel (manifest.ts) says about memory,
 * independent of where the memory is: the regions an input needs (dense
 * values, per pattern root and layout the pointers and indices, per sparse
 * value and layout the values; `X.next` beside X), their element types and
 * lengths for given dims and patterns, each op's sizes, the host data of the
 * inputs in storage format, and results read back as runtime tensors. The
 * wasm executor lays these regions out in one WebAssembly.Memory; the stage
 * engine (runtime/exec) in the memories of several devices.
 */
import { InputError } from '../errors.js';
import { dtypeMisfit } from '../dtype.js';
import { tensorProblem, type Tensor } from '../tensor.js';
import { groupedBy, tensorOfEntries, type EntryList } from '../entry-order.js';
import { inputEntryList } from '../entry-list.js';
import type { WasmBuffer, WasmElem, WasmManifest, WasmOp, WasmValueType } from './manifest.js';

export type View = Float32Array | Float64Array | Int32Array | BigInt64Array;

/** Stored-entry list of a pattern root and its groupings by row (CSR) and column (CSC). */
export interface Pattern extends EntryList {
  /** Per layout: pointers, and entry ids in layout order (undefined: identity). */
  groups: { csr?: Grouping; csc?: Grouping };
}

export interface Grouping {
  ptr: Int32Array;
  ids: Int32Array | undefined;
  /** Layout position of each entry id (undefined: identity). */
  inv?: Int32Array | undefined;
}

export const bytesOf = (e: WasmElem): number => (e === 'f64' || e === 'i64' ? 8 : 4);

export function view(buf: ArrayBufferLike, e: WasmElem, off: number, n: number): View {
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

/**
 * Writes float64 values into a storage view (bool as 0/1, i64 as BigInt). Returns the index (in `src`) of the first
 * value an integer or bool view cannot hold as it is (a fraction, one out of range, NaN: the store would truncate or
 * wrap it), or -1. Floats are not checked: an f32 store rounds, as f32 arithmetic does, and the command line's
 * readers refuse what the reference would keep (runtime/dtype.ts).
 */
export function writeValues(v: View, src: ArrayLike<number>, e: WasmElem, ids?: Int32Array): number {
  const n = v.length;
  const at = (q: number): number => (ids ? ids[q]! : q);
  if (v instanceof BigInt64Array) {
    for (let q = 0; q < n; q++) {
      const x = src[at(q)]!;
      if (!Number.isSafeInteger(x)) return at(q);
      v[q] = BigInt(x);
    }
    return -1;
  }
  if (e === 'bool') {
    for (let q = 0; q < n; q++) {
      const x = src[at(q)]!;
      if (x !== 0 && x !== 1) return at(q);
      v[q] = x;
    }
    return -1;
  }
  if (!ids && (src instanceof Float64Array || src instanceof Int32Array)) {
    v.set(src.length === n ? src : src.subarray(0, n));
  } else for (let q = 0; q < n; q++) v[q] = src[at(q)]!;
  // An int32 store keeps exactly the values it holds: any other comes back different (NaN as 0).
  if (v instanceof Int32Array && !(src instanceof Int32Array))
    for (let q = 0; q < n; q++) if (v[q] !== src[at(q)]) return at(q);
  return -1;
}

export function readValues(v: View): Float64Array {
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
  if (plain instanceof Float64Array) return plain;
  // set() between typed arrays converts in one native loop; Float64Array.from iterates in JavaScript.
  const out = new Float64Array(plain.length);
  out.set(plain);
  return out;
}

// ---- patterns ----

/**
 * A named input's checked entry list (runtime/entry-list.ts, the one the
 * reference interpreter takes too; a malformed pattern is the input's
 * DY3051) with room for its groupings by layout. O(nnz) when a tensor is
 * first laid out (a call with the previous call's very tensor reuses its
 * pattern).
 */
export function inputPattern(name: string, t: Tensor): Pattern {
  return { ...inputEntryList(`input ${name}`, t), groups: {} };
}

export function grouping(p: Pattern, layout: 'csr' | 'csc'): Grouping {
  const hit = p.groups[layout];
  if (hit) return hit;
  const g: Grouping = groupedBy(p, layout === 'csr' ? 'row' : 'col');
  return (p.groups[layout] = g);
}

export function inverse(g: Grouping): Int32Array | undefined {
  if (g.inv !== undefined || !g.ids) return g.inv;
  const inv = new Int32Array(g.ids.length);
  for (let q = 0; q < inv.length; q++) inv[g.ids[q]!] = q;
  return (g.inv = inv);
}

/** A sparse result as a tensor of the declared format (runtime/entry-order.ts, as the interpreter's toTensor). */
export function sparseTensor(p: Pattern, values: Float64Array, format: WasmValueType['format']): Tensor {
  return tensorOfEntries(p, values, format);
}

/** The memory region a manifest buffer lives in. */
export function regionKey(b: WasmBuffer, roots: Record<string, string>): string {
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

/** One region: element type and element count. */
export interface RegionSpec {
  elem: WasmElem;
  length: number;
}

/** What a run binds: the tensors and scalars given, and dims already bound (derived from the inputs when absent). */
export interface LayoutInputs {
  tensors: ReadonlyMap<string, Tensor>;
  scalars: ReadonlyMap<string, number>;
  dims?: ReadonlyMap<string, number>;
}

/** The memory facts of one kernel's manifest (per-input facts are arguments: dims, patterns). */
export class ProgramLayout {
  readonly opById: Map<string, WasmOp>;
  /** Region keys of each op's buffers, in buffer order. */
  readonly keys = new Map<string, string[]>();
  /** Layouts in which each sparse value is read or written. */
  readonly layoutsOf = new Map<string, Set<'csr' | 'csc'>>();
  /** Ops reading or writing a buffer that swaps with its `.next`. */
  readonly swapping = new Set<string>();
  /** Per op: the values its input buffers hold. */
  readonly reads = new Map<string, string[]>();
  /** Some op assigns a parameter: its copy in memory changes. */
  readonly writesParams: boolean;

  constructor(readonly manifest: WasmManifest) {
    this.writesParams = manifest.ops.some((o) => manifest.params.some((p) => p.name === o.result));
    this.opById = new Map(manifest.ops.map((o) => [o.op, o]));
    const nexts = new Set(
      manifest.ops.flatMap((o) => o.buffers.filter((b) => b.name.endsWith('.next')).map((b) => b.of)),
    );
    for (const o of manifest.ops) {
      this.keys.set(
        o.op,
        o.buffers.map((b) => regionKey(b, manifest.roots)),
      );
      if (o.buffers.some((b) => nexts.has(b.of) && (b.role === 'dense' || b.role === 'scalar' || b.role === 'values')))
        this.swapping.add(o.op);
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

  fail(src: string, msg: string): never {
    throw new InputError('DY3015', src, undefined, msg);
  }

  isDim(n: string): boolean {
    return this.manifest.params.some((p) => p.type.shape.includes(n));
  }

  bindDims(inputs: LayoutInputs): Map<string, number> {
    const dims = new Map<string, number>(inputs.dims ?? []);
    for (const [n, v] of inputs.scalars) if (!dims.has(n) && this.isDim(n)) dims.set(n, v);
    for (const p of this.manifest.params) {
      const shape = p.type.shape;
      if (shape.length === 0) continue;
      const t = inputs.tensors.get(p.name);
      if (!t) this.fail(`--input ${p.name}`, `missing input '${p.name}'`);
      // Again here, not only in the guarded runtime's bindInputs: an executor may be driven directly (dype run).
      const problem = tensorProblem(t);
      if (problem) throw new InputError('DY3051', `input ${p.name}`, undefined, problem);
      const got = t.format === 'dense' ? t.shape : [t.rows, t.cols];
      // A vector may come as n x 1 or 1 x n.
      const fit = shape.length === 1 && got.length === 2 ? [got[0]! * got[1]!] : got;
      if (fit.length !== shape.length)
        this.fail(
          `--input ${p.name}`,
          `'${p.name}' has ${shape.length} dimension(s) but the input is ${got.join(' x ')}`,
        );
      shape.forEach((d, i) => {
        if (typeof d === 'number') {
          if (d !== fit[i])
            this.fail(`--input ${p.name}`, `dimension ${i + 1} of '${p.name}' must be ${d}, found ${fit[i]}`);
        } else if (dims.has(d)) {
          if (dims.get(d) !== fit[i])
            this.fail(
              `--input ${p.name}`,
              `dim '${d}' is ${dims.get(d)} but ${fit[i]} from dimension ${i + 1} of '${p.name}'`,
            );
        } else dims.set(d, fit[i]!);
      });
    }
    return dims;
  }

  /** The pattern of every sparse parameter; `reuse` may return the one computed for the same tensor before. */
  patternsOf(inputs: LayoutInputs, reuse?: (name: string, t: Tensor) => Pattern | undefined): Map<string, Pattern> {
    const patterns = new Map<string, Pattern>();
    for (const p of this.manifest.params) {
      if (p.type.format === 'dense' || p.type.shape.length !== 2) continue;
      const t = inputs.tensors.get(p.name);
      if (!t) this.fail(`--input ${p.name}`, `missing input '${p.name}'`);
      if (t.format === 'dense')
        this.fail(
          `--input ${p.name}`,
          `'${p.name}' is ${p.type.format}: expected a sparse matrix, found a dense array`,
        );
      patterns.set(p.name, reuse?.(p.name, t) ?? inputPattern(p.name, t));
    }
    return patterns;
  }

  countOf(v: string, dims: ReadonlyMap<string, number>): number {
    const t = this.manifest.values[v];
    if (!t) throw new Error(`wasm executor: unknown value '${v}'`);
    return t.shape.reduce<number>((a, d) => a * (typeof d === 'number' ? d : (dims.get(d) ?? 0)), 1);
  }

  /** Every region an input needs, by key (sorted), for these dims and patterns. */
  regions(dims: ReadonlyMap<string, number>, patterns: ReadonlyMap<string, Pattern>): Map<string, RegionSpec> {
    const want = new Map<string, RegionSpec>();
    const roots = this.manifest.roots;
    for (const o of this.manifest.ops) {
      o.buffers.forEach((b, i) => {
        const key = this.keys.get(o.op)![i]!;
        let length: number;
        if (b.role === 'dense' || b.role === 'scalar') length = this.countOf(b.of, dims);
        else {
          const root = roots[b.of] ?? b.of;
          const p = patterns.get(root);
          if (!p) throw new Error(`wasm executor: no pattern for '${b.of}' (root '${root}')`);
          if (b.role === 'values' || b.role === 'colIdx' || b.role === 'rowIdx') length = p.ri.length;
          else length = (b.role === 'rowPtr' ? p.rows : p.cols) + 1;
        }
        want.set(key, { elem: b.elem, length });
      });
    }
    // Dense results read back even if no op reads them.
    for (const r of this.manifest.results)
      if (r.type.format === 'dense' && !want.has(`D:${r.name}`))
        want.set(`D:${r.name}`, { elem: r.type.dtype, length: this.countOf(r.name, dims) });
    // A value X written as X.next needs both regions.
    for (const k of [...want.keys()]) {
      if (k.endsWith('.next')) {
        const base = k.slice(0, -5);
        if (!want.has(base)) want.set(base, want.get(k)!);
      }
    }
    return new Map([...want.keys()].sort().map((k) => [k, want.get(k)!]));
  }

  /** An op's size arguments: dims, and nnz(X) as the stored entries of X's pattern root. */
  sizesOf(o: WasmOp, dims: ReadonlyMap<string, number>, patterns: ReadonlyMap<string, Pattern>): number[] {
    return o.sizes.map((s) => {
      const m = /^nnz\((.+)\)$/.exec(s);
      return m ? (patterns.get(this.manifest.roots[m[1]!] ?? m[1]!)?.ri.length ?? 0) : (dims.get(s) ?? 0);
    });
  }

  /** The root whose pattern an op's sparse operand shares (its first sparse buffer's), if any. */
  sparseRootOf(o: WasmOp): string | undefined {
    const b = o.buffers.find((x) => x.role !== 'dense' && x.role !== 'scalar');
    return b ? (this.manifest.roots[b.of] ?? b.of) : undefined;
  }

  /** The rows of the loop a split of `o` cuts (undefined: the op cannot be split). */
  splitRows(o: WasmOp, dims: ReadonlyMap<string, number>): number | undefined {
    if (!o.splittable || o.splitRange === undefined) return undefined;
    return typeof o.splitRange === 'number' ? o.splitRange : dims.get(o.splitRange);
  }

  /**
   * Writes the inputs' host data into the regions `viewOf` gives for the keys
   * `has` accepts: dense values (a sparse file for a dense parameter is
   * densified), scalars, and per sparse parameter and layout its pointers,
   * indices and values, in storage format.
   */
  writeInputs(
    inputs: LayoutInputs,
    patterns: ReadonlyMap<string, Pattern>,
    has: (key: string) => boolean,
    viewOf: (key: string) => View,
  ): void {
    for (const p of this.manifest.params) {
      const t = p.type;
      // The values a backend's integer store would truncate or wrap: the reference keeps them, so they are refused.
      const write = (v: View, src: ArrayLike<number>, ids?: Int32Array): void => {
        const bad = writeValues(v, src, t.dtype, ids);
        if (bad >= 0)
          throw new InputError(
            'DY3042',
            `input ${p.name}`,
            undefined,
            `'${p.name}' is ${t.dtype}, but ${t.shape.length === 0 ? 'its value' : `its element ${bad}`} is ${String(src[bad])}: ${dtypeMisfit(t.dtype, src[bad]!) ?? 'not a value it holds'}`,
          );
      };
      if (t.shape.length === 0) {
        const v = inputs.scalars.get(p.name);
        if (v === undefined) this.fail(`--param ${p.name}`, `missing scalar '${p.name}'`);
        if (has(`D:${p.name}`)) write(viewOf(`D:${p.name}`), [v]);
        continue;
      }
      const x = inputs.tensors.get(p.name)!;
      if (t.format === 'dense') {
        if (!has(`D:${p.name}`)) continue;
        const v = viewOf(`D:${p.name}`);
        if (x.format === 'dense') write(v, x.data);
        else {
          // A sparse file for a dense parameter: densify.
          const pat = inputPattern(p.name, x);
          const data = new Float64Array(pat.rows * pat.cols);
          for (let e = 0; e < pat.ri.length; e++) data[pat.ri[e]! * pat.cols + pat.ci[e]!] = x.values[e]!;
          write(v, data);
        }
        continue;
      }
      if (x.format === 'dense')
        this.fail(`--input ${p.name}`, `'${p.name}' is ${t.format}: expected a sparse matrix, found a dense array`);
      const pat = patterns.get(p.name)!;
      for (const layout of ['csr', 'csc'] as const) {
        const ptrKey = `S:${p.name}:${layout}:ptr`;
        const idxKey = `S:${p.name}:${layout}:idx`;
        const valKey = `V:${p.name}:${layout}`;
        if (!has(ptrKey) && !has(idxKey) && !has(valKey)) continue;
        const g = grouping(pat, layout);
        if (has(ptrKey)) (viewOf(ptrKey) as Int32Array).set(g.ptr);
        if (has(idxKey)) {
          const minor = layout === 'csr' ? pat.ci : pat.ri;
          const v = viewOf(idxKey) as Int32Array;
          if (g.ids) for (let q = 0; q < v.length; q++) v[q] = minor[g.ids[q]!]!;
          else v.set(minor);
        }
        if (has(valKey)) write(viewOf(valKey), x.values, g.ids);
      }
    }
  }

  /** The input regions (keys) `writeInputs` fills, of those in `regions`. */
  inputKeys(regions: ReadonlyMap<string, RegionSpec>): string[] {
    const out: string[] = [];
    for (const p of this.manifest.params) {
      const cand =
        p.type.shape.length === 0 || p.type.format === 'dense'
          ? [`D:${p.name}`]
          : (['csr', 'csc'] as const).flatMap((l) => [
              `S:${p.name}:${l}:ptr`,
              `S:${p.name}:${l}:idx`,
              `V:${p.name}:${l}`,
            ]);
      for (const k of cand) if (regions.has(k)) out.push(k);
    }
    return out;
  }

  /** Result `name` as a runtime tensor, from its region(s). */
  readResult(
    name: string,
    t: WasmValueType,
    dims: ReadonlyMap<string, number>,
    patterns: ReadonlyMap<string, Pattern>,
    viewOf: (key: string) => View,
  ): Tensor {
    if (t.format === 'dense' || t.shape.length < 2) {
      const shape = t.shape.map((d) => (typeof d === 'number' ? d : dims.get(d)!));
      return { format: 'dense', shape, data: readValues(viewOf(`D:${name}`)) };
    }
    const layout = this.resultLayout(name);
    const pat = patterns.get(this.manifest.roots[name] ?? name)!;
    const inLayout = readValues(viewOf(`V:${name}:${layout}`));
    const ids = grouping(pat, layout).ids;
    let values = inLayout;
    if (ids) {
      values = new Float64Array(inLayout.length);
      for (let q = 0; q < ids.length; q++) values[ids[q]!] = inLayout[q]!;
    }
    return sparseTensor(pat, values, t.format);
  }

  /** The layout a sparse result is read back from. */
  resultLayout(name: string): 'csr' | 'csc' {
    const layouts = this.layoutsOf.get(name) ?? new Set(['csr' as const]);
    return layouts.has('csr') ? 'csr' : 'csc';
  }

  /** The out buffer of an op, and its region key. */
  outOf(o: WasmOp): { buf: WasmBuffer; key: string } {
    const buf = o.buffers.find((b) => b.name === o.out)!;
    return { buf, key: this.keys.get(o.op)![o.buffers.indexOf(buf)]! };
  }

  /** The other layouts a sparse result is read in after an op writes it in `from` (each a region to permute into). */
  otherLayouts(o: WasmOp, has: (key: string) => boolean): { from: 'csr' | 'csc'; to: 'csr' | 'csc'; key: string }[] {
    const { buf } = this.outOf(o);
    if (buf.role !== 'values') return [];
    const from = buf.layout ?? 'csr';
    return [...(this.layoutsOf.get(o.result) ?? [])]
      .filter((to) => to !== from && has(`V:${o.result}:${to}`))
      .map((to) => ({ from, to, key: `V:${o.result}:${to}` }));
  }
}

/** dst (layout `to`) from src (layout `from`) of one pattern: dst[q'] = src[inv_from[ids_to[q']]]. */
export function permuteValues(pat: Pattern, from: 'csr' | 'csc', to: 'csr' | 'csc', src: View, dst: View): void {
  const idsTo = grouping(pat, to).ids;
  const invFrom = inverse(grouping(pat, from));
  for (let q = 0; q < dst.length; q++) {
    const e = idsTo ? idsTo[q]! : q;
    (dst as Float64Array)[q] = (src as Float64Array)[invFrom ? invFrom[e]! : e]!;
  }
}
