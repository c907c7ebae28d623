/**
 * Writing results: every output is streamed to a temporary name in its
 * directory (runtime/io/mtx-write.ts writes Matrix Market in chunks, so an
 * output of any size fits), then all are renamed into place together, so a
 * failure leaves no partial or half-written set of output files. Every
 * destination is checked before anything is staged (cli/output-path.ts
 * `outputTarget`): an existing one must be a regular file, and a symbolic
 * link is followed, its target replaced rather than the link.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Kernel, ValueDecl } from '../ir/module.js';
import { isScalarType, type TensorType } from '../ir/types.js';
import { InputError } from '../runtime/errors.js';
import { fsReason } from '../runtime/io/files.js';
import { isFsError, writeAllSync, writeMatrixMarket } from '../runtime/io/mtx-write.js';
import type { Tensor } from '../runtime/tensor.js';
import { outputTarget } from './output-path.js';
import { holdSignals } from '../runtime/io/signals.js';

/** What writes one output file: its text, or a function that writes it to an open file descriptor. */
export type OutputData = string | ((fd: number) => void);

/** One file of a set written together. */
export interface OutputFile {
  path: string;
  data: OutputData;
  /** How an error names it (default the path), e.g. `--trace t.json`. */
  where?: string;
}

/**
 * What `--out NAME=PATH` names: a result of the kernel, or one of its tensor inputs, written as the run read or
 * generated it (so that a generated input such as `@random` can be given to another backend, the HLS project's C
 * simulation say, and the results compared). Anything else is DY3014 listing both.
 */
export function outputDecl(kernel: Kernel, name: string): { decl: ValueDecl; input: boolean } {
  const found = (decl: ValueDecl, input: boolean): { decl: ValueDecl; input: boolean } => {
    // Checked before any work, as every other --out problem: a Matrix Market array is a scalar, a vector or a matrix.
    if (decl.type.shape.length > 2)
      throw new InputError(
        'DY3017',
        `--out ${name}`,
        undefined,
        `cannot write '${name}': it is a rank-${decl.type.shape.length} tensor (${decl.type.format}<${decl.type.dtype}>[${decl.type.shape.map((d) => (d.kind === 'lit' ? d.value : d.name)).join(', ')}]); a Matrix Market file holds rank 0, 1 or 2`,
      );
    return { decl, input };
  };
  const result = kernel.results.find((r) => r.name === name);
  if (result) return found(result, false);
  const tensorInputs = kernel.params.filter((p) => !isScalarType(p.type));
  const input = tensorInputs.find((p) => p.name === name);
  if (input) return found(input, true);
  const names = (ds: readonly ValueDecl[]): string => (ds.length > 0 ? ds.map((d) => d.name).join(', ') : 'none');
  throw new InputError(
    'DY3014',
    `--out ${name}`,
    undefined,
    `kernel '${kernel.name}' has no result or tensor input '${name}'; its results are ${names(kernel.results)}, its tensor inputs ${names(tensorInputs)}`,
  );
}

/**
 * The files of `--out`, each a result of the run (`results`, with `ranBy` saying what produced it) or a tensor input
 * as the run read or generated it (`inputs`, with where it came from): what run and run --project write alike.
 */
export function outFiles(
  kernel: Kernel,
  outs: readonly { name: string; value: string }[],
  inputs: ReadonlyMap<string, { tensor: Tensor; source: string }>,
  results: ReadonlyMap<string, Tensor>,
  ranBy: string,
): OutputFile[] {
  return outs.map((a) => {
    const { decl, input } = outputDecl(kernel, a.name);
    const from = inputs.get(a.name);
    return {
      path: a.value,
      data:
        input && from
          ? outputWriter(from.tensor, decl.type, `${a.name}, input of kernel ${kernel.name} (${from.source})`)
          : outputWriter(results.get(a.name)!, decl.type, `${a.name} of kernel ${kernel.name} (dype, ${ranBy})`),
    };
  });
}

/** Writes a tensor as Matrix Market (`array` when dense, `coordinate` when sparse), streamed. */
export function outputWriter(t: Tensor, type: TensorType, comment: string): (fd: number) => void {
  const field = type.dtype === 'f32' || type.dtype === 'f64' ? 'real' : 'integer';
  return (fd) => writeMatrixMarket(fd, t, field, comment);
}

/**
 * Where each file goes (a symbolic link's target), checked before anything
 * is written: DY3017 naming the file when its destination is a directory,
 * a special file or a dangling link, when its directory is missing, or when
 * two of the files are one.
 */
function destinations(files: readonly OutputFile[]): string[] {
  const fail = (f: OutputFile, why: string): never => {
    throw new InputError('DY3017', f.where ?? f.path, undefined, `cannot write the output: ${why}`);
  };
  const seen = new Map<string, OutputFile>();
  return files.map((f) => {
    const t = outputTarget(f.path);
    if ('why' in t) return fail(f, t.why);
    try {
      if (!statSync(dirname(t.target)).isDirectory()) fail(f, 'a component of the path is not a directory');
    } catch (e) {
      if (!isFsError(e)) throw e;
      fail(f, fsReason(e));
    }
    const key = resolve(t.target);
    const other = seen.get(key);
    if (other) fail(f, `it is the same file as ${other.where ?? other.path}`);
    seen.set(key, f);
    return t.target;
  });
}

export function writeAllAtomic(files: readonly OutputFile[]): void {
  holdSignals(() => writeAll(files));
}

function writeAll(files: readonly OutputFile[]): void {
  const targets = destinations(files);
  const staged: { tmp: string; path: string; where: string }[] = [];
  try {
    files.forEach((f, i) => {
      const target = targets[i]!;
      const where = f.where ?? f.path;
      const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
      let fd: number | undefined;
      try {
        fd = openSync(tmp, 'wx');
        staged.push({ tmp, path: target, where });
        if (typeof f.data === 'string') writeAllSync(fd, f.data);
        else f.data(fd);
      } catch (e) {
        if (!isFsError(e)) throw e;
        throw new InputError('DY3017', where, undefined, `cannot write the output: ${fsReason(e)}`);
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    });
    for (const s of staged) {
      try {
        renameSync(s.tmp, s.path);
      } catch (e) {
        throw new InputError('DY3017', s.where, undefined, `cannot write the output: ${fsReason(e)}`);
      }
    }
  } catch (e) {
    for (const s of staged) rmSync(s.tmp, { force: true });
    throw e;
  }
}

export interface OutputSummary {
  shape: number[];
  nnz?: number;
  sum: number;
  min: number;
  max: number;
  nonfinite: number;
}

export function summarize(t: Tensor): OutputSummary {
  const values = t.format === 'dense' ? t.data : t.values;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  let nonfinite = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) {
      nonfinite++;
      continue;
    }
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const shape = t.format === 'dense' ? [...t.shape] : [t.rows, t.cols];
  return t.format === 'dense'
    ? { shape, sum, min, max, nonfinite }
    : { shape, nnz: values.length, sum, min, max, nonfinite };
}

function fmtNumber(x: number): string {
  return Number.isFinite(x) ? Number(x.toPrecision(6)).toString() : String(x);
}

/**
 * "sum S, min A, max B" over the finite values, then how many are NaN or
 * infinite (IEEE 754 carries them through: an inf or NaN input value gives
 * some); "no values" for an empty result, "no finite value" when none is.
 */
export function summaryText(s: OutputSummary): string {
  const count = s.nnz ?? s.shape.reduce((a, d) => a * d, 1);
  if (count === 0) return 'no values';
  const finite = count - s.nonfinite;
  const body =
    finite > 0 ? `sum ${fmtNumber(s.sum)}, min ${fmtNumber(s.min)}, max ${fmtNumber(s.max)}` : 'no finite value';
  return s.nonfinite > 0 ? `${body}, ${s.nonfinite} non-finite (NaN or infinite)` : body;
}
