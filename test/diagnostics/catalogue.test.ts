import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DIAGNOSTIC_CODES } from '../../ir/diagnostics.js';
import { DATA_ERROR_CODES } from '../../runtime/errors.js';

describe('diagnostic catalogue', () => {
  it('compiler and data codes are disjoint and well formed', () => {
    const a = Object.keys(DIAGNOSTIC_CODES);
    const b = Object.keys(DATA_ERROR_CODES);
    expect(a.filter((c) => b.includes(c))).toEqual([]);
    for (const c of [...a, ...b]) expect(c).toMatch(/^DY\d{4}$/);
    for (const c of b) expect(c.startsWith('DY3')).toBe(true);
    for (const c of a) expect(c.startsWith('DY3')).toBe(false);
  });
  it('docs/DIAGNOSTICS.md lists every code with its meaning', () => {
    const doc = readFileSync(new URL('../../docs/DIAGNOSTICS.md', import.meta.url), 'utf8');
    for (const [code, meaning] of Object.entries({ ...DIAGNOSTIC_CODES, ...DATA_ERROR_CODES }))
      expect(doc).toContain(`| ${code} | ${meaning} |`);
  });
});
