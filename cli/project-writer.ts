/**
 * Writing a generated project: every file is first written into a staging
 * folder inside the output directory, then moved into place; if anything
 * fails the staging folder is removed and no generated file is left behind.
 * Folders the project needs are created (one level at a time: Node's
 * recursive mkdir never returns under /proc); folders that existed are kept,
 * and the output directory, when this call created it, is removed again on
 * failure.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { InputError } from '../runtime/errors.js';
import { fsReason, makeDirs } from '../runtime/io/files.js';
import { checkOutputDir } from './output-path.js';

/** Refuses paths that would leave the project folder. */
function safeRelative(p: string): string {
  const n = normalize(p);
  if (
    n.startsWith('..') ||
    n.startsWith(sep) ||
    /^[A-Za-z]:/.test(n) ||
    n.split(sep).includes('..') ||
    n === '.' ||
    n === ''
  )
    throw new Error(`generated file path '${p}' is not inside the project`);
  return n;
}

export function writeProject(outDir: string, files: ReadonlyMap<string, string | Uint8Array>): void {
  checkOutputDir(outDir);
  let created: string | undefined;
  try {
    created = makeDirs(outDir);
  } catch (e) {
    throw new InputError('DY3017', `-o ${outDir}`, undefined, `cannot create the output directory: ${fsReason(e)}`);
  }
  const stage = join(outDir, `.dype-staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  const rel = [...files.keys()].map(safeRelative);
  try {
    let i = 0;
    for (const data of files.values()) {
      const p = join(stage, rel[i++]!);
      makeDirs(dirname(p));
      writeFileSync(p, data);
    }
    i = 0;
    for (const r of rel) {
      const dest = join(outDir, r);
      makeDirs(dirname(dest));
      renameSync(join(stage, rel[i++]!), dest);
    }
  } catch (e) {
    rmSync(stage, { recursive: true, force: true });
    // A directory this call created holds nothing else: remove it too, so a failure leaves nothing behind.
    if (created !== undefined) rmSync(created, { recursive: true, force: true });
    throw new InputError('DY3017', `-o ${outDir}`, undefined, `cannot write the project: ${fsReason(e)}`);
  }
  rmSync(stage, { recursive: true, force: true });
}
