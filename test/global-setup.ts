/**
 * The suite's compile caches (wasm kernels, native libraries: DYPE_CACHE_DIR)
 * go to a fresh folder removed at the end, not the user's ~/.cache/dype:
 * test files share it within one run (the same example's libraries are
 * built once), and a run never depends on what an earlier one left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'dype-test-cache-'));
  process.env.DYPE_CACHE_DIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
