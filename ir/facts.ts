/**
 * Per-op facts of a typed kernel (type, sparsity, operand types), derived in
 * program order so pattern roots follow the values as they are reassigned.
 * Classification, the interpreter and later passes all read these.
 */
import { inferStatementType, type Sparsity, type ValueInfo } from './infer.js';
import type { Kernel, Op, TensorOp } from './module.js';
import type { TensorType } from './types.js';

export interface OpInfo {
  op: TensorOp;
  type: TensorType;
  sparsity: Sparsity;
  /** Each value the op reads, as it stands when the op runs. */
  operands: Map<string, ValueInfo>;
}

export interface KernelFacts {
  ops: Map<string, OpInfo>;
  /** Type of every value of the kernel (a value keeps one type throughout). */
  values: Map<string, TensorType>;
}

export function kernelFacts(k: Kernel): KernelFacts {
  const env = new Map<string, ValueInfo>();
  const values = new Map<string, TensorType>();
  for (const p of k.params) {
    env.set(p.name, { type: p.type });
    values.set(p.name, p.type);
  }
  const declared = new Map(k.results.map((r) => [r.name, r.type]));
  const ops = new Map<string, OpInfo>();
  const visit = (list: readonly Op[]): void => {
    for (const op of list) {
      if (op.kind === 'repeat') {
        visit(op.body);
        continue;
      }
      const operands = new Map<string, ValueInfo>();
      const get = (n: string): ValueInfo | undefined => {
        const v = env.get(n);
        if (v) operands.set(n, v);
        return v;
      };
      const { type, sparsity } = inferStatementType(
        op.indices,
        declared.get(op.result) ?? op.type ?? env.get(op.result)?.type,
        op.expr,
        get,
      );
      ops.set(op.id, { op, type, sparsity, operands });
      env.set(op.result, sparsity.root !== undefined ? { type, root: sparsity.root } : { type });
      values.set(op.result, type);
    }
  };
  visit(k.body);
  return { ops, values };
}
