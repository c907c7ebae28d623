/**
 * The IR verifier: names defined before use (loop-carried values included),
 * no index shadowing, every statement well typed by the rules of ir/infer.ts
 * and consistent with its stated type, attributes as the registry declares,
 * each op fitting its kind, and every result assigned.
 */
import { fileSpan, makeDiagnostic, type Diagnostic } from './diagnostics.js';
import { walkExpr } from './expr.js';
import { InferError, inferStatementType, type ValueInfo } from './infer.js';
import {
  tensorOps,
  type Attrs,
  type AttrValue,
  type Kernel,
  type Module,
  type Op,
  type TensorOp,
  type Until,
} from './module.js';
import { OP_REGISTRY, allowedAttrs, topReductions, type AttrKind } from './registry.js';
import { isFloatDtype, isIntDtype, typeEquals, typeToString, type TensorType } from './types.js';

export interface VerifyOptions {
  /** Require every tensor op to state its type (true after infer-types). */
  requireTypes?: boolean;
}

function attrFits(v: AttrValue, kind: AttrKind): boolean {
  switch (kind) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'bool':
      return typeof v === 'boolean';
    case 'string[]':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
  }
}

class KernelVerifier {
  readonly errors: Diagnostic[] = [];
  private readonly env = new Map<string, ValueInfo>();
  private readonly paramNames = new Set<string>();
  private readonly ids = new Set<string>();
  private readonly assigned = new Set<string>();
  private readonly declaredResults = new Map<string, TensorType>();

  constructor(
    private readonly k: Kernel,
    private readonly opts: VerifyOptions,
  ) {}

  private err(msg: string, op?: Op): void {
    const where = op ? `${op.id}: ` : '';
    this.errors.push(
      makeDiagnostic('DY5002', `kernel @${this.k.name}: ${where}${msg}`, op?.span ?? this.k.span ?? fileSpan('<ir>')),
    );
  }

  run(): void {
    const seen = new Set<string>();
    for (const d of [...this.k.params, ...this.k.results]) {
      if (seen.has(d.name)) this.err(`'${d.name}' is declared twice`);
      seen.add(d.name);
      if (d.type.format !== 'dense' && d.type.shape.length !== 2)
        this.err(`sparse '${d.name}' must have two dimensions`);
    }
    const paramDims = new Set<string>();
    for (const p of this.k.params) {
      this.paramNames.add(p.name);
      this.env.set(p.name, { type: p.type });
      for (const d of p.type.shape) if (d.kind === 'sym') paramDims.add(d.name);
    }
    for (const r of this.k.results) {
      this.declaredResults.set(r.name, r.type);
      for (const d of r.type.shape)
        if (d.kind === 'sym' && !paramDims.has(d.name))
          this.err(`result '${r.name}' uses dim '${d.name}' that no parameter binds`);
    }
    this.region(this.k.body);
    for (const r of this.k.results) if (!this.assigned.has(r.name)) this.err(`result '${r.name}' is never assigned`);
  }

  private attrs(op: Op, a: Attrs): void {
    const allowed = allowedAttrs(op.kind);
    for (const [key, v] of Object.entries(a)) {
      const kind = allowed[key];
      if (!kind) this.err(`attribute '${key}' is not allowed on ${op.kind}`, op);
      else if (!attrFits(v, kind)) this.err(`attribute '${key}' must be ${kind}`, op);
    }
  }

  private region(ops: readonly Op[]): void {
    for (const op of ops) {
      if (this.ids.has(op.id)) this.err(`op id '${op.id}' is used twice`, op);
      this.ids.add(op.id);
      this.attrs(op, op.attrs);
      if (op.kind === 'repeat') {
        if (op.count.kind === 'lit' && (!Number.isInteger(op.count.value) || op.count.value < 0))
          this.err(`repeat count must be a non-negative integer`, op);
        if (op.count.kind === 'param') {
          const name = op.count.name;
          const p = this.k.params.find((q) => q.name === name);
          if (!p || p.type.shape.length !== 0 || !isIntDtype(p.type.dtype))
            this.err(`repeat count '%${name}' must be an integer scalar parameter`, op);
        }
        if (op.until) this.until(op, op.until);
        this.region(op.body);
      } else this.tensorOp(op);
    }
  }

  /** The frontend's rules DY2034-DY2038, restated on IR that may not have come from it. */
  private until(op: Op, u: Until): void {
    if (op.kind !== 'repeat') return;
    if (!tensorOps(op.body).some((t) => t.result === u.value))
      this.err(`until watches '%${u.value}', which the body does not assign`, op);
    const before = this.env.get(u.value);
    if (!before || this.paramNames.has(u.value))
      this.err(`until watches '%${u.value}', which has no value before the loop`, op);
    else if (before.type.format !== 'dense') this.err(`until watches sparse '%${u.value}'`, op);
    else if (u.within !== undefined && !isFloatDtype(before.type.dtype))
      this.err(`until ... within needs a floating-point value; '%${u.value}' is ${before.type.dtype}`, op);
    if (u.within !== undefined && !(Number.isFinite(u.within) && u.within >= 0))
      this.err(`within tolerance must be a finite non-negative number, got ${u.within}`, op);
  }

  private tensorOp(op: TensorOp): void {
    if (this.paramNames.has(op.result)) return this.err(`assigns to parameter '${op.result}'`, op);
    if (new Set(op.indices).size !== op.indices.length) return this.err(`index repeated on the left side`, op);
    let bad = false;
    walkExpr(op.expr, (n, scope) => {
      if (n.k === 'load' && !this.env.has(n.tensor)) {
        this.err(`'${n.tensor}' is used before it is assigned`, op);
        bad = true;
      }
      if (n.k === 'reduce') {
        for (const i of n.idx) {
          if (op.indices.includes(i) || scope.includes(i)) {
            this.err(`reduction index '${i}' is already in scope`, op);
            bad = true;
          }
        }
      }
    });
    if (bad) return;
    const declared = this.declaredResults.get(op.result) ?? this.env.get(op.result)?.type;
    // One index a dimension on the left: type inference reads the target's shape by index position.
    for (const [what, t] of [
      ['declared', declared],
      ['stated', op.type],
    ] as const)
      if (t && t.shape.length !== op.indices.length)
        return this.err(
          `'${op.result}' is ${what} ${typeToString(t)} (rank ${t.shape.length}) but assigned with ${op.indices.length} index(es) on the left`,
          op,
        );
    if (!op.type && this.opts.requireTypes) this.err(`'${op.result}' has no type`, op);
    try {
      const env = (n: string): ValueInfo | undefined => this.env.get(n);
      const { type, sparsity } = inferStatementType(op.indices, declared ?? op.type, op.expr, env);
      if (op.type && !typeEquals(op.type, type))
        this.err(`stated type ${typeToString(op.type)} but the statement computes ${typeToString(type)}`, op);
      const rule = OP_REGISTRY[op.kind].verify;
      const problem = rule?.(op, { type, sparsity, topReductions: topReductions(op.expr) });
      if (problem) this.err(`${op.kind}: ${problem}`, op);
      const prev = this.env.get(op.result);
      const info: ValueInfo = sparsity.root !== undefined ? { type, root: sparsity.root } : { type };
      if (prev && prev.root !== info.root && type.format !== 'dense') {
        // A value reassigned with another pattern gets a pattern of its own.
        this.env.set(op.result, { type });
      } else this.env.set(op.result, info);
      this.assigned.add(op.result);
    } catch (e) {
      if (e instanceof InferError) this.err(e.message, op);
      else throw e;
    }
  }
}

export function verifyModule(m: Module, opts: VerifyOptions = {}): Diagnostic[] {
  const errors: Diagnostic[] = [];
  const names = new Set<string>();
  for (const k of m.kernels) {
    if (names.has(k.name))
      errors.push(makeDiagnostic('DY5002', `kernel @${k.name} is defined twice`, k.span ?? fileSpan('<ir>')));
    names.add(k.name);
    const v = new KernelVerifier(k, opts);
    v.run();
    errors.push(...v.errors);
  }
  return errors;
}
