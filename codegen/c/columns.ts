/**
 * The column loop of an SpMM-shaped nest, which the native CPU target prints
 * as blocks of columns (codegen/cpu/lanes.ts) and the CUDA target as vectors
 * of columns per lane (codegen/cuda/vec-columns.ts). A loop over c whose body is
 *   lets A (accumulators) ; one loop over entries p ; lets and stores T
 * where the entry loop's bounds do not depend on c or A, its body only
 * declares values and updates A, and no buffer T stores to is read in the
 * body. Columns are then independent: each one's accumulators fold the same
 * values in the same order however the columns are grouped.
 */
import type { LExpr, LStmt } from '../../ir/loops.js';
import { mentionsAny, walkLExpr } from '../../ir/loops-walk.js';

type For = Extract<LStmt, { k: 'for' }>;
type Let = Extract<LStmt, { k: 'let' }>;

export interface ColumnShape {
  acc: Let[];
  entries: For;
  tail: LStmt[];
}

/** Whether e reads any of the variables (the loop IR's own test, under the name the printers import it by). */
export const mentions = mentionsAny;

function loads(e: LExpr, bufs: Set<string>): void {
  walkLExpr(e, (x) => {
    if (x.k === 'load') bufs.add(x.buf);
  });
}

/** The loop's parts, or undefined when it does not have the shape. */
export function columnShape(s: For): ColumnShape | undefined {
  const body = s.body;
  const at = body.findIndex((x) => x.k === 'for');
  if (at < 0) return undefined;
  const acc = body.slice(0, at);
  const entries = body[at] as For;
  const tail = body.slice(at + 1);
  if (!acc.every((x) => x.k === 'let') || acc.length === 0) return undefined;
  if (!tail.every((x) => x.k === 'let' || x.k === 'store')) return undefined;
  const accVars = new Set(acc.map((x) => (x as Let).var));
  const laneVars = new Set([s.var, ...accVars]);
  if (mentions(entries.lo, laneVars) || mentions(entries.hi, laneVars)) return undefined;
  const read = new Set<string>();
  for (const x of entries.body) {
    if (x.k === 'let') loads(x.value, read);
    else if (x.k === 'set') {
      if (!accVars.has(x.var)) return undefined;
      loads(x.value, read);
    } else return undefined;
  }
  for (const x of [...acc, ...tail]) {
    if (x.k === 'let') loads(x.value, read);
    if (x.k === 'store') {
      loads(x.index, read);
      loads(x.value, read);
    }
  }
  if (tail.some((x) => x.k === 'store' && read.has(x.buf))) return undefined;
  return { acc: acc as Let[], entries, tail };
}
