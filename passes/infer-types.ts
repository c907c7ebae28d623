/**
 * infer-types: states the type (format, dtype, symbolic shape) of every
 * tensor op, temporaries included, by the rules of ir/infer.ts.
 */
import { DiagnosticError, fileSpan, makeDiagnostic } from '../ir/diagnostics.js';
import { InferError, inferStatementType, type ValueInfo } from '../ir/infer.js';
import type { Kernel, Module, Op } from '../ir/module.js';
import type { Pass } from './manager.js';

export function inferKernelTypes(k: Kernel): Kernel {
  const env = new Map<string, ValueInfo>();
  for (const p of k.params) env.set(p.name, { type: p.type });
  const declared = new Map(k.results.map((r) => [r.name, r.type]));
  const visit = (ops: Op[]): Op[] =>
    ops.map((op) => {
      if (op.kind === 'repeat') return { ...op, body: visit(op.body) };
      try {
        const { type, sparsity } = inferStatementType(
          op.indices,
          declared.get(op.result) ?? env.get(op.result)?.type,
          op.expr,
          (n) => env.get(n),
        );
        env.set(op.result, sparsity.root !== undefined ? { type, root: sparsity.root } : { type });
        return { ...op, type };
      } catch (e) {
        if (e instanceof InferError)
          throw new DiagnosticError([
            makeDiagnostic(e.code, `${op.id}: ${e.message}`, e.span ?? op.span ?? fileSpan('<ir>')),
          ]);
        throw e;
      }
    });
  return { ...k, body: visit(k.body) };
}

export const inferTypesPass: Pass = {
  name: 'infer-types',
  description: 'state the format, dtype and symbolic shape of every value',
  typesKnownAfter: true,
  run: (m: Module): Module => ({ kernels: m.kernels.map(inferKernelTypes) }),
};
