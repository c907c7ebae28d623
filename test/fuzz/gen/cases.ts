/**
 * Inputs of generated programs: random values in each parameter's dtype, and
 * sparse patterns with empty rows, often a full row, graph-like rows on large
 * inputs, and a dim of 0 where no expression reads it.
 */
import type { Tensor } from '../../../runtime/tensor.js';
import { coo, csc, csr, type Triple } from '../../helpers/interp-run.js';
import { chance, pick, type Rng } from '../util.js';
import { HUGE_EXTENT, HUGE_MIN_ROWS, HUGE_WIDTHS, hugePattern, hugeShape } from './huge.js';
import { type Dim, isFloat, MAX_EXTENT, type Node, type Program, type Stmt, type Assign, type Ty } from './program.js';

export interface Case {
  label: string;
  tensors: Map<string, Tensor>;
  scalars: Map<string, number>;
  /** Shapes, and the values where they are few: enough to rebuild the case. */
  shapes: string;
  values: string;
}

/** An element of a parameter: what checker.ts `paramInfo` assumes (floats multiples of 1/8 in [-2, 2], small integers, i32 some near its limits). */
export function value(rng: Rng, ty: Ty): number {
  if (ty === 'bool') return rng.int(2);
  if (isFloat(ty)) return (rng.int(33) - 16) / 8;
  if (ty === 'i32' && chance(rng, 0.08)) return pick(rng, [2147483647, -2147483648, 2000000000, -1999999999]);
  return rng.int(8) - 3;
}

export type Size = 'tiny' | 'mid' | 'large' | 'empty' | 'huge';

/** A dim no expression reads as a value (so that 0 of it divides nothing): the one an 'empty' case sets to 0. */
function zeroable(p: Program): Dim | undefined {
  const read = new Set<string>();
  const visit = (e: Node): void => {
    if (e.k === 'dim') read.add(e.name);
    for (const x of Object.values(e)) if (x && typeof x === 'object' && 'k' in x) visit(x as Node);
  };
  const statements = (ss: Stmt[]): Assign[] => ss.flatMap((s) => (s.k === 'assign' ? [s] : statements(s.body)));
  for (const a of statements(p.body)) visit(a.rhs);
  const dims = new Set(p.params.flatMap((v) => v.dims));
  return (['k', 'm', 'n'] as const).find((d) => dims.has(d) && !read.has(d));
}

/**
 * The entries of a sparse input, as [row, col, value] triples: empty rows (the identities of min and max); beyond
 * tiny inputs often a full row (the long-row paths of CUDA's schedules and of the FPGA packer); large inputs a few
 * entries a row, as graphs have. `hubColumn` adds a full column to mid and large ones (the long column of a csc walk
 * or a transpose). `full` is the full row, or -1.
 */
export function sparseTriples(
  rng: Rng,
  rows: number,
  cols: number,
  ty: Ty,
  size: Size,
  hubColumn = false,
): { ts: Triple[]; full: number; hub: number } {
  const empty = new Set(
    Array.from({ length: rows >= 2 ? 1 + rng.int(Math.max(1, rows >> 3)) : 0 }, () => rng.int(rows)),
  );
  const full = size !== 'tiny' && chance(rng, 0.6) ? rng.int(rows) : -1;
  const density = pick(rng, [0.15, 0.35, 0.7]);
  const mean = 1 + rng.int(6);
  const hub = hubColumn && size !== 'tiny' && cols > 0 ? rng.int(cols) : -1;
  const ts: Triple[] = [];
  for (let r = 0; r < rows; r++) {
    if (r !== full && empty.has(r)) continue;
    const colsOf =
      r === full
        ? [...Array(cols).keys()]
        : size === 'large'
          ? cols === 0
            ? []
            : [...new Set(Array.from({ length: rng.int(2 * mean + 1) }, () => rng.int(cols)))].sort((a, b) => a - b)
          : [...Array(cols).keys()].filter(() => rng.next() < density);
    if (hub >= 0 && !colsOf.includes(hub)) colsOf.splice(colsOf.filter((c) => c < hub).length, 0, hub);
    for (const c of colsOf) ts.push([r, c, value(rng, ty)]);
  }
  return { ts, full, hub };
}

/** What a report says of a sparse input: its size, entries, empty rows and full row. */
export function sparseShape(rows: number, cols: number, ts: readonly Triple[], full: number): string {
  const rowsWith = new Set(ts.map((t) => t[0]));
  const emptyRows = [...Array(rows).keys()].filter((r) => !rowsWith.has(r));
  return `${rows}x${cols}, ${ts.length} entries, ${emptyRows.length} empty rows [${emptyRows.slice(0, 12).join(' ')}${emptyRows.length > 12 ? ' ...' : ''}]${full >= 0 ? `, row ${full} full` : ''}`;
}

/**
 * One input of `p`: `tiny` (a few rows), `mid`, `large` (hundreds of rows, wider k), `empty` (a dim of 0 where
 * `zeroable` finds one) or `huge` (thousands of rows with hubs: huge.ts).
 */
export function makeCase(p: Program, rng: Rng, size: Size): Case {
  const zero = size === 'empty' ? zeroable(p) : undefined;
  const extent = (d: Dim): number =>
    d === zero
      ? 0
      : size === 'huge'
        ? d === 'k'
          ? pick(rng, HUGE_WIDTHS)
          : HUGE_MIN_ROWS + rng.int(HUGE_EXTENT.rows - HUGE_MIN_ROWS + 1)
        : d === 'k'
          ? size === 'tiny' || size === 'empty'
            ? 1 + rng.int(4)
            : // Widths past a warp (32) and at the native backend's lane copies (4 ... 64), and odd ones between.
              pick(rng, [1, 2, 3, 4, 5, 7, 8, 16, 33, 36, MAX_EXTENT.k])
          : size === 'large'
            ? 150 + rng.int(MAX_EXTENT.rows - 149)
            : size === 'mid'
              ? 6 + rng.int(35)
              : 1 + rng.int(5);
  const dims = new Map<Dim, number>();
  for (const v of p.params) for (const d of v.dims) if (!dims.has(d)) dims.set(d, extent(d));
  const tensors = new Map<string, Tensor>();
  const scalars = new Map<string, number>();
  const shapes: string[] = [];
  const values: string[] = [];
  for (const v of p.params) {
    if (v.dims.length === 0) {
      const x = v.name === 'reps' ? rng.int(4) : value(rng, v.ty);
      scalars.set(v.name, x);
      shapes.push(`${v.name} = ${x}`);
      continue;
    }
    const shape = v.dims.map((d) => dims.get(d)!);
    if (!v.pattern) {
      const data = Float64Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => value(rng, v.ty));
      tensors.set(v.name, { format: 'dense', shape, data });
      shapes.push(`${v.name}: dense [${shape.join(', ')}]`);
      values.push(`${v.name}=${JSON.stringify([...data])}`);
      continue;
    }
    const [rows, cols] = shape as [number, number];
    if (size === 'huge') {
      const ts = hugePattern(rng, rows, cols, () => value(rng, v.ty));
      tensors.set(
        v.name,
        v.format === 'csr' ? csr(rows, cols, ts) : v.format === 'csc' ? csc(rows, cols, ts) : coo(rows, cols, ts),
      );
      shapes.push(`${v.name}: ${v.format} ${rows}x${cols}, ${ts.length} entries, ${hugeShape(rows, cols, ts)}`);
      continue;
    }
    const { ts, full } = sparseTriples(rng, rows, cols, v.ty, size);
    const m = v.format === 'csr' ? csr(rows, cols, ts) : v.format === 'csc' ? csc(rows, cols, ts) : coo(rows, cols, ts);
    tensors.set(v.name, m);
    shapes.push(`${v.name}: ${v.format} ${sparseShape(rows, cols, ts, full)}`);
    values.push(`${v.name}=${JSON.stringify(ts)}`);
  }
  const text = values.join(' ');
  return {
    label: `${size}${zero ? ` (${zero} = 0)` : ''}`,
    tensors,
    scalars,
    shapes: shapes.join('; '),
    // Large inputs are rebuilt from the seed rather than printed.
    values: text.length <= 4000 ? text : `(${text.length} characters: rebuild them with the seed)`,
  };
}
