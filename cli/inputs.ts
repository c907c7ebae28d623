/**
 * `--input NAME=PATH|@GENERATOR`, `--param NAME=VALUE` and `--out NAME=PATH`:
 * parsed, files loaded in the parameter's storage format, and dense inputs
 * generated where asked (their sizes from dims bound by other inputs or by
 * --param). Generators: @random[:SEED] (uniform in [-1, 1)), @ones, @zeros,
 * @const:V, and @source:K (0 at index K, +inf elsewhere: a shortest-path start).
 */
import type { Kernel } from '../ir/module.js';
import type { Dtype } from '../ir/types.js';
import { dtypeMisfit } from '../runtime/dtype.js';
import { InputError } from '../runtime/errors.js';
import { toCoo, toCsc, toCsr, toDense } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';
import type { MtxData } from '../runtime/io/mtx-data.js';
import { Rng, seedFor } from '../runtime/random.js';
import { MAX_ELEMENTS, type Tensor } from '../runtime/tensor.js';
import { usage } from './errors.js';

export interface Assignment {
  name: string;
  value: string;
}

export function parseAssignments(items: readonly string[], flag: string): Assignment[] {
  const out: Assignment[] = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0 || eq === item.length - 1) throw usage(`${flag} expects NAME=VALUE, got '${item}'`);
    const name = item.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw usage(`${flag}: '${name}' is not a valid name`);
    if (out.some((a) => a.name === name)) throw usage(`${flag} ${name} is given twice`);
    out.push({ name, value: item.slice(eq + 1) });
  }
  return out;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/;

/** What a scalar's text becomes: a parameter of this dtype, a dim, or (undefined) a name the kernel may not have. */
export type ScalarKind = Dtype | 'dim';

/**
 * A scalar from the command line. true/false are a bool's (1 and 0), inf and -inf a float's; a decimal whose value
 * lies beyond float64 (1e400) is refused rather than taken as an infinity, as is one beyond the range of the
 * parameter's own dtype (runtime/dtype.ts dtypeMisfit, which interp/bind.ts applies to file and generated values too).
 */
export function parseScalar(name: string, text: string, where = `--param ${name}`, kind?: ScalarKind): number {
  const t = text.trim().toLowerCase();
  const refuse = (why: string): never => {
    throw new InputError('DY3015', where, undefined, why);
  };
  if (t === 'true' || t === 'false') {
    if (kind !== undefined && kind !== 'bool')
      refuse(`true/false are for bool parameters; '${name}' is ${kind === 'dim' ? 'a dim' : kind}: give a number`);
    return t === 'true' ? 1 : 0;
  }
  if (t === 'inf' || t === '+inf' || t === '-inf') {
    if (kind !== undefined && kind !== 'f32' && kind !== 'f64')
      refuse(`'${name}' is ${kind === 'dim' ? 'a dim' : kind}: an infinity is for f32 and f64 parameters`);
    return t === '-inf' ? -Infinity : Infinity;
  }
  // Decimal only, as Matrix Market values are read: Number() would also take 0x10, 0b11 and 0o17.
  const v = DECIMAL.test(t) ? Number(t) : NaN;
  if (Number.isNaN(v)) refuse(`expected a decimal number, true/false or inf, got '${text}'`);
  if (!Number.isFinite(v)) refuse(`'${text}' is beyond float64's range (write inf for an infinity)`);
  // A dim's range is DimBinder's to check (interp/bind.ts), with the dims the inputs bind.
  const misfit = kind === undefined || kind === 'dim' ? undefined : dtypeMisfit(kind, v);
  if (misfit) refuse(`'${name}' is ${kind}: ${text.trim()} is ${misfit}`);
  return v;
}

/** `--param` values of a kernel, each parsed as what it names there (a scalar parameter's dtype, or a dim). */
export function parseScalars(k: Kernel, params: readonly Assignment[]): Map<string, number> {
  const dims = new Set(k.params.flatMap((p) => p.type.shape.flatMap((d) => (d.kind === 'sym' ? [d.name] : []))));
  const kindOf = (name: string): ScalarKind | undefined => {
    const p = k.params.find((q) => q.name === name && q.type.shape.length === 0);
    return p ? p.type.dtype : dims.has(name) ? 'dim' : undefined;
  };
  return new Map(params.map((a) => [a.name, parseScalar(a.name, a.value, undefined, kindOf(a.name))]));
}

export interface LoadedInput {
  tensor: Tensor;
  /** File path, or the generator as written. */
  source: string;
  mtx?: MtxData;
}

function fromFile(k: Kernel, name: string, path: string): LoadedInput {
  const p = k.params.find((q) => q.name === name);
  const mtx = loadMatrix(path);
  if (p) checkEntryValues(name, p.type.dtype, mtx, path);
  if (!p || p.type.shape.length === 0) return { tensor: toDense(mtx, path), source: path, mtx };
  switch (p.type.format) {
    case 'csr':
      if (mtx.kind === 'array') break;
      return { tensor: toCsr(mtx, path), source: path, mtx };
    case 'csc':
      if (mtx.kind === 'array') break;
      return { tensor: toCsc(mtx, path), source: path, mtx };
    case 'coo':
      if (mtx.kind === 'array') break;
      return { tensor: toCoo(mtx, path), source: path, mtx };
    case 'dense':
      return { tensor: toDense(mtx, path), source: path, mtx };
  }
  throw new InputError(
    'DY3016',
    path,
    undefined,
    `'${name}' is ${p.type.format}: expected a coordinate (sparse) Matrix Market file, found a dense array`,
  );
}

/**
 * A file's value that its parameter's dtype cannot hold is DY3008, on the value's line in a coordinate file (an
 * array's values carry no lines). Checked as the file is loaded, so that every command that reads inputs (run, and
 * run --project, which binds them in the runtime without interp/bind.ts's check) refuses it. A pattern file's values
 * are all 1.
 */
function checkEntryValues(name: string, dtype: Dtype, mtx: MtxData, path: string): void {
  if (dtype === 'f64' || (mtx.kind === 'coordinate' && mtx.field === 'pattern')) return;
  const values = mtx.kind === 'coordinate' ? mtx.values : mtx.data;
  for (let e = 0; e < values.length; e++) {
    const why = dtypeMisfit(dtype, values[e]!);
    if (why)
      throw new InputError(
        'DY3008',
        path,
        mtx.kind === 'coordinate' ? mtx.lines[e] : undefined,
        `'${name}' is ${dtype} but holds the value ${values[e]} (${why})`,
      );
  }
}

function generate(k: Kernel, name: string, spec: string, dims: ReadonlyMap<string, number>): LoadedInput {
  const p = k.params.find((q) => q.name === name);
  const where = `--input ${name}`;
  if (!p) throw new InputError('DY3014', where, undefined, `kernel '${k.name}' has no parameter '${name}'`);
  if (p.type.format !== 'dense')
    throw new InputError(
      'DY3016',
      where,
      undefined,
      `'${name}' is ${p.type.format}: generators make dense inputs only; give a Matrix Market file`,
    );
  const shape = p.type.shape.map((d) => {
    if (d.kind === 'lit') return d.value;
    const v = dims.get(d.name);
    if (v === undefined)
      throw new InputError(
        'DY3013',
        where,
        undefined,
        `cannot size ${spec}: dim '${d.name}' is bound by no file input; pass --param ${d.name}=N`,
      );
    if (!Number.isSafeInteger(v) || v < 0)
      throw new InputError(
        'DY3015',
        `--param ${d.name}`,
        undefined,
        `dim '${d.name}' must be a non-negative integer, got ${v}`,
      );
    return v;
  });
  const size = shape.reduce((a, b) => a * b, 1);
  if (size > MAX_ELEMENTS)
    throw new InputError(
      'DY3031',
      where,
      undefined,
      `${spec} for ${p.type.format}<${p.type.dtype}>[${shape.join(', ')}] would hold ${size} elements; at most ${MAX_ELEMENTS} fit`,
    );
  const data = new Float64Array(size);
  const [gen, arg] = spec.slice(1).split(':', 2) as [string, string | undefined];
  const intLike = p.type.dtype !== 'f32' && p.type.dtype !== 'f64';
  if (gen === 'random') {
    const seed = arg === undefined ? 42 : Number(arg);
    if (!Number.isSafeInteger(seed))
      throw new InputError('DY3015', where, undefined, `@random:SEED needs an integer seed, got '${arg}'`);
    const rng = new Rng(seedFor(seed, name));
    for (let i = 0; i < size; i++) data[i] = intLike ? rng.int(p.type.dtype === 'bool' ? 2 : 10) : rng.uniform(-1, 1);
  } else if (gen === 'ones') data.fill(1);
  else if (gen === 'zeros') data.fill(0);
  else if (gen === 'const') {
    const v = arg === undefined ? NaN : parseScalar(name, arg, where, p.type.dtype);
    data.fill(v);
  } else if (gen === 'source') {
    const at = arg === undefined ? NaN : Number(arg);
    if (!Number.isSafeInteger(at) || at < 0 || at >= size)
      throw new InputError(
        'DY3015',
        where,
        undefined,
        size === 0
          ? `@source:K needs a vertex, and '${name}' has none (its size is 0)`
          : `@source:K needs a vertex index 0 <= K < ${size}, got '${arg ?? ''}'`,
      );
    data.fill(Infinity);
    data[at] = 0;
  } else
    throw new InputError(
      'DY3015',
      where,
      undefined,
      `unknown generator '${spec}': expected @random[:SEED], @ones, @zeros, @const:V or @source:K`,
    );
  return { tensor: { format: 'dense', shape, data }, source: spec };
}

function shapeOf(t: Tensor): number[] {
  return t.format === 'dense' ? t.shape : [t.rows, t.cols];
}

/** ` (did you mean 'X'?)` when one candidate differs from `name` only in case, else ''. */
function didYouMean(name: string, candidates: readonly string[]): string {
  const near = candidates.filter((c) => c.toLowerCase() === name.toLowerCase());
  return near.length === 1 ? ` (did you mean '${near[0]}'?)` : '';
}

/**
 * Every --input names a tensor parameter and every --param a scalar parameter
 * or a dim: checked before any file is read or generator sized, so a
 * misspelled name is reported as itself, not as the dim it leaves unbound.
 */
export function checkNames(k: Kernel, inputs: readonly Assignment[], scalars: ReadonlyMap<string, number>): void {
  const params = k.params.map((p) => p.name);
  for (const a of inputs) {
    const p = k.params.find((q) => q.name === a.name);
    if (!p)
      throw new InputError(
        'DY3014',
        `--input ${a.name}`,
        undefined,
        `kernel '${k.name}' has no parameter '${a.name}'; ${params.length > 0 ? `it takes ${params.join(', ')}${didYouMean(a.name, params)}` : 'it takes none'}`,
      );
    if (p.type.shape.length === 0)
      throw new InputError(
        'DY3014',
        `--input ${a.name}`,
        undefined,
        `'${a.name}' is a scalar parameter of kernel '${k.name}': pass --param ${a.name}=VALUE`,
      );
  }
  const named = [
    ...k.params.filter((p) => p.type.shape.length === 0).map((p) => p.name),
    ...new Set(k.params.flatMap((p) => p.type.shape.flatMap((d) => (d.kind === 'sym' ? [d.name] : [])))),
  ];
  for (const name of scalars.keys()) {
    if (!named.includes(name))
      throw new InputError(
        'DY3014',
        `--param ${name}`,
        undefined,
        `kernel '${k.name}' has no scalar parameter or dim '${name}'; ${named.length ? `its scalars and dims are ${named.join(', ')}${didYouMean(name, named)}` : 'it takes none'}`,
      );
  }
}

/** Loads every --input: files first (they bind dims), then generators. Names are checked first (checkNames). */
export function loadInputs(
  k: Kernel,
  inputs: readonly Assignment[],
  scalars: ReadonlyMap<string, number>,
): Map<string, LoadedInput> {
  checkNames(k, inputs, scalars);
  const out = new Map<string, LoadedInput>();
  const dims = new Map<string, number>();
  for (const [n, v] of scalars) dims.set(n, v);
  for (const a of inputs) {
    if (a.value.startsWith('@')) continue;
    const li = fromFile(k, a.name, a.value);
    out.set(a.name, li);
    const p = k.params.find((q) => q.name === a.name);
    const shape = shapeOf(li.tensor);
    const fitted = p && p.type.shape.length === 1 && shape.length === 2 ? [shape[0]! * shape[1]!] : shape;
    p?.type.shape.forEach((d, i) => {
      if (d.kind === 'sym' && fitted[i] !== undefined && !dims.has(d.name)) dims.set(d.name, fitted[i]!);
    });
  }
  for (const a of inputs) if (a.value.startsWith('@')) out.set(a.name, generate(k, a.name, a.value, dims));
  return out;
}
