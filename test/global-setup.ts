/**
 * The suite's compile caches (wasm kernels, native libraries: DYPE_CACHE_DIR)
 * go to a fresh folder removed at the end, not the user's ~/.cache/dype:
 * test files share it within one run (the same example's libraries are
 * built once), and a run never depends on what an earlier one left.
 *
 * The emulated CUDA libraries (EMUFLAGS) and the HLS C-simulation programs
 * (CXXFLAGS) are compiled at -O1 unless the caller sets the flags: the
 * suite checks what the generated code computes, on small matrices, and
 * g++ -O1 takes about two thirds of -O2's time on these sources (measured
 * on gcn's HLS library: 8.5 s against 12.6 s of CPU). The products'
 * Makefiles keep -O2 for users.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'dype-test-cache-'));
  process.env.DYPE_CACHE_DIR = dir;
  process.env.EMUFLAGS ??= '-O1 -std=c++17';
  process.env.CXXFLAGS ??= '-O1 -std=c++17 -Wno-unknown-pragmas -Wno-unused-label';
  return () => rmSync(dir, { recursive: true, force: true });
}
