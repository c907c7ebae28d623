/**
 * Binds run-time inputs to a kernel's parameters: every input present and of
 * a usable kind, dims consistent across inputs, scalars well formed. All
 * problems are InputErrors naming the input's file.
 */
import type { Kernel } from '../ir/module.js';
import { dimToString, type TensorType } from '../ir/types.js';
import { dtypeMisfit } from '../runtime/dtype.js';
import { InputError } from '../runtime/errors.js';
import { MAX_ELEMENTS, tensorProblem, type Tensor } from '../runtime/tensor.js';
import { fromTensor, type Val } from './values.js';

export interface KernelInputs {
  tensors: ReadonlyMap<string, Tensor>;
  /** Scalar parameters, and dims given explicitly (e.g. for generated inputs). */
  scalars: ReadonlyMap<string, number>;
  /** Where each input came from, for messages (defaults to `--input NAME`). */
  sourceOf?: (name: string) => string;
  /** The line of that source which gave the input's sizes (a Matrix Market file's size line), for shape errors. */
  lineOf?: (name: string) => number | undefined;
}

export interface Bound {
  env: Map<string, Val>;
  dims: Map<string, number>;
}

function shapeOf(t: Tensor): number[] {
  return t.format === 'dense' ? t.shape : [t.rows, t.cols];
}

/** Accepts an n x 1 or 1 x n array for a vector, and 1 x 1 for a scalar. */
function fitShape(shape: number[], rank: number): number[] | undefined {
  if (shape.length === rank) return shape;
  if (rank === 1 && shape.length === 2 && (shape[1] === 1 || shape[0] === 1)) return [shape[0]! * shape[1]!];
  if (rank === 0 && shape.every((d) => d === 1)) return [];
  return undefined;
}

function checkValues(name: string, src: string, type: TensorType, data: ArrayLike<number>): void {
  if (type.dtype === 'f64') return;
  for (let i = 0; i < data.length; i++) {
    const why = dtypeMisfit(type.dtype, data[i]!);
    if (why)
      throw new InputError(
        'DY3008',
        src,
        undefined,
        `'${name}' is ${type.dtype} but holds the value ${data[i]} (${why})`,
      );
  }
}

/**
 * The dims a kernel's inputs bind, each the same wherever it appears: dims
 * given as scalars (--param) first, then each input's shape as it comes. A
 * dim two inputs (or an input and --param) give different sizes, a literal
 * dim an input does not match, or an input of the wrong rank is DY3007
 * naming the input and its size line; a dim given as a scalar that is not a
 * non-negative integer is DY3015. One place, so that `run` (bindInputs) and
 * `plan`/`ir --input` (cli/planning.ts) refuse the same inputs.
 */
export class DimBinder {
  readonly dims = new Map<string, number>();
  private readonly from = new Map<string, string>();
  private readonly src: (name: string) => string;
  private readonly sizeLine: (name: string) => number | undefined;

  constructor(k: Kernel, inputs: KernelInputs) {
    this.src = inputs.sourceOf ?? ((n: string) => `--input ${n}`);
    this.sizeLine = inputs.lineOf ?? ((): undefined => undefined);
    const known = new Set(k.params.map((p) => p.name));
    const dimSyms = new Set(k.params.flatMap((p) => p.type.shape.flatMap((d) => (d.kind === 'sym' ? [d.name] : []))));
    for (const [name, v] of inputs.scalars) {
      if (dimSyms.has(name)) {
        if (!Number.isSafeInteger(v) || v < 0)
          throw new InputError(
            'DY3015',
            `--param ${name}`,
            undefined,
            `dim '${name}' must be a non-negative integer, got ${v}`,
          );
        this.dims.set(name, v);
        this.from.set(name, `--param ${name}`);
      } else if (!known.has(name)) {
        throw new InputError(
          'DY3014',
          `--param ${name}`,
          undefined,
          `kernel '${k.name}' has no scalar parameter or dim '${name}'`,
        );
      }
    }
  }

  /** Binds parameter `name` of type `type` to `t`'s shape; returns that shape at the parameter's rank. */
  bind(name: string, type: TensorType, t: Tensor): number[] {
    const rank = type.shape.length;
    const shape = fitShape(shapeOf(t), rank);
    if (!shape)
      throw new InputError(
        'DY3007',
        this.src(name),
        this.sizeLine(name),
        `'${name}' has ${rank} dimension(s) but the input is ${shapeOf(t).join(' x ')}`,
      );
    type.shape.forEach((d, i) => {
      const got = shape[i]!;
      const what = `dimension ${i + 1} of '${name}'`;
      const mismatch = (why: string): InputError => new InputError('DY3007', this.src(name), this.sizeLine(name), why);
      if (d.kind === 'lit') {
        if (d.value !== got) throw mismatch(`${what} must be ${d.value}, found ${got}`);
        return;
      }
      const prev = this.dims.get(d.name);
      if (prev === undefined) {
        this.dims.set(d.name, got);
        this.from.set(d.name, what);
      } else if (prev !== got)
        throw mismatch(`dim '${dimToString(d)}' is ${prev} from ${this.from.get(d.name)} but ${got} from ${what}`);
    });
    return shape;
  }
}

export function bindInputs(k: Kernel, inputs: KernelInputs): Bound {
  return bindOrCheck(k, inputs, true);
}

/**
 * bindInputs' checks and the dims bound, without building the
 * interpreter's values (a sparse input's expanded row indices, a densified
 * copy): what a backend that lays the tensors out itself needs (`dype run`
 * on wasm or native), at no O(nnz) allocation.
 */
export function checkInputs(k: Kernel, inputs: KernelInputs): Map<string, number> {
  return bindOrCheck(k, inputs, false).dims;
}

function bindOrCheck(k: Kernel, inputs: KernelInputs, build: boolean): Bound {
  const src = inputs.sourceOf ?? ((n: string) => `--input ${n}`);
  const env = new Map<string, Val>();
  const known = new Set([...k.params.map((p) => p.name)]);
  for (const name of [...inputs.tensors.keys()]) {
    if (!known.has(name))
      throw new InputError(
        'DY3014',
        src(name),
        undefined,
        `kernel '${k.name}' has no parameter '${name}'; ${k.params.length > 0 ? `it takes ${k.params.map((p) => p.name).join(', ')}` : 'it takes none'}`,
      );
  }
  const binder = new DimBinder(k, inputs);
  for (const p of k.params) {
    const rank = p.type.shape.length;
    if (rank === 0) {
      const v = inputs.scalars.get(p.name);
      if (v === undefined)
        throw new InputError(
          'DY3013',
          `--param ${p.name}`,
          undefined,
          `missing scalar '${p.name}' (${p.type.dtype}): pass --param ${p.name}=VALUE`,
        );
      const data = Float64Array.of(v);
      checkValues(p.name, `--param ${p.name}`, p.type, data);
      env.set(p.name, { kind: 'dense', shape: [], data });
      continue;
    }
    const t = inputs.tensors.get(p.name);
    if (!t)
      throw new InputError(
        'DY3013',
        `--input ${p.name}`,
        undefined,
        `missing input '${p.name}' (${p.type.format}<${p.type.dtype}>): pass --input ${p.name}=FILE`,
      );
    const problem = tensorProblem(t);
    if (problem) throw new InputError('DY3051', src(p.name), undefined, problem);
    if (p.type.format !== 'dense' && t.format === 'dense')
      throw new InputError(
        'DY3016',
        src(p.name),
        undefined,
        `'${p.name}' is ${p.type.format}: expected a coordinate (sparse) Matrix Market file, found a dense array`,
      );
    const shape = binder.bind(p.name, p.type, t);
    if (t.format !== 'dense' && p.type.format === 'dense' && shape[0]! * shape[1]! > MAX_ELEMENTS)
      throw new InputError(
        'DY3031',
        src(p.name),
        undefined,
        `'${p.name}' is dense: ${shape[0]} x ${shape[1]} would hold ${shape[0]! * shape[1]!} elements; at most ${MAX_ELEMENTS} fit`,
      );
    if (!build) {
      checkValues(p.name, src(p.name), p.type, t.format === 'dense' ? t.data : t.values);
      continue;
    }
    let val = fromTensor(t, src(p.name));
    if (val.kind === 'dense') val = { kind: 'dense', shape, data: val.data };
    else if (p.type.format === 'dense') {
      const data = new Float64Array(shape[0]! * shape[1]!);
      const pat = val.pattern;
      for (let e = 0; e < pat.ri.length; e++) data[pat.ri[e]! * pat.cols + pat.ci[e]!] = val.values[e]!;
      val = { kind: 'dense', shape, data };
    }
    checkValues(p.name, src(p.name), p.type, val.kind === 'dense' ? val.data : val.values);
    env.set(p.name, val);
  }
  return { env, dims: binder.dims };
}
