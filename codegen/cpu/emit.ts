/**
 * Prints one LoopFunc as a C function of the native CPU library:
 *   static void dy_fN(char *const *dy_b, const long long *dy_s, long long dy_lo, long long dy_hi)
 * with the op's buffers (restrict pointers, in LoopFunc order), its sizes
 * (in LoopFunc order) and [dy_lo, dy_hi) clamping the top-level parallel
 * loop, as the wasm functions take them. Threads are the library's
 * (codegen/cpu/library.ts): each calls the function on its own row range.
 *
 * Vector-friendly inner loops: a loop over a row's columns c that holds
 * accumulators across a loop over the row's entries (SpMM's
 * `for c { acc = 0; for p { acc += A[p] * B[j*k + c] }; Y[i*k + c] = acc }`)
 * is strip-mined (codegen/cpu/lanes.ts) so that the entry loop is outside
 * and a block of columns, a contiguous vector, is updated per entry. Each
 * accumulator still folds its entries in the same order, so results are the
 * scalar code's bit for bit.
 */
import type { LoopFunc } from '../../ir/loops.js';
import { storageType } from '../cuda/cprint.js';
import { FuncNames } from '../cuda/cprint.js';
import type { NameContext } from '../cuda/names.js';
import { CPrinter, CStmtPrinter } from './cprint.js';
import { hasLaneLoop, laneLoop } from './lanes.js';

/** C text of one op's function, named `fn`. */
export function emitCpuFunction(f: LoopFunc, fn: string, ctx: NameContext): string {
  const names = new FuncNames(f, ctx);
  const p = new CPrinter(names);
  const sp = new CStmtPrinter(p, laneLoop);
  const lines: string[] = [
    `/* ${f.name}: op ${f.op} -> ${f.result} */`,
    // With column blocks, gcc's loop vectoriser would take the entry loop instead (gathers of B, in-order
    // reductions: 8x slower than the blocks measured); its straight-line vectoriser packs the blocks.
    `${hasLaneLoop(f.body) ? '__attribute__((optimize("no-tree-loop-vectorize"))) ' : ''}static void ${fn}(char *const *dy_b, const long long *dy_s, long long dy_lo, long long dy_hi) {`,
  ];
  f.buffers.forEach((b, i) => {
    const c = names.buf(b.name).c;
    lines.push(`  ${storageType(b.elem)} *restrict ${c} = (${storageType(b.elem)} *)dy_b[${i}];`);
  });
  f.sizes.forEach((s, i) => lines.push(`  const int ${names.sizes.get(s)!} = (int)dy_s[${i}];`));
  lines.push('  (void)dy_lo;', '  (void)dy_hi;');
  for (const b of f.buffers) lines.push(`  (void)${names.buf(b.name).c};`);
  for (const s of f.sizes) lines.push(`  (void)${names.sizes.get(s)!};`);
  for (const s of f.body) {
    if (s.k === 'for' && s.parallel) {
      // Clamp the parallel loop to the range this call was given.
      const lo = sp.fresh('lo');
      const hi = sp.fresh('hi');
      lines.push(
        `  long long ${lo} = ${p.as(s.lo, 'index')}, ${hi} = ${p.as(s.hi, 'index')};`,
        `  if (dy_lo > ${lo}) ${lo} = dy_lo;`,
        `  if (dy_hi < ${hi}) ${hi} = dy_hi;`,
        ...sp.forStmt(s, '  ', `(int)${lo}`, `(int)${hi}`),
      );
    } else lines.push(...sp.stmt(s, '  '));
  }
  lines.push('}');
  return lines.join('\n');
}
