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
