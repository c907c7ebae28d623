/** Sorted, disjoint, non-adjacent half-open byte ranges [a, b): what part of a buffer holds the current value. */
export type Intervals = [number, number][];

export function add(xs: Intervals, a: number, b: number): Intervals {
  if (b <= a) return xs;
  const out: Intervals = [];
  let lo = a;
  let hi = b;
  for (const [x, y] of xs) {
    if (y < lo || x > hi) out.push([x, y]);
    else {
      lo = Math.min(lo, x);
      hi = Math.max(hi, y);
    }
  }
  out.push([lo, hi]);
  return out.sort((p, q) => p[0] - q[0]);
}

/** The parts of [a, b) that `xs` does not cover. */
export function missing(xs: Intervals, a: number, b: number): Intervals {
  const out: Intervals = [];
  let at = a;
  for (const [x, y] of xs) {
    if (y <= at) continue;
    if (x >= b) break;
    if (x > at) out.push([at, Math.min(x, b)]);
    at = Math.max(at, y);
    if (at >= b) break;
  }
  if (at < b) out.push([at, b]);
  return out;
}

/** The parts of [a, b) that `xs` covers. */
export function within(xs: Intervals, a: number, b: number): Intervals {
  const out: Intervals = [];
  for (const [x, y] of xs) {
    const lo = Math.max(x, a);
    const hi = Math.min(y, b);
    if (lo < hi) out.push([lo, hi]);
  }
  return out;
}
