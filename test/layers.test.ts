/**
 * Layers depend one way: ir imports nothing of the project; frontend and
 * passes import ir (passes also the plain data modules of runtime); interp imports ir and runtime; runtime imports none of
 * the compiler. Checked on the import statements of every source file.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const allowed: Record<string, string[]> = {
  ir: ['ir'],
  frontend: ['frontend', 'ir'],
  passes: ['passes', 'ir', 'runtime'],
  interp: ['interp', 'ir', 'runtime'],
  runtime: ['runtime'],
  eval: ['eval', 'ir', 'passes', 'runtime', 'frontend', 'codegen'],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('layering', () => {
  for (const [layer, ok] of Object.entries(allowed)) {
    it(`${layer}/ imports only ${ok.join(', ')}`, () => {
      const bad: string[] = [];
      for (const file of sources(join(root, layer))) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"](\.[^'"]+)['"]/gm)) {
          const target = relative(root, join(file, '..', m[1]!)).split(/[\\/]/)[0]!;
          if (!ok.includes(target)) bad.push(`${relative(root, file)} -> ${m[1]}`);
        }
      }
      expect(bad).toEqual([]);
    });
  }
});
