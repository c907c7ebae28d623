/**
 * Where the evaluation finds the repository's files (examples, its own
 * programs, system presets, the shared matrices) whether it runs from the
 * TypeScript sources (eval/) or from the build (dist/eval/).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The repository root: the first ancestor holding both examples/ and systems/. */
export function repoRoot(): string {
  for (const r of [join(here, '..'), join(here, '..', '..')])
    if (existsSync(join(r, 'examples')) && existsSync(join(r, 'systems'))) return r;
  throw new Error(`dype eval: cannot find the repository root (examples/ and systems/) above ${here}`);
}

/** The real matrices beside the checkout (../shared/data/matrices), or DYPE_MATRICES. */
export function matricesDir(): string {
  return process.env['DYPE_MATRICES'] ?? join(repoRoot(), '..', 'shared', 'data', 'matrices');
}
