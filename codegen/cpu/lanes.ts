/**
 * The strip-mined column loop of the native CPU target: a loop of the
 * column shape (codegen/c/columns.ts) is printed as blocks of columns:
 *   for c0 in steps of W: a[W] = init; for p { scalars; for lane: a[lane] = ...(c0 + lane) }; for lane: T
 * Each accumulator folds the same values in the same order as the plain
 * loop; only independent columns change places, so the results are the
 * same bit for bit. Full blocks have a constant width, which the C compiler
 * turns into vector registers held across the entry loop.
 */
import type { LElem, LStmt } from '../../ir/loops.js';
import { columnShape as shapeOf, mentions } from '../c/columns.js';
import { cType } from '../cuda/cprint.js';
import type { CStmtPrinter, For } from './cprint.js';

/** Bytes of a full block of columns: four AVX2 registers (the CPU model's dense trips are per block: `denseBlockBytes`). */
export const CPU_BLOCK_BYTES = 128;

/** Lanes per block by the widest accumulator. */
const blockWidth = (types: LElem[]): number =>
  types.some((t) => t === 'f64' || t === 'i64') ? CPU_BLOCK_BYTES / 8 : CPU_BLOCK_BYTES / 4;

/**
 * How the columns left after the blocks of W, W/2, W/4 and W/8 are printed: in a loop over lanes, whose
 * accumulators live on the stack (`loop`), or as more blocks written out, down to one lane (`blocks`). The
 * general copy of a function takes `blocks` (f32 K = 3 and 7 ran 1.6-2.3x faster, K = 12 and 40 up to 1.6x,
 * f64 alike); a copy for a constant width keeps `loop`, since with `blocks` gcc left the K = 8 f32 copy 1.7-3x
 * slower (docs/PERFORMANCE.md).
 */
export type LaneTail = 'loop' | 'blocks';

/** The loop printed in blocks of columns, or undefined when it does not have the shape. */
export function laneLoop(s: For, ind: string, sp: CStmtPrinter, tail: LaneTail = 'loop'): string[] | undefined {
  const shape = shapeOf(s);
  if (!shape) return undefined;
  const p = sp.p;
  const W = blockWidth(shape.acc.map((a) => a.type));
  const c0 = sp.fresh('c');
  const end = sp.fresh('cend');
  const lane = sp.fresh('l');
  const n = sp.fresh('n');
  const arrays = new Map(shape.acc.map((a) => [a.var, `${sp.fresh('a')}_${p.var(a.var)}`]));
  const lanes = new Map<string, string>([[s.var, `(${c0} + ${lane})`]]);
  for (const [v, arr] of arrays) lanes.set(v, `${arr}[${lane}]`);
  const inLane = sp.over(p.with(lanes));
  // Entry-loop lets that depend on a lane are computed per lane; the others once per entry.
  const laneVars = new Set([s.var, ...arrays.keys()]);
  const perEntry: LStmt[] = [];
  const perLane: LStmt[] = [];
  for (const x of shape.entries.body) {
    if (x.k === 'let' && !mentions(x.value, laneVars)) perEntry.push(x);
    else {
      if (x.k === 'let') laneVars.add(x.var);
      perLane.push(x);
    }
  }
  const block = (width: string, i: string): string[] => {
    const i2 = `${i}  `;
    const forLanes = (body: string[]): string[] => [
      `${i}for (int ${lane} = 0; ${lane} < ${width}; ++${lane}) {`,
      ...body,
      `${i}}`,
    ];
    const out: string[] = [];
    for (const a of shape.acc) out.push(`${i}${cType(a.type)} ${arrays.get(a.var)!}[${W}];`);
    out.push(
      ...forLanes(shape.acc.map((a) => `${i2}${arrays.get(a.var)!}[${lane}] = ${inLane.p.as(a.value, a.type)};`)),
    );
    const e = shape.entries;
    const ev = p.var(e.var);
    const eend = sp.fresh('end');
    out.push(
      `${i}for (int ${ev} = ${p.as(e.lo, 'index')}, ${eend} = ${p.as(e.hi, 'index')}; ${ev} < ${eend}; ++${ev}) {`,
      ...sp.block(perEntry, i2),
      `${i2}for (int ${lane} = 0; ${lane} < ${width}; ++${lane}) {`,
      ...inLane.block(perLane, `${i2}  `),
      `${i2}}`,
      `${i}}`,
    );
    out.push(...forLanes(inLane.block(shape.tail, i2)));
    return out;
  };
  // A full block: one scalar accumulator per lane and the lane body written out per lane (each in its own
  // braces), which the compiler's straight-line vectoriser packs into vector registers held across the entry
  // loop; an array indexed by a loop would live on the stack, loaded and stored per entry.
  const unrolled = (width: number, i: string): string[] => {
    const i2 = `${i}  `;
    const laneOf = (l: number): CStmtPrinter => {
      const m = new Map<string, string>([[s.var, `(${c0} + ${l})`]]);
      for (const [v, arr] of arrays) m.set(v, `${arr}_${l}`);
      return sp.over(p.with(m));
    };
    const ls = Array.from({ length: width }, (_, l) => laneOf(l));
    const out: string[] = [];
    for (const a of shape.acc)
      ls.forEach((q, l) => out.push(`${i}${cType(a.type)} ${arrays.get(a.var)!}_${l} = ${q.p.as(a.value, a.type)};`));
    const e = shape.entries;
    const ev = p.var(e.var);
    const eend = sp.fresh('end');
    out.push(
      `${i}for (int ${ev} = ${p.as(e.lo, 'index')}, ${eend} = ${p.as(e.hi, 'index')}; ${ev} < ${eend}; ++${ev}) {`,
      ...sp.block(perEntry, i2),
      ...ls.flatMap((q) => [`${i2}{`, ...q.block(perLane, `${i2}  `), `${i2}}`]),
      `${i}}`,
    );
    // The shape (codegen/c/columns.ts) keeps every buffer the tail stores to out of what the tail reads.
    const storesOnly = shape.tail.length > 0 && shape.tail.every((x) => x.k === 'store' && p.bufElem(x.buf) !== 'bool');
    if (!storesOnly) {
      out.push(...ls.flatMap((q) => [`${i}{`, ...q.block(shape.tail, i2), `${i}}`]));
      return out;
    }
    // Every lane's values before any lane's store: a load in a value (attention's `/ s[i]`) between the stores
    // of other lanes kept gcc from grouping the stores into vectors, and the whole block, entry loop included,
    // stayed scalar (E @ V / s 3x slower than wasm's; docs/PERFORMANCE.md).
    const stores = shape.tail as Extract<LStmt, { k: 'store' }>[];
    const vals = ls.map((q) =>
      stores.map((x) => {
        const elem = q.p.bufElem(x.buf);
        const v = sp.fresh('v');
        out.push(`${i}const ${cType(elem)} ${v} = ${q.p.as(x.value, elem)};`);
        return v;
      }),
    );
    ls.forEach((q, l) =>
      stores.forEach((x, t) =>
        out.push(`${i}${q.p.names.buf(x.buf).c}[${q.p.as(x.index, 'index')}] = ${vals[l]![t]};`),
      ),
    );
    return out;
  };
  const i1 = `${ind}  `;
  const i2 = `${ind}    `;
  const step = sp.fresh('step');
  // Blocks of W, W/2, W/4 and W/8 lanes written out, then the last few lanes in a loop, or in more blocks
  // written out (LaneTail), the last of one lane.
  const widths = tail === 'loop' ? [W, W / 2, W / 4, W / 8] : [W, W / 2, W / 4, W / 8, W / 16].filter((w) => w >= 2);
  const last = tail === 'loop' ? [`${i2}${step} = ${n};`, ...block(n, i2)] : [`${i2}${step} = 1;`, ...unrolled(1, i2)];
  return [
    `${ind}for (int ${c0} = ${p.as(s.lo, 'index')}, ${end} = ${p.as(s.hi, 'index')}, ${step} = 0; ${c0} < ${end}; ${c0} += ${step}) {`,
    `${i1}const int ${n} = ${end} - ${c0};`,
    ...widths.flatMap((w, k) => [
      `${i1}${k === 0 ? '' : '} else '}if (${n} >= ${w}) {`,
      `${i2}${step} = ${w};`,
      ...unrolled(w, i2),
    ]),
    `${i1}} else {`,
    ...last,
    `${i1}}`,
    `${ind}}`,
  ];
}

/** Whether the loop would be printed in blocks of columns (its function then keeps gcc's loop vectoriser off). */
export function hasLaneLoop(ss: readonly LStmt[]): boolean {
  return ss.some(
    (s) =>
      (s.k === 'for' && (shapeOf(s) !== undefined || hasLaneLoop(s.body))) ||
      (s.k === 'if' && (hasLaneLoop(s.then) || hasLaneLoop(s.else ?? []))),
  );
}

/**
 * The sizes that alone bound a loop printed in blocks of columns (SpMM's k), each with the block widths of the
 * loops it bounds: the widths worth a specialised copy (codegen/cpu/emit.ts).
 */
export function laneWidthSizes(
  ss: readonly LStmt[],
  sizes: ReadonlySet<string>,
  out = new Map<string, Set<number>>(),
): Map<string, Set<number>> {
  for (const s of ss) {
    if (s.k === 'for') {
      const shape = shapeOf(s);
      if (shape !== undefined && s.hi.k === 'var' && sizes.has(s.hi.name)) {
        const ws = out.get(s.hi.name) ?? new Set<number>();
        ws.add(blockWidth(shape.acc.map((a) => a.type)));
        out.set(s.hi.name, ws);
      }
      laneWidthSizes(s.body, sizes, out);
    } else if (s.k === 'if') {
      laneWidthSizes(s.then, sizes, out);
      laneWidthSizes(s.else ?? [], sizes, out);
    }
  }
  return out;
}
