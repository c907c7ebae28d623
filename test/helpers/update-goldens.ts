/**
 * `npm run test:update-goldens`: runs every test file that compares against
 * a golden (IR, loop IR, CUDA, HLS, the generated parameter table in
 * docs/COST-MODEL.md, and any later kind) with DYPE_UPDATE_GOLDENS=1, so
 * each rewrites its own goldens. The files are found by the flag itself,
 * so a new golden kind is covered as soon as its test reads the flag.
 * Run from dist/ after `tsc` (the npm script does both); review the diff.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const FLAG = /process\.env(?:\[['"]DYPE_UPDATE_GOLDENS['"]\]|\.DYPE_UPDATE_GOLDENS)/;

/** The repository root: the nearest folder above this file holding package.json and test/ (this file runs from test/ or dist/test/). */
export function repoRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let d = from; d !== dirname(d); d = dirname(d))
    if (existsSync(join(d, 'package.json')) && existsSync(join(d, 'test', 'layers.test.ts'))) return d;
  throw new Error(`update-goldens: no repository root above ${from}`);
}

/** Every test file under test/ that reads DYPE_UPDATE_GOLDENS, relative to the root, sorted. */
export function goldenTestFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.ts') ? [p] : [];
    });
  return walk(join(root, 'test'))
    .filter((f) => FLAG.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f))
    .sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = repoRoot();
  const files = goldenTestFiles(root);
  console.log(`updating the goldens of ${files.length} test files:\n  ${files.join('\n  ')}`);
  const r = spawnSync('npx', ['vitest', 'run', ...files], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, DYPE_UPDATE_GOLDENS: '1' },
  });
  process.exit(r.status ?? 1);
}
