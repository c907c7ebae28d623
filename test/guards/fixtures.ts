/** Shared fixtures of the guard tests: gcn's PlanSpec, real graphs' features, bindings. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sparseFeaturesOf } from '../../runtime/guards/features.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import type { Binding } from '../../runtime/plan/bind.js';
import type { PlanSpec } from '../../runtime/plan/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import type { CsrMatrix } from '../../runtime/tensor.js';
import { specOf } from '../helpers/compile.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const matrices = join(root, '..', 'shared', 'data', 'matrices');

export function gcnSpec(): PlanSpec {
  return specOf(readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8'), 'gcn.dy');
}

export function system(name: string): SystemSpec {
  return loadSystemFile(join(root, 'systems', `${name}.json`));
}

const cache = new Map<string, CsrMatrix>();
export function graph(file: string): CsrMatrix {
  let g = cache.get(file);
  if (!g) cache.set(file, (g = toCsr(loadMatrix(join(matrices, file)))));
  return g;
}

/** examples/spmv.dy's binding for a real matrix (its exact features; dims m x n from its shape), a profile for its guards. */
export function spmvBinding(g: CsrMatrix): Binding {
  return {
    sparse: new Map([['A', sparseFeaturesOf(g, 2)]]),
    dims: new Map([
      ['m', g.rows],
      ['n', g.cols],
    ]),
    scalars: new Map(),
  };
}

export function gcnBinding(g: CsrMatrix, f = 64, h = 64, c = 16): Binding {
  return {
    sparse: new Map([['A', sparseFeaturesOf(g, 2)]]),
    dims: new Map([
      ['n', g.rows],
      ['f', f],
      ['h', h],
      ['c', c],
    ]),
    scalars: new Map(),
  };
}
