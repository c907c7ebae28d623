/**
 * The values a tensor or scalar of each element type holds: the one rule the
 * runtime's input binding, the command line's readers and the reference
 * interpreter apply (the runtime may not import the compiler's IR, so the
 * rule lives here and ir/types.ts's Dtype is checked against ValueDtype in
 * test/runtime/dtype.test.ts).
 */

/** An element type as the runtime sees it (ir/types.ts Dtype, the wasm manifest's dtype). */
export type ValueDtype = 'f32' | 'f64' | 'i32' | 'i64' | 'bool';

/**
 * Why a value (held as a float64, as inputs are read) is not one a tensor of dtype `d` holds, or undefined where it
 * is: integers must be whole and within the type (i64 as far as a float64 holds integers exactly, +-(2^53 - 1)), a bool
 * 0 or 1, and an f32 a value that rounds to a finite float32 unless it is an infinity or NaN already. Every backend
 * stores the value in the type, so one out of range would wrap or overflow there while the float64 reference kept it.
 */
export function dtypeMisfit(d: ValueDtype, v: number): string | undefined {
  switch (d) {
    case 'f64':
      return undefined;
    case 'f32':
      return Number.isFinite(v) && !Number.isFinite(Math.fround(v)) ? "beyond f32's range" : undefined;
    case 'i32':
      if (!Number.isInteger(v)) return 'not a whole number';
      return v < -(2 ** 31) || v > 2 ** 31 - 1 ? "outside i32's range -2147483648..2147483647" : undefined;
    case 'i64':
      if (!Number.isInteger(v)) return 'not a whole number';
      return Number.isSafeInteger(v) ? undefined : 'outside the i64 values a float64 holds exactly, +-(2^53 - 1)';
    case 'bool':
      return v === 0 || v === 1 ? undefined : 'not 0 or 1';
  }
}
