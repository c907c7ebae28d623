/** Checking a runtime call's inputs against the kernel and binding them for the planner. */
import { dtypeMisfit } from '../dtype.js';
import { malformedInput } from '../entry-list.js';
import { InputError } from '../errors.js';
import { SampledFeatures } from '../features/quick.js';
import { sparseFeaturesOf } from '../guards/features.js';
import type { Binding } from '../plan/bind.js';
import { REQUIRED_FEATURES, type SparseFeatures } from '../plan/types.js';
import { MAX_ELEMENTS, tensorProblem, type SparseMatrix, type Tensor } from '../tensor.js';
import type { RuntimeInputs, RuntimeParam } from './types.js';

export interface BoundInputs {
  tensors: Map<string, Tensor>;
  scalars: Map<string, number>;
  binding: Binding;
}

/**
 * The tensor's shape at the parameter's rank: a rank-1 parameter takes a vector given as [n], or as an n x 1 or 1 x n
 * matrix (a Matrix Market vector), as the reference interpreter binds it (interp/bind.ts fitShape); any other shape
 * is returned as it is, for the rank error.
 */
function shapeOf(t: Tensor, rank: number): number[] {
  const shape = t.format !== 'dense' ? [t.rows, t.cols] : t.shape;
  return rank === 1 && shape.length === 2 && (shape[0] === 1 || shape[1] === 1) ? [shape[0]! * shape[1]!] : shape;
}

/** What a value that is not a number is, for the message. */
function whatIs(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v !== 'object') return `a ${typeof v}`;
  if (Array.isArray(v)) return 'an array';
  const f = (v as { format?: unknown }).format;
  return typeof f === 'string' ? `a ${f} tensor` : 'an object';
}

/**
 * Features are cached per pattern: a CSR input's column-index and
 * row-pointer arrays (a new tensor with the same pattern, say new values,
 * costs nothing), another format's index arrays with its sizes. Inputs are treated as
 * immutable: a pattern changed in place is caught only where its shape or
 * entry count moved (an O(1) check); pass new arrays for a new pattern. A
 * pattern seen for the first time gets bounded-cost sampled features
 * (runtime/features/quick.ts: row statistics from at most 256 rows'
 * pointers, the locality score only when something reads it) when it is
 * CSR, exact ones otherwise (CSC and COO have no row pointers to sample).
 */
/** Keyed by the column (CSC: row) indices; `rowPtr` is the other index array (CSC's column pointers, COO's row indices). */
const featureCache = new WeakMap<object, { rowPtr: Int32Array; f: SparseFeatures }>();

/** The features the guards test (every required field), each a finite number: one that is not would go one way at every test of the tree, silently. */
const CHECKED: readonly (keyof SparseFeatures)[] = REQUIRED_FEATURES;
/** What a sampled record holds before any row is read. */
const CHECKED_AT_ONCE: readonly (keyof SparseFeatures)[] = ['rows', 'cols', 'nnz', 'rowLenMean'];

/**
 * A new pattern's features; a RangeError from them (pointers that
 * decrease, an index out of range) is the input's DY3051, and so is a
 * feature that is not finite. Exact features are checked here; sampled
 * ones (`lazy`) check their shape here and their row pointers when a
 * statistic is first read, which is finite by construction (the locality
 * score too: a share, 0 without pairs).
 */
function computed(name: string, v: SparseMatrix, make: () => SparseFeatures, lazy = false): SparseFeatures {
  let f: SparseFeatures;
  try {
    f = make();
  } catch (e) {
    if (e instanceof RangeError) throw malformedInput(`input ${name}`, v.format, e);
    throw e;
  }
  for (const k of lazy ? CHECKED_AT_ONCE : CHECKED)
    if (!Number.isFinite(f[k]))
      throw new InputError(
        'DY3051',
        `input ${name}`,
        undefined,
        `its feature ${k} is ${String(f[k])}, not a finite number: not a well-formed ${v.format} matrix`,
      );
  return f;
}

export function inputFeatures(v: SparseMatrix, name: string): SparseFeatures {
  if (v.format !== 'csr') {
    // Keyed like CSR's, by the index arrays with the sizes: an object given other arrays or sizes is another input.
    const [outer, inner] = v.format === 'csc' ? [v.colPtr, v.rowIdx] : [v.rowIdx, v.colIdx];
    let c = featureCache.get(inner);
    if (!c || c.rowPtr !== outer || c.f.rows !== v.rows || c.f.cols !== v.cols || c.f.nnz !== v.values.length)
      featureCache.set(inner, (c = { rowPtr: outer, f: computed(name, v, () => sparseFeaturesOf(v, 2)) }));
    return c.f;
  }
  let c = featureCache.get(v.colIdx);
  if (
    !c ||
    c.rowPtr !== v.rowPtr ||
    c.f.rows !== v.rows ||
    c.f.cols !== v.cols ||
    c.f.nnz !== v.rowPtr[v.rows]! - v.rowPtr[0]!
  )
    featureCache.set(
      v.colIdx,
      (c = {
        rowPtr: v.rowPtr,
        f: computed(
          name,
          v,
          () =>
            new SampledFeatures(v, 0, (e) => {
              throw malformedInput(`input ${name}`, v.format, e);
            }),
          true,
        ),
      }),
    );
  return c.f;
}

export function bindInputs(kernel: string, params: readonly RuntimeParam[], inputs: RuntimeInputs): BoundInputs {
  const tensors = new Map<string, Tensor>();
  const scalars = new Map<string, number>();
  const dims = new Map<string, number>();
  const sparse = new Map<string, SparseFeatures>();
  const bad = (name: string, why: string): never => {
    throw new InputError('DY3042', `input ${name} of kernel ${kernel}`, undefined, why);
  };
  for (const name of Object.keys(inputs))
    if (!params.some((p) => p.name === name))
      throw new InputError(
        'DY3014',
        `input ${name}`,
        undefined,
        `kernel '${kernel}' has no parameter '${name}'; its parameters are ${params.map((p) => p.name).join(', ')}`,
      );
  for (const p of params) {
    const v = inputs[p.name];
    if (v === undefined)
      throw new InputError('DY3013', `input ${p.name}`, undefined, `kernel '${kernel}' needs input '${p.name}'`);
    if (p.kind === 'scalar') {
      if (typeof v !== 'number' || Number.isNaN(v))
        bad(p.name, `expected a number, found ${typeof v === 'number' ? 'NaN' : whatIs(v)}`);
      const misfit = p.dtype === undefined ? undefined : dtypeMisfit(p.dtype, v as number);
      if (misfit) bad(p.name, `'${p.name}' is ${p.dtype}: ${String(v)} is ${misfit}`);
      scalars.set(p.name, v as number);
      continue;
    }
    if (typeof v === 'number') return bad(p.name, `expected a ${p.kind} tensor, found a number`);
    if (typeof v !== 'object' || v === null)
      return bad(p.name, `expected a ${p.kind} tensor, found ${v === null ? 'null' : typeof v}`);
    const problem = tensorProblem(v);
    if (problem) throw new InputError('DY3051', `input ${p.name} of kernel ${kernel}`, undefined, problem);
    if ((p.kind === 'sparse') !== (v.format !== 'dense')) bad(p.name, `expected a ${p.kind} tensor, found ${v.format}`);
    if (v.format === 'dense' && v.data.length > MAX_ELEMENTS)
      throw new InputError(
        'DY3031',
        `input ${p.name} of kernel ${kernel}`,
        undefined,
        `a dense [${v.shape.join(', ')}] tensor of ${v.data.length} elements; at most ${MAX_ELEMENTS} fit`,
      );
    const shape = shapeOf(v, p.shape.length);
    if (shape.length !== p.shape.length)
      bad(p.name, `expected rank ${p.shape.length}, found shape [${shape.join(', ')}]`);
    p.shape.forEach((d, i) => {
      const n = shape[i]!;
      if (typeof d === 'number') {
        if (n !== d) bad(p.name, `dimension ${i + 1} must be ${d}, found ${n}`);
      } else if (dims.has(d) && dims.get(d) !== n) {
        // Where the dim was bound: an earlier dimension of this input (a square csr[n, n]) or an earlier input.
        const at = p.shape.indexOf(d);
        bad(
          p.name,
          at < i
            ? `dimension ${i + 1} is ${d}, which dimension ${at + 1} makes ${dims.get(d)}, found ${n}`
            : `dimension ${i + 1} is ${d} = ${dims.get(d)} from an earlier input, found ${n}`,
        );
      } else dims.set(d, n);
    });
    tensors.set(p.name, v);
    if (v.format !== 'dense') sparse.set(p.name, inputFeatures(v, p.name));
  }
  return { tensors, scalars, binding: { sparse, dims, scalars } };
}

/**
 * bindInputs for a stream of calls, where the same tensors come back call after call (new values in the same
 * arrays, announced with GuardedRuntime.updated, or the same inputs again: the common case). A binding reads no
 * values, so it stays right for them. A call whose every input is the previous call's own object
 * (or the same number), with the same O(1) facts bindInputs checks (a dense tensor's data array, its length and
 * shape; a sparse input's features record as inputFeatures finds it, which re-checks its pointer arrays, shape and
 * entry count; its values array and length) and no other key, gets the previous call's binding: building the four
 * maps and checking every input again was half of a repeated pattern's whole decision (about 0.6 of 1.2 us hot,
 * docs/PERFORMANCE.md). Anything else binds afresh, with bindInputs' errors.
 */
export class InputBinder {
  private last:
    | {
        values: (Tensor | number)[];
        /** Per input: its data (dense) or values (sparse) array, and that array's length. */
        arrays: (ArrayLike<number> | undefined)[];
        lengths: number[];
        /** Per dense input: its shape, copied. */
        shapes: (readonly number[] | undefined)[];
        keys: number;
        b: BoundInputs;
      }
    | undefined;

  constructor(
    private readonly kernel: string,
    private readonly params: readonly RuntimeParam[],
  ) {}

  bind(inputs: RuntimeInputs): BoundInputs {
    // An application passing null (or a tensor alone) got a bare TypeError from the first property read.
    if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs))
      throw new InputError(
        'DY3042',
        `the inputs of kernel ${this.kernel}`,
        undefined,
        `expected an object of inputs by parameter name (${this.params.map((p) => p.name).join(', ')}), got ${inputs === null ? 'null' : Array.isArray(inputs) ? 'an array' : typeof inputs}`,
      );
    const last = this.last;
    if (last && this.same(inputs, last)) return last.b;
    const b = bindInputs(this.kernel, this.params, inputs);
    const values = this.params.map((p) => inputs[p.name]!);
    this.last = {
      values,
      arrays: values.map((v) => (typeof v === 'number' ? undefined : v.format === 'dense' ? v.data : v.values)),
      lengths: values.map((v) => (typeof v === 'number' ? 0 : v.format === 'dense' ? v.data.length : v.values.length)),
      shapes: values.map((v) => (typeof v !== 'number' && v.format === 'dense' ? [...v.shape] : undefined)),
      keys: ownKeys(inputs),
      b,
    };
    return b;
  }

  private same(inputs: RuntimeInputs, last: NonNullable<InputBinder['last']>): boolean {
    const params = this.params;
    for (let i = 0; i < params.length; i++) {
      const p = params[i]!;
      const v = inputs[p.name];
      // Object.is: a scalar changed from 0 to -0 (or back) is another input (x / s changes sign of infinity).
      if (!Object.is(v, last.values[i])) return false;
      if (typeof v === 'number') continue;
      if (v === undefined) return false;
      if (v.format === 'dense') {
        const shape = last.shapes[i]!;
        if (v.data !== last.arrays[i] || v.data.length !== last.lengths[i] || v.shape.length !== shape.length)
          return false;
        for (let k = 0; k < shape.length; k++) if (v.shape[k] !== shape[k]) return false;
      } else if (
        v.values !== last.arrays[i] ||
        v.values.length !== last.lengths[i] ||
        inputFeatures(v, p.name) !== last.b.binding.sparse.get(p.name)
      )
        return false;
    }
    return ownKeys(inputs) === last.keys;
  }
}

/** How many keys a call's inputs have (Object.keys' count, without the array it would build on every call). */
function ownKeys(inputs: RuntimeInputs): number {
  let keys = 0;
  for (const k in inputs) if (Object.prototype.hasOwnProperty.call(inputs, k)) keys++;
  return keys;
}
