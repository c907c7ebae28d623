/**
 * A checker error inside an implicit sum points at the product the sum was made from, not at the whole statement
 * (frontend/implicit-sum.ts rebuilds the products, each spanning its factors).
 */
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';

describe('spans of rebuilt products', () => {
  it('a dtype mismatch in an implicitly summed product points at the product', () => {
    const src =
      'kernel k(A: dense<f32>[n, n], z: dense<f64>[n]) -> (y: dense<f64>[n]) {\n  y[i] = 2 + A[i, j] * z[j];\n}\n';
    const d = compileSource(src, 't.dy').diagnostics.find((x) => x.code === 'DY2007')!;
    expect(d).toBeDefined();
    expect(src.slice(d.span.offset, d.span.end)).toBe('A[i, j] * z[j]');
  });

  it('factors hoisted out of the sum point at the product they came from, brackets whole', () => {
    const src =
      'kernel k(A: csr<f32>[n, n], x: dense<f32>[n], c: i32, d: f32) -> (y: dense<f32>[n]) {\n  y[i] = (c * x[j]) * (A[i, j] * d);\n}\n';
    const d = compileSource(src, 't.dy').diagnostics.find((x) => x.code === 'DY2007')!;
    expect(d).toBeDefined();
    expect(src.slice(d.span.offset, d.span.end)).toBe('(c * x[j]) * (A[i, j] * d)');
  });
});
