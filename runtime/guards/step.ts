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
}

/** The expression reading a feature key, registering the local it reads from. */
function readOf(key: string, r: Reads): string {
  const local = (m: Map<string, string>, name: string, prefix: string): string => {
    let v = m.get(name);
    if (v === undefined) m.set(name, (v = `${prefix}${m.size}`));
    return v;
  };
  if (key.startsWith('dim.')) return local(r.dims, key.slice(4), 'd');
  if (key.startsWith('scalar.')) return local(r.scalars, key.slice(7), 'c');
  const dot = key.lastIndexOf('.');
  const field = key.slice(dot + 1);
  if (!SPARSE_FIELDS.includes(field)) throw new Error(`guard plan: no feature ${key}`);
  const s = local(r.sparse, key.slice(0, dot), 's');
  // A missing input reads as undefined (its tests go to the > side, its ranges pass), as featureValue gives.
  if (field === 'density')
    return `(${s} === undefined ? undefined : ${s}.rows * ${s}.cols > 0 ? ${s}.nnz / (${s}.rows * ${s}.cols) : 0)`;
  return `(${s} === undefined ? undefined : ${s}.${field})`;
}

/** The step's source: `return ordinal` or `return -1 - ordinal` at each leaf. */
function stepSource(plan: GuardPlan): string {
  const reads: Reads = { sparse: new Map(), dims: new Map(), scalars: new Map() };
  let ordinal = 0;
  const body = (n: GuardNode, indent: string): string => {
    if ('leaf' in n) {
      const at = ordinal++;
      const tests = checkedRanges(plan.ranges, n.checks).map(
        (r) =>
          `${indent}v = ${readOf(r.key, reads)};\n${indent}if (v !== undefined && (v < ${literal(r.lo, `the range of ${r.key}`)} || v > ${literal(r.hi, `the range of ${r.key}`)})) return ${-1 - at};\n`,
      );
      return `${tests.join('')}${indent}return ${at};\n`;
    }
    const read = readOf(n.feature, reads);
    return `${indent}v = ${read};\n${indent}if (v !== undefined && v <= ${literal(n.threshold, `the threshold of ${n.feature}`)}) {\n${body(n.le, `${indent}  `)}${indent}}\n${body(n.gt, indent)}`;
  };
  const code = body(plan.tree, '  ');
  const bind = [
    ...[...reads.sparse].map(([name, v]) => `  const ${v} = b.sparse.get(${JSON.stringify(name)});\n`),
    ...[...reads.dims].map(([name, v]) => `  const ${v} = b.dims.get(${JSON.stringify(name)});\n`),
    ...[...reads.scalars].map(([name, v]) => `  const ${v} = b.scalars.get(${JSON.stringify(name)});\n`),
  ];
  // Reads of a dim or scalar inside the code name the local directly.
  return `${bind.join('')}  let v;\n${code}`;
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
