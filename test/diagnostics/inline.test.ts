/**
 * Inline expected-diagnostic tests: each .dy file in this folder marks the
 * lines that must be reported with a trailing comment `# expect DYnnnn`
 * (several codes may follow). The set of (line, code) pairs reported must
 * equal the set expected, no more and no less.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import { formatDiagnostic } from '../../ir/diagnostics.js';

const here = dirname(fileURLToPath(import.meta.url));
const files = readdirSync(here)
  .filter((f) => f.endsWith('.dy'))
  .sort();

function expected(src: string): string[] {
  const out: string[] = [];
  src.split('\n').forEach((line, i) => {
    const m = /#\s*expect\s+((?:DY\d{4}\s*)+)$/.exec(line);
    if (m) for (const code of m[1]!.trim().split(/\s+/)) out.push(`${i + 1}:${code}`);
  });
  return out.sort();
}

describe('inline expected diagnostics', () => {
  it('has test programs', () => expect(files.length).toBeGreaterThan(5));
  for (const f of files) {
    it(f, () => {
      const src = readFileSync(join(here, f), 'utf8');
      const want = expected(src);
      const r = compileSource(src, f);
      const got = r.diagnostics.map((d) => `${d.span.line}:${d.code}`).sort();
      expect(got, r.diagnostics.map((d) => formatDiagnostic(d, src)).join('\n')).toEqual(want);
      // Reported in source order, whatever order the checker found them in.
      const at = r.diagnostics.map((d) => d.span.line * 1e6 + d.span.col);
      expect(at, f).toEqual([...at].sort((a, b) => a - b));
      if (want.length > 0) expect(r.module).toBeUndefined();
      for (const d of r.diagnostics) {
        const text = formatDiagnostic(d, src);
        expect(text).toMatch(new RegExp(`^${f.replace('.', '\\.')}:\\d+:\\d+: error DY\\d{4}: `));
        expect(text.split('\n')[2]).toMatch(/^\s*\^~*$/);
      }
    });
  }
});
