/** Value types of the graph IR: formats, dtypes and symbolic shapes. */

export const FORMATS = ['dense', 'csr', 'csc', 'coo'] as const;
export type Format = (typeof FORMATS)[number];
export const SPARSE_FORMATS: readonly Format[] = ['csr', 'csc', 'coo'];

export const DTYPES = ['f32', 'f64', 'i32', 'i64', 'bool'] as const;
export type Dtype = (typeof DTYPES)[number];

export function isFormat(s: string): s is Format {
  return (FORMATS as readonly string[]).includes(s);
}
export function isDtype(s: string): s is Dtype {
  return (DTYPES as readonly string[]).includes(s);
}
export function isSparseFormat(f: Format): boolean {
  return f !== 'dense';
}
export function isFloatDtype(d: Dtype): boolean {
  return d === 'f32' || d === 'f64';
}
export function isIntDtype(d: Dtype): boolean {
  return d === 'i32' || d === 'i64';
}

/**
 * Why a value (held as a float64, as inputs are read) is not one a tensor of dtype `d` holds, or undefined where it
 * is: integers must be whole and within the type (i64 as far as a float64 holds integers exactly, +-(2^53 - 1)), a bool
 * 0 or 1, and an f32 a value that rounds to a finite float32 unless it is an infinity or NaN already. Every backend
 * stores the value in the type, so one out of range would wrap or overflow there while the float64 reference kept it.
 */
export function dtypeMisfit(d: Dtype, v: number): string | undefined {
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

/** A dimension: a symbol bound from the inputs at run time, or a literal. */
export type Dim = { kind: 'sym'; name: string } | { kind: 'lit'; value: number };

export function dimEquals(a: Dim, b: Dim): boolean {
  return a.kind === 'sym' ? b.kind === 'sym' && a.name === b.name : b.kind === 'lit' && a.value === b.value;
}
export function dimToString(d: Dim): string {
  return d.kind === 'sym' ? d.name : String(d.value);
}

/** A tensor type. Rank 0 dense tensors are scalars (printed as the bare dtype). */
export interface TensorType {
  format: Format;
  dtype: Dtype;
  shape: Dim[];
}

export function isScalarType(t: TensorType): boolean {
  return t.shape.length === 0;
}

export function scalarType(dtype: Dtype): TensorType {
  return { format: 'dense', dtype, shape: [] };
}

export function typeEquals(a: TensorType, b: TensorType): boolean {
  return (
    a.format === b.format &&
    a.dtype === b.dtype &&
    a.shape.length === b.shape.length &&
    a.shape.every((d, i) => dimEquals(d, b.shape[i]!))
  );
}

export function typeToString(t: TensorType): string {
  if (isScalarType(t)) return t.dtype;
  return `${t.format}<${t.dtype}>[${t.shape.map(dimToString).join(', ')}]`;
}
