/**
 * Which functions of the native CPU library keep their entry loops scalar.
 *
 * A fold of a row's entries into a floating-point accumulator (SpMV's
 * `acc = acc + A[p] * x[j]` over p in rowPtr[i] .. rowPtr[i + 1]) must add in
 * order: the library's results equal the wasm executor's bit for bit, and
 * the C compiler may not reorder additions without -ffast-math. gcc's loop
 * vectoriser still takes such a loop, as a fold-left reduction: a gather of
 * 8 or 16 entries, then as many scalar adds in a row plus the extracts
 * between them. The chain of adds is as long as the scalar loop's, so while
 * x lies in the caches it only adds work: in a C harness (gcc 12 -O3
 * -march=native, an AVX-512 host; docs/PERFORMANCE.md) the scalar f32 SpMV
 * ran 1.3-1.5x faster on Groebner_id2003_aug, bcsstk33 and luxembourg_osm.
 * Where x does not (a random 1M x 1M matrix, 15 entries a row, x of 4 MB),
 * the gathers' parallel misses paid: the vectorised loop ran 1.13x faster.
 * So an f32 fold's function is printed twice, its entry loops scalar
 * (`_seq`) and as the compiler vectorises them (`_gather`), and a
 * dispatcher takes `_gather` when the rows x 4 bytes pass FOLD_GATHER_BYTES:
 * the rows stand for the gathered operand's length (the function is not
 * given it; the graph kernels' matrices are square). f64 folds stay as the
 * compiler prints them: the harness had the scalar loop only 1.0-1.15x
 * faster, less than bench/cpu-kernels' f64 SpMV moves between runs
 * (Groebner_id2003_aug at 0.82-0.97x of C, scalar and vectorised alike).
 * Integer folds may be reordered and stay vectorisable.
 */
import type { LoopFunc, LStmt } from '../../ir/loops.js';
import { entryLoopOf, reductionAt } from '../cuda/nest.js';

/** Past this many bytes of the gathered operand the vectorised fold runs (between the 458 KB and 4 MB measured). */
export const FOLD_GATHER_BYTES = 1 << 20;

/** Whether `f`'s body folds a row's entries into an f32 accumulator. */
export function hasF32EntryFold(f: LoopFunc): boolean {
  const visit = (block: readonly LStmt[]): boolean =>
    block.some((s, i) => {
      const r = reductionAt(block, i);
      const lo = r?.loop.lo;
      if (r?.init.type === 'f32' && lo?.k === 'load' && lo.index.k === 'var' && entryLoopOf(r.loop, lo.index.name, f))
        return true;
      if (s.k === 'for') return visit(s.body);
      return s.k === 'if' && (visit(s.then) || visit(s.else ?? []));
    });
  return visit(f.body);
}
