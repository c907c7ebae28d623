/** Reading input files, with the error the readers report when that fails. */

import { existsSync, mkdirSync, readFileSync, statSync, type Stats } from 'node:fs';
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

/** What a special file is, for messages (a regular file or a directory is neither). */
export function specialKind(st: Stats): string {
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'a special file';
}

/**
 * The whole file as bytes; InputError DY3010 when it cannot be read. A device or a socket is refused before it is
 * read: /dev/zero would be read for ever, into all the memory there is. A named pipe is read (a shell's `<(...)`, a
 * piped /dev/stdin), as any reader of files would.
 */
export function readInputFile(path: string, what = 'the file'): Buffer {
  try {
    const st = statSync(path);
    if (!st.isFile() && !st.isDirectory() && !st.isFIFO())
      throw new InputError(
        'DY3010',
        path,
        undefined,
        `cannot read ${what}: it is ${specialKind(st)}, not a regular file`,
      );
    return readFileSync(path);
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError('DY3010', path, undefined, `cannot read ${what}: ${fsReason(err)}`);
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
