/**
 * Integer arithmetic of the reference interpreters (interpret.ts and
 * loops-exec.ts) on float64-held values, as the backends compute it: two's
 * complement wrapping in the declared width (wasm's i32/i64 operations; the
 * C-family printers' unsigned arithmetic, codegen/c/expr.ts), division
 * truncating with a zero divisor giving 0 and MIN / -1 wrapping to MIN, and
 * min/max over nothing holding the type's extreme.
 *
 * i32 is exact. i64 values are float64 here, as they are once any backend
 * returns them: each operation is exact on its operands (BigInt where a
 * result leaves ±(2^53 - 1)) and its result is rounded to the nearest
 * float64. A float64 of 2^63 stands for a value just below it: no i64 holds
 * 2^63, and INT64_MAX rounds to it.
 */
import { reduceIdentity, type ReduceOp } from '../ir/expr.js';
import type { Dtype } from '../ir/types.js';

const I64_MAX = 2n ** 63n - 1n;
const TWO_63 = 2 ** 63;

const big = (x: number): bigint => (x >= TWO_63 ? I64_MAX : BigInt(x));
const wrap64 = (x: bigint): number => Number(BigInt.asIntN(64, x));
const safe = Number.isSafeInteger;

export type IntOp = (a: number, b: number) => number;

/** The identity of a reduction in dtype t: for integers, min and max start from the type's extreme (not ±inf). */
export function identityIn(op: ReduceOp, t: Dtype): number {
  const v = reduceIdentity(op);
  if (v !== Infinity && v !== -Infinity) return v;
  if (t === 'i32') return v > 0 ? 2 ** 31 - 1 : -(2 ** 31);
  if (t === 'i64') return v > 0 ? TWO_63 : -TWO_63;
  return v;
}

/** A constant of dtype t as the emitters print it: an integer ±inf is the type's extreme. */
export function constIn(v: number, t: Dtype | 'index'): number {
  if ((t === 'i32' || t === 'i64') && (v === Infinity || v === -Infinity)) return identityIn(v > 0 ? 'min' : 'max', t);
  return v;
}

export const I32 = {
  add: (a: number, b: number): number => (a + b) | 0,
  sub: (a: number, b: number): number => (a - b) | 0,
  mul: Math.imul,
  neg: (a: number): number => -a | 0,
  abs: (a: number): number => Math.abs(a) | 0,
  div: (a: number, d: number): number => (d === 0 ? 0 : Math.trunc(a / d) | 0),
};

export const I64 = {
  add: (a: number, b: number): number => {
    const r = a + b;
    return safe(a) && safe(b) && safe(r) ? r : wrap64(big(a) + big(b));
  },
  sub: (a: number, b: number): number => {
    const r = a - b;
    return safe(a) && safe(b) && safe(r) ? r : wrap64(big(a) - big(b));
  },
  mul: (a: number, b: number): number => {
    const r = a * b;
    return safe(a) && safe(b) && safe(r) ? r + 0 : wrap64(big(a) * big(b));
  },
  neg: (a: number): number => (safe(a) ? 0 - a : wrap64(-big(a))),
  abs: (a: number): number => (safe(a) ? Math.abs(a) : wrap64(big(a) < 0n ? -big(a) : big(a))),
  // Within ±2^53 the float quotient never rounds across an integer (its error is below 1/|d|), so trunc is exact.
  div: (a: number, d: number): number =>
    d === 0 ? 0 : safe(a) && safe(d) ? Math.trunc(a / d) + 0 : wrap64(big(a) / big(d)),
};

/** The integer arithmetic of dtype t, or undefined for floats and bool. */
export function intOps(t: Dtype | 'index'): typeof I32 | undefined {
  return t === 'i32' ? I32 : t === 'i64' ? I64 : undefined;
}
