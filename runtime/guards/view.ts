/**
 * The flat feature record guards read (`A.rowLenCv`, `dim.n`), as a view
 * over a binding rather than a copy: one object per input whose keys are
 * getters on a prototype made once per kernel. A copy costs a property
 * store per key (microseconds at these key names); the view costs one
 * allocation, and a feature is read only when a guard tests it, so a
 * sampled locality score (runtime/features/quick.ts) is computed only on
 * the paths that test it.
 */
import type { Binding } from '../plan/bind.js';
import type { SparseFeatures } from '../plan/types.js';
import { SPARSE_FIELDS } from './features.js';

export type FeatureView = Readonly<Record<string, number>>;

interface Holder {
  $b: Binding;
}

/**
 * One field's getter with its own named property load: a load keyed by a variable field name sees every field
 * at one site and goes megamorphic, which for a sampled record's accessors (runtime/features/quick.ts) costs
 * microseconds per read.
 */
const READERS: Record<string, (f: SparseFeatures) => number | undefined> = {
  rows: (f) => f.rows,
  cols: (f) => f.cols,
  nnz: (f) => f.nnz,
  rowLenMean: (f) => f.rowLenMean,
  rowLenMax: (f) => f.rowLenMax,
  rowLenCv: (f) => f.rowLenCv,
  emptyRowFraction: (f) => f.emptyRowFraction,
  top1PctNnzShare: (f) => f.top1PctNnzShare,
  localityScore: (f) => f.localityScore,
};

function readerOf(name: string, field: string): (this: Holder) => number | undefined {
  const read = READERS[field];
  if (!read) throw new Error(`featureView: no reader for sparse field ${field}`);
  return function (this: Holder) {
    return read(this.$b.sparse.get(name)!);
  };
}

export function featureView(names: {
  sparse: readonly string[];
  dims: readonly string[];
  scalars: readonly string[];
}): (b: Binding) => FeatureView {
  const proto: object = Object.create(null);
  const def = (key: string, get: (this: Holder) => number | undefined): void =>
    void Object.defineProperty(proto, key, { get, enumerable: true });
  for (const name of [...names.sparse].sort())
    for (const field of SPARSE_FIELDS)
      def(
        `${name}.${field}`,
        field === 'density'
          ? function (this: Holder) {
              const f = this.$b.sparse.get(name)!;
              return f.rows * f.cols > 0 ? f.nnz / (f.rows * f.cols) : 0;
            }
          : readerOf(name, field),
      );
  for (const d of [...new Set(names.dims)].sort())
    def(`dim.${d}`, function (this: Holder) {
      return this.$b.dims.get(d);
    });
  for (const s of [...names.scalars].sort())
    def(`scalar.${s}`, function (this: Holder) {
      return this.$b.scalars.get(s);
    });
  return (b) => {
    const v = Object.create(proto) as Holder;
    v.$b = b;
    return v as unknown as FeatureView;
  };
}
