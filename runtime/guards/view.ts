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
import { fieldReader, SPARSE_FIELDS } from './features.js';

export type FeatureView = Readonly<Record<string, number>>;

interface Holder {
  $b: Binding;
}

function readerOf(name: string, field: string): (this: Holder) => number | undefined {
  const read = fieldReader(field);
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
    for (const field of SPARSE_FIELDS) def(`${name}.${field}`, readerOf(name, field));
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
