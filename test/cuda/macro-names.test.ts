/**
 * A macro of a standard header replaces a name in every scope, so a program's name that is one (a result named
 * INT_MIN) broke the generated CUDA (codegen/cuda/names.ts). Every such macro the CUDA generator's sources print
 * must be reserved: written with the u_ prefix.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LANGUAGE_RESERVED, mangle } from '../../codegen/cuda/names.js';
import { ROOT } from './helpers.js';

/** Every file under `dir` (recursive). */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );

describe('macros of the standard headers', () => {
  it('are reserved, as the limits the generated code uses for its identities', () => {
    for (const n of ['INT_MIN', 'INT_MAX', 'LLONG_MIN', 'LLONG_MAX', 'FLT_MAX', 'DBL_MAX', 'SIZE_MAX'])
      expect(mangle(n), n).toBe(`u_${n}`);
    const used = new Set<string>();
    for (const dir of ['codegen/cuda', 'codegen/c', 'codegen/native'])
      for (const f of filesUnder(join(ROOT, dir)))
        for (const m of readFileSync(f, 'utf8').matchAll(/\b[A-Z][A-Z0-9]*_(?:MIN|MAX|EPSILON|BIT)\b/g)) used.add(m[0]);
    expect(used.size).toBeGreaterThan(0);
    expect([...used].filter((n) => !LANGUAGE_RESERVED.has(n))).toEqual([]);
  });
});
