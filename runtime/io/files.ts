/** Reading input files, with the error the readers report when that fails. */

import { readFileSync } from 'node:fs';
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
