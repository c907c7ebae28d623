/**
 * The runtime's whole decision on gcn's guards as the decision benches time
 * it (bench/guards.ts, bench/decision-stream.ts): a chooser, a decider and a
 * switching policy over one matrix's inputs, with every partition taken as
 * runnable (they time decisions, not devices), given the same inputs again,
 * a pattern it has not seen, or the matrix's pattern in new arrays. The
 * runtime's classes are passed in, so a bench can time another build's.
 */
import type { Kernel } from '../ir/module.js';
import { wasmManifest } from '../codegen/wasm/emit.js';
import type { Chooser } from '../runtime/engine/choose.js';
import type { Decider } from '../runtime/engine/decide.js';
import type { RuntimeConfig } from '../runtime/engine/types.js';
import { treeGuards } from '../runtime/guards/index.js';
import type { GuardPlan } from '../runtime/guards/types.js';
import type { PlanOptions } from '../runtime/plan/dp.js';
import type { PlanSpec } from '../runtime/plan/types.js';
import type { SwitchPolicy } from '../runtime/policy/policy.js';
import type { SystemSpec } from '../runtime/system/types.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../runtime/tensor.js';

/** gcn's parameters as its runtime binds them. */
export const GCN_PARAMS: RuntimeConfig['params'] = [
  { name: 'A', kind: 'sparse', shape: ['n', 'n'] },
  { name: 'X', kind: 'dense', shape: ['n', 'f'] },
  { name: 'W1', kind: 'dense', shape: ['f', 'h'] },
  { name: 'W2', kind: 'dense', shape: ['h', 'c'] },
];

/** Throws where examples/gcn.dy's parameters are no longer GCN_PARAMS' (the benches bind inputs by these names). */
export function checkGcnParams(kernel: Kernel): void {
  const missing = kernel.params.map((p) => p.name).filter((n) => !GCN_PARAMS.some((p) => p.name === n));
  if (missing.length > 0) throw new Error(`gcn's parameters changed (${missing.join(', ')}): update GCN_PARAMS`);
}

/**
 * A runtime configuration of gcn's guards for the throughput objective, with the guard function the tree itself
 * (treeGuards: what the generated code computes, without generating it).
 */
export function gcnTreeConfig(g: { kernel: Kernel; spec: PlanSpec; plan: GuardPlan }): RuntimeConfig {
  checkGcnParams(g.kernel);
  return {
    program: 'gcn',
    programHash: 'bench',
    kernel: g.kernel.name,
    manifest: wasmManifest(g.kernel, [], true),
    spec: g.spec,
    objective: 'throughput',
    guards: { throughput: g.plan },
    guard: treeGuards({ throughput: g.plan }, 'throughput'),
    params: GCN_PARAMS,
  };
}

/** The runtime classes a decision goes through, from this build or another (bench/decision-stream.ts --against). */
export interface DecisionClasses {
  Chooser: typeof Chooser;
  Decider: typeof Decider;
  SwitchPolicy: typeof SwitchPolicy;
  /** Problems the build's memo keeps (runtime/engine/memo.ts): a stream of new patterns cycles over more. */
  memoProblems: number;
}

/**
 * Pattern k of m (1 <= k < nnz): m with its last k stored entries dropped (the last rows shorter), so its entry
 * count, and so its features, differ from every other k's. Its row pointers are a copy; its columns and values
 * views of m's.
 */
export function variantOf(m: CsrMatrix, k: number): CsrMatrix {
  const nnz = m.rowPtr[m.rows]! - m.rowPtr[0]!;
  if (m.rowPtr[0] !== 0 || k < 1 || k >= nnz) throw new Error(`variantOf: cannot drop ${k} of ${nnz} entries`);
  const rowPtr = m.rowPtr.slice();
  for (let r = m.rows; r > 0 && rowPtr[r]! > nnz - k; r--) rowPtr[r] = nnz - k;
  return { ...m, rowPtr, colIdx: m.colIdx.subarray(0, nnz - k), values: m.values.subarray(0, nnz - k) };
}

/** Which inputs a decision gets: the same tensors again, a pattern never seen (a variant), or m's pattern in new arrays. */
export type Next = 'same' | 'new' | 'copy';

export interface Decisions {
  /** The whole decision (choose, decide, the running partition's predicted period) on the next inputs. */
  decide: (next: Next) => number;
  chooser: Chooser;
  inputs: (next: Next) => Record<string, Tensor>;
}

/**
 * A runtime's decision state for gcn on matrix m (its dense inputs at widths 64, 64, 16). 'new' takes m's variants
 * in turn, more of them than the memo keeps, so none is found again; 'copy' gives fresh views of m's own arrays,
 * which the runtime's feature cache has not seen, with m's features.
 */
export function decisionsOn(
  rt: DecisionClasses,
  cfg: RuntimeConfig,
  system: SystemSpec,
  popts: PlanOptions,
  m: CsrMatrix,
): Decisions {
  const denseOf = (shape: number[]): DenseTensor => ({
    format: 'dense',
    shape,
    data: new Float64Array(shape[0]! * shape[1]!),
  });
  const dense: Record<string, Tensor> = {
    A: m,
    X: denseOf([m.rows, 64]),
    W1: denseOf([64, 64]),
    W2: denseOf([64, 16]),
  };
  const chooser = new rt.Chooser(cfg, system, () => true);
  const decider = new rt.Decider(system, () => popts, chooser.memo);
  const policy = new rt.SwitchPolicy();
  const count = 2 * rt.memoProblems + 1;
  // Made when first used (a stream meets all of them, a table a few).
  const variants: CsrMatrix[] = [];
  let k = 0;
  const inputs = (next: Next): Record<string, Tensor> => {
    if (next === 'same') return dense;
    if (next === 'copy') return { ...dense, A: { ...m, rowPtr: m.rowPtr.subarray(0), colIdx: m.colIdx.subarray(0) } };
    k = (k % count) + 1;
    const v = (variants[k - 1] ??= variantOf(m, k));
    // Its arrays as views each time: a variant met again is a pattern the feature cache has not seen either.
    return { ...dense, A: { ...v, rowPtr: v.rowPtr.subarray(0), colIdx: v.colIdx.subarray(0) } };
  };
  const decide = (next: Next): number => {
    const c = chooser.choose(inputs(next));
    const d = decider.decide(c, policy);
    if (d.switch) decider.switchTo(c.selected, c);
    return chooser.memo.mapping(c.problem, decider.current ?? c.selected)?.periodMs ?? 0;
  };
  return { decide, chooser, inputs };
}
