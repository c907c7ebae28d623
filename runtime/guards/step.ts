/**
 * A guard plan compiled for the runtime's per-input step: the tree's tests
 * and, at each leaf, that leaf's range checks (every tier-0 range, and the
 * tier-1 ranges the leaf lists: checks.ts) as one straight-line function
 * over the binding, thresholds and bounds written into the code as
 * literals. The step runs between kernels, with the caches and the branch
 * predictor cold: the feature view, the generic tree walk and the per-leaf
 * range test it replaces read a dozen objects (tree nodes, closures, bound
 * arrays, view getters), each a cache miss there, and cost 300-600 ns per
 * new pattern against 30-60 ns for this function (docs/PERFORMANCE.md).
 *
 * It returns the leaf's ordinal (the tree's leaves numbered left to right,
 * `leavesOf`) when every checked feature lies in the plan's ranges, and
 * -1 - ordinal when one does not. A feature the binding lacks goes to the >
 * side of a test (walkTree's rule) and passes its range check (inRanges').
 */
import type { Binding } from '../plan/bind.js';
import { checkedRanges } from './select.js';
import { SPARSE_FIELDS } from './features.js';
import type { GuardNode, GuardPlan } from './types.js';

export type GuardLeaf = Extract<GuardNode, { leaf: number }>;
/** The leaf's ordinal when every checked feature is in range, -1 - ordinal when one is not. */
export type GuardStep = (b: Binding) => number;

/** The tree's leaves, left (<=) before right: `GuardStep`'s ordinals. */
export function leavesOf(tree: GuardNode, out: GuardLeaf[] = []): GuardLeaf[] {
  if ('leaf' in tree) out.push(tree);
  else {
    leavesOf(tree.le, out);
    leavesOf(tree.gt, out);
  }
  return out;
}

/** A finite number as a JavaScript literal (the infinities as names); anything else is a plan error. */
function literal(x: number, what: string): string {
  if (Number.isNaN(x)) throw new Error(`guard plan: ${what} is NaN`);
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return Object.is(x, -0) ? '0' : String(x);
}

interface Reads {
  /** Sparse inputs read, each bound once to a local (`s0`...). */
  sparse: Map<string, string>;
  dims: Map<string, string>;
  scalars: Map<string, string>;
  /** The locals holding a sparse input's field once read (`s0_rows`...), declared at the top. */
  fields: Set<string>;
}

/** The local of a binding map's entry, registering it. */
function localOf(m: Map<string, string>, name: string, prefix: string): string {
  let v = m.get(name);
  if (v === undefined) m.set(name, (v = `${prefix}${m.size}`));
  return v;
}

/**
 * The expression reading a feature key. A sparse input's field is read once
 * per path: the first read on it assigns the field's local, later ones
 * (the leaf's range check of a feature the tree tested, the density's rows,
 * cols and nnz) read the local. `known` holds the locals assigned on the
 * path so far and gains those this read assigns. Each read between kernels
 * is a getter or a map entry whose cache line is cold: the tree's tests
 * and ranges read rows, rowLenMax and density's fields again, and reading
 * each once took 11-171 ns off the step right after an SpMV on 7 of 8
 * matrices (docs/PERFORMANCE.md, *Thirteenth run*).
 */
function readOf(key: string, r: Reads, known: Set<string>): string {
  if (key.startsWith('dim.')) return localOf(r.dims, key.slice(4), 'd');
  if (key.startsWith('scalar.')) return localOf(r.scalars, key.slice(7), 'c');
  const dot = key.lastIndexOf('.');
  const field = key.slice(dot + 1);
  if (!SPARSE_FIELDS.includes(field)) throw new Error(`guard plan: no feature ${key}`);
  const s = localOf(r.sparse, key.slice(0, dot), 's');
  const once = (name: string): string => {
    const local = `${s}_${name}`;
    r.fields.add(local);
    if (known.has(local)) return local;
    known.add(local);
    return `(${local} = ${s}.${name})`;
  };
  // A missing input reads as undefined (its tests go to the > side, its ranges pass), as featureValue gives.
  if (field === 'density') {
    // All three assigned before the test, so a later read of any of them on this path finds its local set.
    const parts = [once('rows'), once('cols'), once('nnz')].join(', ');
    return `(${s} === undefined ? undefined : (${parts}, ${s}_rows * ${s}_cols > 0 ? ${s}_nnz / (${s}_rows * ${s}_cols) : 0))`;
  }
  return `(${s} === undefined ? undefined : ${once(field)})`;
}

/** The step's source: `return ordinal` or `return -1 - ordinal` at each leaf. */
function stepSource(plan: GuardPlan): string {
  const reads: Reads = { sparse: new Map(), dims: new Map(), scalars: new Map(), fields: new Set() };
  let ordinal = 0;
  const body = (n: GuardNode, indent: string, known: Set<string>): string => {
    if ('leaf' in n) {
      const at = ordinal++;
      const here = new Set(known);
      const tests = checkedRanges(plan.ranges, n.checks).map(
        (r) =>
          `${indent}v = ${readOf(r.key, reads, here)};\n${indent}if (v !== undefined && (v < ${literal(r.lo, `the range of ${r.key}`)} || v > ${literal(r.hi, `the range of ${r.key}`)})) return ${-1 - at};\n`,
      );
      return `${tests.join('')}${indent}return ${at};\n`;
    }
    const after = new Set(known);
    const read = readOf(n.feature, reads, after);
    return `${indent}v = ${read};\n${indent}if (v !== undefined && v <= ${literal(n.threshold, `the threshold of ${n.feature}`)}) {\n${body(n.le, `${indent}  `, after)}${indent}}\n${body(n.gt, indent, after)}`;
  };
  const code = body(plan.tree, '  ', new Set());
  const bind = [
    ...[...reads.sparse].map(([name, v]) => `  const ${v} = b.sparse.get(${JSON.stringify(name)});\n`),
    ...[...reads.dims].map(([name, v]) => `  const ${v} = b.dims.get(${JSON.stringify(name)});\n`),
    ...[...reads.scalars].map(([name, v]) => `  const ${v} = b.scalars.get(${JSON.stringify(name)});\n`),
  ];
  const fields = reads.fields.size ? `  let ${[...reads.fields].join(', ')};\n` : '';
  // Reads of a dim or scalar inside the code name the local directly.
  return `${bind.join('')}${fields}  let v;\n${code}`;
}

const compiledSteps = new WeakMap<GuardPlan, GuardStep>();

/** The plan's step, compiled once per plan. */
export function guardStep(plan: GuardPlan): GuardStep {
  let s = compiledSteps.get(plan);
  if (!s) {
    // Names and fields come from the plan's keys, checked above against the known fields; numbers are literals.
    s = new Function('b', stepSource(plan)) as GuardStep;
    compiledSteps.set(plan, s);
  }
  return s;
}

/** The compiled step's source, for tests and for reading. */
export const guardStepSource = stepSource;
