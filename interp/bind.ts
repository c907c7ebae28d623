/**
 * Binds run-time inputs to a kernel's parameters: every input present and of
 * a usable kind, dims consistent across inputs, scalars well formed. All
 * problems are InputErrors naming the input's file.
 */
import type { Kernel } from '../ir/module.js';
import { dimToString, isIntDtype, type TensorType } from '../ir/types.js';
import { InputError } from '../runtime/errors.js';
import { MAX_ELEMENTS, type Tensor } from '../runtime/tensor.js';
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

function checkValues(name: string, src: string, type: TensorType, data: Float64Array): void {
  if (!isIntDtype(type.dtype) && type.dtype !== 'bool') return;
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (!Number.isInteger(v) || (type.dtype === 'bool' && v !== 0 && v !== 1))
      throw new InputError('DY3008', src, undefined, `'${name}' is ${type.dtype} but holds the value ${v}`);
  }
}

export function bindInputs(k: Kernel, inputs: KernelInputs): Bound {
  const src = inputs.sourceOf ?? ((n: string) => `--input ${n}`);
  const sizeLine = inputs.lineOf ?? ((): undefined => undefined);
  const env = new Map<string, Val>();
  const dims = new Map<string, number>();
  const dimFrom = new Map<string, string>();
  const known = new Set([...k.params.map((p) => p.name)]);
  for (const name of [...inputs.tensors.keys()]) {
    if (!known.has(name))
      throw new InputError(
        'DY3014',
        src(name),
        undefined,
        `kernel '${k.name}' has no parameter '${name}'; it takes ${k.params.map((p) => p.name).join(', ')}`,
      );
  }
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
      dims.set(name, v);
      dimFrom.set(name, `--param ${name}`);
    } else if (!known.has(name)) {
      throw new InputError(
        'DY3014',
        `--param ${name}`,
        undefined,
        `kernel '${k.name}' has no scalar parameter or dim '${name}'`,
      );
    }
  }
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
    if (p.type.format !== 'dense' && t.format === 'dense')
      throw new InputError(
        'DY3016',
        src(p.name),
        undefined,
        `'${p.name}' is ${p.type.format}: expected a coordinate (sparse) Matrix Market file, found a dense array`,
      );
    const shape = fitShape(shapeOf(t), rank);
    if (!shape)
      throw new InputError(
        'DY3007',
        src(p.name),
        sizeLine(p.name),
        `'${p.name}' has ${rank} dimension(s) but the input is ${shapeOf(t).join(' x ')}`,
      );
    p.type.shape.forEach((d, i) => {
      const got = shape[i]!;
      const what = `dimension ${i + 1} of '${p.name}'`;
      if (d.kind === 'lit') {
        if (d.value !== got)
          throw new InputError('DY3007', src(p.name), sizeLine(p.name), `${what} must be ${d.value}, found ${got}`);
        return;
      }
      const prev = dims.get(d.name);
      if (prev === undefined) {
        dims.set(d.name, got);
        dimFrom.set(d.name, what);
      } else if (prev !== got)
        throw new InputError(
          'DY3007',
          src(p.name),
          sizeLine(p.name),
          `dim '${dimToString(d)}' is ${prev} from ${dimFrom.get(d.name)} but ${got} from ${what}`,
        );
    });
    let val = fromTensor(t);
    if (val.kind === 'dense') val = { kind: 'dense', shape, data: val.data };
    else if (p.type.format === 'dense') {
      if (shape[0]! * shape[1]! > MAX_ELEMENTS)
        throw new InputError(
          'DY3031',
          src(p.name),
          undefined,
          `'${p.name}' is dense: ${shape[0]} x ${shape[1]} would hold ${shape[0]! * shape[1]!} elements; at most ${MAX_ELEMENTS} fit`,
        );
      const data = new Float64Array(shape[0]! * shape[1]!);
      const pat = val.pattern;
      for (let e = 0; e < pat.ri.length; e++) data[pat.ri[e]! * pat.cols + pat.ci[e]!] = val.values[e]!;
      val = { kind: 'dense', shape, data };
    }
    checkValues(p.name, src(p.name), p.type, val.kind === 'dense' ? val.data : val.values);
    env.set(p.name, val);
  }
  return { env, dims };
}
