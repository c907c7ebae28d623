/** Reading input files, with the error the readers report when that fails. */

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../errors.js';

/** A short, plain reason for a failed file-system call. */
export function fsReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a component of the path is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return e instanceof Error ? e.message : String(err);
  }
}

/** The whole file as bytes; InputError DY3010 when it cannot be read. */
export function readInputFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new InputError('DY3010', path, undefined, `cannot read the file: ${fsReason(err)}`);
  }
}

/**
 * `mkdir -p` one level at a time from the nearest existing ancestor. Node's
 * own `mkdirSync(p, { recursive: true })` never returns under /proc (mkdir
 * there fails with ENOENT although the parent exists, and it retries the
 * parent forever); this fails with that error instead. Returns the first
 * directory it created (undefined when `dir` existed), like Node's.
 */
export function makeDirs(dir: string): string | undefined {
  const missing: string[] = [];
  let d = resolve(dir);
  while (!existsSync(d)) {
    missing.push(d);
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  missing.reverse();
  for (const m of missing) mkdirSync(m);
  return missing[0];
}
