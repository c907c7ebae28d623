/** The static check that keeps generated programs inside the comparison's tolerances (`Info`). */
import { isFloat, MAX_TRIPS, type Assign, type Dim, type Node, type Stmt, type Ty, type Val } from './program.js';

/**
 * What the generator knows of a value, to keep programs inside the
 * tolerances. The reference computes in float64; an f32 backend differs from
 * it only by rounding, which the 1e-4 relative tolerance covers where values
 * are well conditioned, but not where a comparison or a `stable` test could
 * go the other way. So every condition, and every value a convergence loop
 * watches, must be `exact`: computed from the inputs (multiples of 1/8, at
 * most 2 in magnitude) by +, -, *, min, max, abs, relu, sums and divisions
 * by powers of two only, with `mag * 2^frac` within the dtype's mantissa,
 * so that f32 and f64 both hold it without rounding. Other float values stay
 * below 1e6 (no overflow, and little cancellation). i64 values stay below
 * 2^50 and never meet the type's extremes in arithmetic: the reference
 * rounds i64 intermediates beyond 2^53 (docs/LANGUAGE.md, *Integers wrap*),
 * so only there may it differ. i32 wraps exactly everywhere: no limit.
 */
export interface Info {
  exact: boolean;
  /** A bound on the magnitude of its finite values. */
  mag: number;
  /** Binary digits after the point (when exact). */
  frac: number;
  /** May be +inf (floats) or the integer type's largest value: an empty min reduction, say; `lo` likewise below. */
  hi: boolean;
  lo: boolean;
}

const BOOL_INFO: Info = { exact: true, mag: 1, frac: 0, hi: false, lo: false };
const MANTISSA = { f32: 24, f64: 53 };
export const isExt = (i: Info | undefined): boolean => i !== undefined && (i.hi || i.lo);
const finite = (exact: boolean, mag: number, frac = 0): Info => ({ exact, mag, frac, hi: false, lo: false });
/** Either extreme where an operand has one (the sign is not followed through these operations). */
const anyExt = (...xs: Info[]): { hi: boolean; lo: boolean } => {
  const e = xs.some(isExt);
  return { hi: e, lo: e };
};

export class Checker {
  readonly problems: string[] = [];
  constructor(
    readonly env: Map<string, Info>,
    readonly extent: (d: Dim) => number,
  ) {}

  private settle(i: Info, ty: Ty): Info {
    if (ty === 'bool') return BOOL_INFO;
    if (ty === 'i64' && i.mag > 2 ** 50) this.problems.push('an i64 value may pass 2^50');
    if (ty === 'i32' || ty === 'i64') return { ...i, exact: true, frac: 0 };
    const exact = i.exact && i.mag * 2 ** i.frac < 2 ** MANTISSA[ty];
    if (!exact && i.mag > 1e6) this.problems.push(`an inexact ${ty} value may reach ${i.mag.toPrecision(3)}`);
    return { ...i, exact };
  }

  private arith(ty: Ty, ...xs: Info[]): void {
    if (ty === 'i64' && xs.some(isExt)) this.problems.push('i64 arithmetic on a possible type extreme');
  }

  info(e: Node, ty: Ty): Info {
    return this.settle(this.raw(e, ty), ty);
  }

  private raw(e: Node, ty: Ty): Info {
    switch (e.k) {
      case 'ref': {
        const i = this.env.get(e.name);
        if (!i) {
          this.problems.push(`'${e.name}' read before it has a value`);
          return BOOL_INFO;
        }
        return i;
      }
      case 'lit': {
        if (!Number.isFinite(e.value)) return { ...finite(true, 0), hi: e.value > 0, lo: e.value < 0 };
        const v = Math.abs(e.value);
        for (let f = 0; f <= 4; f++) if (Number.isInteger(v * 2 ** f)) return finite(true, v, f);
        return finite(false, v);
      }
      case 'dim':
        return finite(true, this.extent(e.name));
      case 'un': {
        const a = this.info(e.a, ty);
        switch (e.op) {
          case 'neg':
            this.arith(ty, a);
            return { ...a, hi: a.lo, lo: a.hi };
          case 'abs':
            this.arith(ty, a);
            // abs of an integer's smallest value is itself (it wraps); of -inf, +inf.
            return { ...a, hi: isExt(a), lo: isFloat(ty) ? false : a.lo };
          case 'relu':
            return { ...a, lo: false };
          case 'exp':
            if (a.mag > 10) this.problems.push('exp of a value that may pass 10');
            return { ...finite(false, Math.exp(a.mag)), hi: a.hi };
          case 'log1':
            return { ...finite(false, Math.log1p(a.mag)), hi: isExt(a) };
          case 'sqrt':
            // Steep at 0: only where f32 and f64 agree on the operand.
            if (!a.exact) this.problems.push('sqrt of an inexact value');
            return { ...finite(false, Math.sqrt(a.mag)), hi: isExt(a) };
          case 'sqrt1':
          case 'powHalf':
            return { ...finite(false, Math.sqrt(a.mag + 1)), hi: isExt(a) };
          case 'tanh':
          case 'sigmoid':
          case 'powInv':
            return finite(false, 1);
          case 'pow2':
            return { ...finite(false, a.mag ** 2), hi: isExt(a) };
          case 'pow3':
            return { ...finite(false, a.mag ** 3), hi: a.hi, lo: a.lo };
        }
        break;
      }
      case 'bin': {
        const a = this.info(e.a, ty);
        const b = this.info(e.b, ty);
        const both = a.exact && b.exact;
        switch (e.op) {
          case '+':
            this.arith(ty, a, b);
            return {
              exact: both,
              mag: a.mag + b.mag,
              frac: Math.max(a.frac, b.frac),
              hi: a.hi || b.hi,
              lo: a.lo || b.lo,
            };
          case '-':
            this.arith(ty, a, b);
            return {
              exact: both,
              mag: a.mag + b.mag,
              frac: Math.max(a.frac, b.frac),
              hi: a.hi || b.lo,
              lo: a.lo || b.hi,
            };
          case '*':
            this.arith(ty, a, b);
            // 0 * inf is NaN but a rounding's residue times inf is inf: where f32 and f64 may differ on 0, no inf.
            if ((isExt(a) && !b.exact) || (isExt(b) && !a.exact))
              this.problems.push('an inexact value times a possible inf');
            return { exact: both, mag: a.mag * b.mag, frac: a.frac + b.frac, ...anyExt(a, b) };
          case '/': {
            this.arith(ty, a, b);
            if (!isFloat(ty)) return { ...finite(true, a.mag), ...anyExt(a, b) };
            if (e.b.k === 'lit' && e.b.value !== 0 && Number.isInteger(Math.log2(Math.abs(e.b.value))))
              return { ...a, frac: a.frac + Math.max(0, Math.log2(Math.abs(e.b.value))), ...anyExt(a, b) };
            const atLeastOne =
              (e.b.k === 'lit' && Math.abs(e.b.value) >= 1) ||
              e.b.k === 'dim' ||
              (e.b.k === 'bin' && e.b.op === '+' && e.b.a.k === 'un' && e.b.a.op === 'abs' && e.b.b.k === 'lit');
            if (!atLeastOne) this.problems.push('a float division by something that may be near 0');
            return { ...finite(false, a.mag), ...anyExt(a, b) };
          }
          case 'min':
          case 'max': {
            const r = finite(both, Math.max(a.mag, b.mag), Math.max(a.frac, b.frac));
            // min keeps an operand's -inf whatever the other, and +inf only where both may be.
            return e.op === 'min'
              ? { ...r, lo: a.lo || b.lo, hi: a.hi && b.hi }
              : { ...r, hi: a.hi || b.hi, lo: a.lo && b.lo };
          }
        }
        break;
      }
      case 'sel': {
        this.info(e.c, 'bool');
        const a = this.info(e.a, ty);
        const b = this.info(e.b, ty);
        return {
          ...finite(a.exact && b.exact, Math.max(a.mag, b.mag), Math.max(a.frac, b.frac)),
          hi: a.hi || b.hi,
          lo: a.lo || b.lo,
        };
      }
      case 'cmp': {
        const a = this.info(e.a, e.ty);
        const b = this.info(e.b, e.ty);
        if (!(a.exact || e.a.k === 'lit') || !(b.exact || e.b.k === 'lit'))
          this.problems.push('a comparison of a value f32 may round');
        return BOOL_INFO;
      }
      case 'logic':
        this.info(e.a, 'bool');
        this.info(e.b, 'bool');
        return BOOL_INFO;
      case 'not':
        this.info(e.a, 'bool');
        return BOOL_INFO;
      case 'red': {
        if (e.op === 'any' || e.op === 'all') {
          this.info(e.body, 'bool');
          return BOOL_INFO;
        }
        const b = this.info(e.body, ty);
        if (e.op === 'sum') {
          this.arith(ty, b);
          return { ...b, mag: b.mag * this.extent(e.dim) };
        }
        // Over no elements (an empty row, or a dim of 0): the identity, +inf for min (the integer type's largest
        // value), -inf for max.
        return e.op === 'min' ? { ...b, hi: true } : { ...b, lo: true };
      }
    }
    return BOOL_INFO;
  }

  assign(s: Assign): void {
    this.env.set(s.lhs, this.info(s.rhs, s.ty));
  }

  stmt(s: Stmt, countOf: (param: string) => number): void {
    if (s.k === 'assign') return this.assign(s);
    const trips = 'lit' in s.count ? s.count.lit : countOf(s.count.param);
    for (let t = 0; t < trips; t++) {
      for (const b of s.body) this.stmt(b, countOf);
      if (s.until && !this.env.get(s.until.name)?.exact)
        this.problems.push(`the loop watches ${s.until.name}, which f32 may round`);
    }
  }
}

/** What `value` draws for a parameter: floats multiples of 1/8 in [-2, 2], integers in [-3, 4] (i32 some near its limits). */
export function paramInfo(v: Val): Info {
  if (v.ty === 'bool') return BOOL_INFO;
  if (isFloat(v.ty)) return finite(true, 2, 3);
  if (v.ty === 'i32') return finite(true, 2 ** 31);
  return finite(true, v.name === 'reps' ? MAX_TRIPS : 4);
}
