/**
 * Warnings of the checker (issue 16 item 7): DY2040 for an implicit sum
 * whose index occurs in only one operand of a product, the typo `x[k]` for
 * `x[j]` in spmv among them. A warning leaves the program valid; the
 * examples have none.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import { formatDiagnostic } from '../../ir/diagnostics.js';
import { EXAMPLES } from '../helpers/cli.js';

const kernel = (body: string[]): string =>
  [
    'kernel k(A: csr<f32>[m, n], x: dense<f32>[n], z: dense<f32>[m], d: f32) -> (y: dense<f32>[m]) {',
    ...body.map((l) => `  ${l}`),
    '}',
  ].join('\n') + '\n';

function warnings(src: string): string[] {
  const r = compileSource(src, 'w.dy');
  expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  expect(r.module).toBeDefined();
  return r.diagnostics.map((d) => formatDiagnostic(d, src));
}

describe('DY2040: an implicit sum confined to one operand of a product', () => {
  it('x[k] typed for x[j] in spmv: one warning on the product, naming both indices', () => {
    expect(warnings(kernel(['y[i] = A[i, j] * x[k];']))).toEqual([
      [
        'w.dy:2:10: warning DY2040: indices j and k are each summed over but occur in only one operand (j in A[i, j], k in x[k]), so each operand is summed on its own before the product; did you mean one index that the operands share? (write the sums explicitly if this is meant)',
        '    y[i] = A[i, j] * x[k];',
        '           ^~~~~~~~~~~~~~',
      ].join('\n'),
    ]);
  });

  it('one index confined, the other operand indexed by the left side: the warning points at the access', () => {
    const [w] = warnings(kernel(['y[i] = A[i, j] * z[i];']));
    expect(w!.split('\n')).toEqual([
      "w.dy:2:10: warning DY2040: index 'j' is summed over but occurs only in A[i, j], so A[i, j] is summed over j on its own and the sum multiplies z[i]; did you mean j in another operand as well? (write sum(j: ...) if this is meant)",
      '    y[i] = A[i, j] * z[i];',
      '           ^~~~~~~',
    ]);
  });

  it('inside a scaled product and inside an explicit reduction too', () => {
    expect(warnings(kernel(['y[i] = d * A[i, j] * x[k];'])).map((w) => w.split('\n')[0])).toEqual([
      expect.stringMatching(/^w\.dy:2:10: warning DY2040: indices j and k /),
    ]);
    expect(warnings(kernel(['y[i] = max(j: A[i, j] * x[k]);'])).map((w) => w.split('\n')[0])).toEqual([
      expect.stringMatching(/^w\.dy:2:27: warning DY2040: index 'k' is summed over but occurs only in x\[k\]/),
    ]);
  });

  it('no warning where the sum is meant: shared index, a sum alone, a scalar factor, an explicit sum', () => {
    for (const stmt of [
      'y[i] = A[i, j] * x[j];',
      'y[i] = A[i, j];',
      'y[i] = d * A[i, j];',
      'y[i] = 2 * A[i, j] + z[i];',
      'y[i] = sum(j: A[i, j]) * z[i];',
      'y[i] = A[i, j] * x[j] * z[i];',
    ])
      expect(warnings(kernel([stmt])), stmt).toEqual([]);
  });

  it('the examples check without a warning', () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.dy'));
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const f of files) {
      const src = readFileSync(join(EXAMPLES, f), 'utf8');
      expect(compileSource(src, f).diagnostics, f).toEqual([]);
    }
  });
});
