/**
 * Which functions of the native CPU library keep their entry loops scalar.
 *
 * A fold of a row's entries into a floating-point accumulator (SpMV's
 * `acc = acc + A[p] * x[j]` over p in rowPtr[i] .. rowPtr[i + 1]) must add in
 * order: the library's results equal the wasm executor's bit for bit, and
 * the C compiler may not reorder additions without -ffast-math. gcc's loop
 * vectoriser still takes such a loop, as a fold-left reduction: a gather of
 * 8 or 16 entries, then as many scalar adds in a row plus the extracts
 * between them. The chain of adds is as long as the scalar loop's, so it
 * only adds work: in a C harness (gcc 12 -O3 -march=native, an AVX-512 host;
 * docs/PERFORMANCE.md) the scalar f32 SpMV ran 1.3-1.5x faster on
 * Groebner_id2003_aug, bcsstk33 and luxembourg_osm, whose x is cached. Where
 * x is not, the gathers' parallel misses once paid (a random 1M x 1M
 * matrix, 15 entries a row: 1.13x, 2026-12-04), and the library printed a
 * vectorised copy for rows x 4 bytes past 1 MiB. Measured again in the
 * library itself on the same host (2026-12-06, its buffers on huge pages),
 * the scalar loop won there too: 1.12-1.41x on 1M-row random and power-law
 * patterns of 5-15 entries a row and 300k-row ones of 10-30. So an f32
 * fold's entry loops are always scalar. f64 folds stay as the compiler
 * prints them: scalar and vectorised ran alike (0.99-1.04x then, 1.0-1.15x
 * before). Integer folds may be reordered and stay vectorisable.
 */
import type { LoopFunc, LStmt } from '../../ir/loops.js';
import { entryLoopOf, reductionAt } from '../cuda/nest.js';

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
