/**
 * Symbolic cost expressions: sums of monomials over feature symbols, e.g.
 * `2*nnz(A)*k + 4*rows(A)`. The compiler's annotate-cost pass builds them
 * from the IR; the planner and generated runtimes bind them to the features
 * of the data at hand. Text form: terms joined by ' + ', factors by '*', a
 * factor is a number, a dim symbol, `nnz(X)`, `rows(X)` or `cols(X)`, with an
 * optional integer exponent `^-1`.
 */

/** factor -> exponent; the empty monomial is the constant 1. */
export type Monomial = Map<string, number>;

export class Poly {
  /** monomial key -> coefficient */
  readonly terms = new Map<string, number>();

  static constant(c: number): Poly {
    const p = new Poly();
    if (c !== 0) p.terms.set('', c);
    return p;
  }

  static symbol(name: string): Poly {
    const p = new Poly();
    p.terms.set(name, 1);
    return p;
  }

  add(o: Poly): Poly {
    const p = new Poly();
    for (const [k, c] of this.terms) p.terms.set(k, c);
    for (const [k, c] of o.terms) {
      const s = (p.terms.get(k) ?? 0) + c;
      if (s === 0) p.terms.delete(k);
      else p.terms.set(k, s);
    }
    return p;
  }

  mul(o: Poly): Poly {
    let out = new Poly();
    for (const [ka, ca] of this.terms) {
      for (const [kb, cb] of o.terms) {
        const m = mergeMonomials(parseKey(ka), parseKey(kb));
        const q = new Poly();
        q.terms.set(monomialKey(m), ca * cb);
        out = out.add(q);
      }
    }
    return out;
  }

  scale(c: number): Poly {
    return this.mul(Poly.constant(c));
  }

  /** Divides by a single factor (cancels when present). */
  divBy(factor: string): Poly {
    const inv = new Poly();
    inv.terms.set(monomialKey(new Map([[factor, -1]])), 1);
    return this.mul(inv);
  }

  isZero(): boolean {
    return this.terms.size === 0;
  }

  toString(): string {
    if (this.terms.size === 0) return '0';
    const keys = [...this.terms.keys()].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0));
    return keys
      .map((k) => {
        const c = this.terms.get(k)!;
        if (k === '') return fmt(c);
        return c === 1 ? k : `${fmt(c)}*${k}`;
      })
      .join(' + ');
  }

  /** Value under a binding of every symbol; throws on an unbound one. */
  evaluate(bind: (factor: string) => number | undefined): number {
    let total = 0;
    for (const [k, c] of this.terms) {
      let v = c;
      for (const [f, e] of parseKey(k)) {
        const x = bind(f);
        if (x === undefined) throw new Error(`cost expression needs '${f}', which is not bound`);
        v *= e === 1 ? x : Math.pow(x, e);
      }
      total += v;
    }
    return total;
  }

  /** Every factor the expression mentions. */
  symbols(): Set<string> {
    const out = new Set<string>();
    for (const k of this.terms.keys()) for (const f of parseKey(k).keys()) out.add(f);
    return out;
  }
}

function fmt(c: number): string {
  return Number.isInteger(c) ? String(c) : String(c);
}

function mergeMonomials(a: Monomial, b: Monomial): Monomial {
  const m = new Map(a);
  for (const [f, e] of b) {
    const s = (m.get(f) ?? 0) + e;
    if (s === 0) m.delete(f);
    else m.set(f, s);
  }
  return m;
}

function monomialKey(m: Monomial): string {
  return [...m.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([f, e]) => (e === 1 ? f : `${f}^${e}`))
    .join('*');
}

const FACTOR = /^(?:[A-Za-z_][A-Za-z0-9_]*|(?:nnz|rows|cols)\([A-Za-z_][A-Za-z0-9_]*\))(?:\^-?[0-9]+)?$/;

function parseKey(k: string): Monomial {
  const m: Monomial = new Map();
  if (k === '') return m;
  for (const part of k.split('*')) {
    const [f, e] = part.split('^') as [string, string | undefined];
    m.set(f, e === undefined ? 1 : Number(e));
  }
  return m;
}

/** Parses the text form; throws an Error naming the bad term. */
export function parsePoly(text: string): Poly {
  const p = new Poly();
  const t = text.trim();
  if (t === '0') return p;
  for (const term of t.split(' + ')) {
    const factors = term.split('*');
    let coef = 1;
    const m: Monomial = new Map();
    for (const f of factors) {
      if (/^-?[0-9.]+(?:e[+-]?[0-9]+)?$/.test(f)) coef *= Number(f);
      else if (FACTOR.test(f)) {
        const [name, e] = f.split('^') as [string, string | undefined];
        m.set(name, (m.get(name) ?? 0) + (e === undefined ? 1 : Number(e)));
      } else throw new Error(`bad cost term '${term}' in '${text}'`);
    }
    p.terms.set(monomialKey(m), (p.terms.get(monomialKey(m)) ?? 0) + coef);
  }
  return p;
}

/** An expression as flat terms (coefficient, factors with exponents), for evaluating many times. */
export type CompiledPoly = readonly { coef: number; factors: readonly (readonly [string, number])[] }[];

const compiled = new Map<string, CompiledPoly>();

/**
 * The text form compiled once and kept: a runtime binds the same few
 * expressions for every input, and parsing them each time cost more than
 * the rest of its decision.
 */
export function compilePoly(text: string): CompiledPoly {
  let c = compiled.get(text);
  if (!c) {
    const p = parsePoly(text);
    c = [...p.terms].map(([k, coef]) => ({ coef, factors: [...parseKey(k)] }));
    compiled.set(text, c);
  }
  return c;
}

export function evaluateCompiled(c: CompiledPoly, bind: (factor: string) => number | undefined): number {
  let total = 0;
  for (const { coef, factors } of c) {
    let v = coef;
    for (const [f, e] of factors) {
      const x = bind(f);
      if (x === undefined) throw new Error(`cost expression needs '${f}', which is not bound`);
      v *= e === 1 ? x : Math.pow(x, e);
    }
    total += v;
  }
  return total;
}
