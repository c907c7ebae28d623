/**
 * `--profile NAME=VALUE` to the guard builder's bindings, per kernel. A
 * sparse parameter's profile is a matrix file (several give several
 * profiles); a dense parameter's file binds its dims; a dim or scalar name
 * takes a number (several numbers: the guards are sampled across their
 * range). Dims nothing binds are sampled across DEFAULT_DIM_RANGE.
 */
import { DiagnosticError, fileSpan, makeDiagnostic, type DiagCode } from '../../ir/diagnostics.js';
import type { Kernel } from '../../ir/module.js';
import { sparseFeaturesOf } from '../../runtime/guards/features.js';
import type { SampleOptions } from '../../runtime/guards/sample.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import type { Binding } from '../../runtime/plan/bind.js';
import type { SparseFeatures } from '../../runtime/plan/types.js';
import type { ProfileArg } from '../project.js';

/** Range a dim no profile binds is sampled across (feature widths of GNN layers, say). */
export const DEFAULT_DIM_RANGE: [number, number] = [16, 256];

export interface KernelProfiles {
  bindings: Binding[];
  ranges: Record<string, [number, number]>;
  shapeDims: NonNullable<SampleOptions['shapeDims']>;
  /** What each binding came from, for plan.json. */
  sources: string[];
}

const fail = (code: DiagCode, msg: string): never => {
  throw new DiagnosticError([makeDiagnostic(code, msg, fileSpan('<command line>'))]);
};

function repeatScalars(k: Kernel): Set<string> {
  const out = new Set<string>();
  const visit = (ops: Kernel['body']): void => {
    for (const op of ops)
      if (op.kind === 'repeat') {
        if (op.count.kind === 'param') out.add(op.count.name);
        visit(op.body);
      }
  };
  visit(k.body);
  return out;
}

export function kernelProfiles(
  k: Kernel,
  all: readonly ProfileArg[],
  cache: Map<string, SparseFeatures>,
): KernelProfiles | undefined {
  const dimNames = new Set(k.params.flatMap((p) => p.type.shape.flatMap((d) => (d.kind === 'sym' ? [d.name] : []))));
  const mine = all.filter((a) => k.params.some((p) => p.name === a.name) || dimNames.has(a.name));
  const sparseParams = k.params.filter((p) => p.type.format !== 'dense');
  const graphs = new Map<string, { f: SparseFeatures; src: string }[]>();
  const fixedDims = new Map<string, number[]>();
  const scalars = new Map<string, number[]>();
  const shapeDims: KernelProfiles['shapeDims'] = {};
  for (const p of sparseParams) {
    const [r, c] = p.type.shape;
    shapeDims[p.name] = [r?.kind === 'sym' ? r.name : undefined, c?.kind === 'sym' ? c.name : undefined];
  }
  const addDim = (d: string, v: number): void => void fixedDims.set(d, [...(fixedDims.get(d) ?? []), v]);
  for (const a of mine) {
    const param = k.params.find((p) => p.name === a.name);
    const num = Number(a.path);
    if (!param || param.type.shape.length === 0) {
      if (a.path.trim() === '' || !Number.isFinite(num) || (!param && (!Number.isInteger(num) || num < 1)))
        fail(
          'DY6302',
          `--profile ${a.name}=${a.path}: ${param ? 'a scalar' : 'a dim'} takes ${param ? 'a number' : 'a positive integer'}`,
        );
      if (param) scalars.set(a.name, [...(scalars.get(a.name) ?? []), num]);
      else addDim(a.name, num);
      continue;
    }
    let feats = cache.get(a.path);
    if (!feats) {
      const m = toCsr(loadMatrix(a.path), a.path);
      feats = sparseFeaturesOf(m, 2);
      cache.set(a.path, feats);
    }
    if (param.type.format !== 'dense') {
      const [r, c] = shapeDims[a.name]!;
      if (r !== undefined && r === c && feats.rows !== feats.cols)
        fail(
          'DY6302',
          `--profile ${a.name}=${a.path}: the matrix is ${feats.rows} x ${feats.cols}, but kernel ${k.name} declares ${a.name} as [${r}, ${c}] (square)`,
        );
      graphs.set(a.name, [...(graphs.get(a.name) ?? []), { f: feats, src: a.path }]);
    } else {
      const shape = param.type.shape.length === 1 ? [feats.rows * feats.cols] : [feats.rows, feats.cols];
      param.type.shape.forEach((d, i) => {
        if (d.kind === 'sym' && shape[i] !== undefined) addDim(d.name, shape[i]!);
      });
    }
  }
  if (graphs.size === 0 && mine.length === 0) return undefined;
  for (const p of sparseParams)
    if (!graphs.has(p.name))
      fail(
        'DY6300',
        `kernel ${k.name}: the guards need --profile ${p.name}=PATH (a sample matrix for sparse parameter ${p.name})`,
      );
  for (const s of repeatScalars(k))
    if (!scalars.has(s)) fail('DY6300', `kernel ${k.name}: the guards need --profile ${s}=N (the repeat count)`);
  const count = Math.max(1, ...[...graphs.values()].map((g) => g.length));
  const ranges: Record<string, [number, number]> = {};
  const bindings: Binding[] = [];
  const sources: string[] = [];
  for (let i = 0; i < count; i++) {
    const sparse = new Map<string, SparseFeatures>();
    const dims = new Map<string, number>();
    const src: string[] = [];
    for (const [name, list] of graphs) {
      const g = list[i % list.length]!;
      sparse.set(name, g.f);
      src.push(`${name}=${g.src}`);
      const [r, c] = shapeDims[name]!;
      for (const [d, v] of [
        [r, g.f.rows],
        [c, g.f.cols],
      ] as const) {
        if (d === undefined) continue;
        if (dims.has(d) && dims.get(d) !== v)
          fail(
            'DY6302',
            `--profile ${src.join(' ')}: dim ${d} is ${dims.get(d)} from one profile and ${v} from another`,
          );
        dims.set(d, v);
      }
    }
    for (const [d, vs] of fixedDims) if (!dims.has(d)) dims.set(d, vs[i % vs.length]!);
    for (const d of dimNames) {
      if (dims.has(d)) continue;
      dims.set(d, Math.round(Math.sqrt(DEFAULT_DIM_RANGE[0] * DEFAULT_DIM_RANGE[1])));
      ranges[`dim.${d}`] = DEFAULT_DIM_RANGE;
    }
    const sc = new Map([...scalars].map(([n, vs]) => [n, vs[i % vs.length]!]));
    bindings.push({ sparse, dims, scalars: sc });
    sources.push([...src, ...[...fixedDims].map(([d, vs]) => `${d}=${vs[i % vs.length]}`)].join(' '));
  }
  for (const [d, vs] of fixedDims)
    if (vs.length > 1 && !ranges[`dim.${d}`]) ranges[`dim.${d}`] = [Math.min(...vs), Math.max(...vs)];
  for (const [s, vs] of scalars) if (vs.length > 1) ranges[`scalar.${s}`] = [Math.min(...vs), Math.max(...vs)];
  return { bindings, ranges, shapeDims, sources };
}
