/**
 * Writing a generated project: every file is first written into a staging
 * folder inside the output directory, then moved into place; if anything
 * fails the staging folder is removed and no generated file is left behind.
 * Folders the project needs are created; folders that existed are kept.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { fsReason } from '../runtime/io/files.js';
import { CliError } from './errors.js';

/** Refuses paths that would leave the project folder. */
function safeRelative(p: string): string {
  const n = normalize(p);
  if (n.startsWith('..') || n.startsWith(sep) || /^[A-Za-z]:/.test(n) || n.split(sep).includes('..') || n === '.' || n === '')
    throw new Error(`generated file path '${p}' is not inside the project`);
  return n;
}

export function writeProject(outDir: string, files: ReadonlyMap<string, string | Uint8Array>): void {
  try {
    mkdirSync(outDir, { recursive: true });
  } catch (e) {
    throw new CliError(`${outDir}: cannot create the output directory: ${fsReason(e)}`);
  }
  if (!statSync(outDir).isDirectory()) throw new CliError(`${outDir}: not a directory`);
  const stage = join(outDir, `.dype-staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  const rel = [...files.keys()].map(safeRelative);
  const madeDirs: string[] = [];
  try {
    let i = 0;
    for (const data of files.values()) {
      const p = join(stage, rel[i++]!);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, data);
    }
    i = 0;
    for (const r of rel) {
      const dest = join(outDir, r);
      const d = dirname(dest);
      const made = mkdirSync(d, { recursive: true });
      if (made !== undefined) madeDirs.push(made);
      renameSync(join(stage, rel[i++]!), dest);
    }
  } catch (e) {
    rmSync(stage, { recursive: true, force: true });
    throw new CliError(`${outDir}: cannot write the project: ${fsReason(e)}`);
  }
  rmSync(stage, { recursive: true, force: true });
}
